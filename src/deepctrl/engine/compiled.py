"""The whole training step of an MLP-made model as one compiled graph
(``dc.fit(compile=True)``).

``torch.func.grad_and_value`` of the batch objective (the stacked forward, the rule, the task
loss and the method's linear combination of them, :class:`~deepctrl.core.method_terms.Coefficients`)
is traced by ``torch.compile`` into one graph with its backward. The graph returns one
gradient per parameter view and the flat Adam applies them in one fused call (under
data-parallel training they are copied into the flat gradient buffer and all-reduced first).
Only the coefficients (rho, alpha, multipliers) are computed eagerly, so methods keep their
state in plain tensors; methods that are not linear train eagerly.

Sizes: the seed and row axes of every input are marked symbolic, everything else (the
layer widths) stays static, so the last, shorter batch of an epoch and a stack that shrinks
as seeds stop early reuse the graph instead of recompiling (a stack or batch of exactly one is
specialised once more). Stopped seeds are sliced out rather than masked, so their work stops
with them. Batch inputs are copied out of the buffers they are slices of, since storage
offsets would otherwise be guarded; whenever the inputs have a signature (a stack of one, a
batch of one) no graph has seen yet, their sizes are marked symbolic and duck sizing is off,
so sizes that happen to be equal are not assumed equal for good.

Sample weights (``dc.fit(train=(X, y, w))``) enter as one more argument, the (S, rows)
weights of the batch's rows, or None without weights (dynamo guards on which it is).

Guards: the step function is made for one fit (its own code object) and closes over things
that stay fixed while it trains (the lowered model, the rule, the task loss, the stack's
layout), so only guards on its inputs (tensor dtypes, shapes and strides, the symbolic
sizes' ranges, the lists' and coefficients' structure) and on the global state (grad mode,
default device, ...) are checked at every step (where PyTorch can filter guards); guards on
the closures and module globals would cost 5 to 8 % of a one-seed epoch. A rule must
therefore not change its Python attributes during a compiled fit (no built-in rule does).
On a CPU the graph's host code is C++ (inductor's ``cpp_wrapper``): it allocates buffers and
calls kernels without Python.

The weights enter as one (S, weights per seed) view of the flat buffer and are cut into
parameter views inside the graph; the gradients are taken with respect to those views (each
twin pair of encoders as one (2S, ...) view), not the flat buffer, whose backward would be a
concatenation that the compiler fuses into its producers as slow scalar loops.

Compiled kernels fuse element-wise work and sum in other orders than the eager ones: results
agree with an eager run to float rounding, not bit for bit (1e-10 or closer after several
epochs in float64).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor
from torch.func import grad_and_value

from deepctrl.core.inputs import Inputs
from deepctrl.core.losses import compute_terms
from deepctrl.core.method_terms import Coefficients, Terms
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule, forward_all
from deepctrl.engine.ensemble import Stack
from deepctrl.engine.torch_private import (
    HAS_GUARD_FILTERS,
    distinct_sizes,
    foreach_copy_,
    mark_dynamic,
    with_fresh_code,
)

if TYPE_CHECKING:
    from torch._dynamo.types import GuardFilterEntry


class CompiledStep:
    """Per-view gradients of a batch's objective for every seed of ``stack``, from one
    compiled graph; ``stack.lowered`` must exist (an MLP-made model)."""

    def __init__(
        self,
        stack: Stack,
        rule: Rule | None,
        loss_fn: PerSample,
        need_violations: bool,
        exact: bool = False,
    ) -> None:
        if stack.lowered is None:
            raise ValueError("only MLP-made models (deepctrl.engine.lowering) can be compiled")
        self.stack = stack
        twinned = {name for pair in stack.twins for name in pair}
        self.names = [k for k in stack.views if k not in twinned]
        lowered, names = stack.lowered, self.names

        def objective(
            params: tuple[Tensor, ...],
            x: Inputs,
            y: Tensor,
            perturbed: list[Inputs | None],
            alpha: Tensor,
            coefs: Coefficients,
            n_global: Tensor,
            weight: Tensor | None,
        ) -> tuple[Tensor, tuple[Tensor, Terms]]:
            views = dict(zip(names, params, strict=True))
            y_hat, y_p = forward_all(
                lambda z: lowered(views, z, alpha),  # type: ignore[arg-type]
                x,
                perturbed if rule is not None else [],
                dim=1,
            )
            t, _ = compute_terms(
                rule,
                loss_fn,
                x,
                y,
                y_hat,
                perturbed,
                y_p,
                alpha,
                n_global,  # type: ignore[arg-type]
                need_violations,
                exact,
                weight,
            )
            per_seed = coefs.combine(t)
            return per_seed.sum(), (per_seed.detach(), t.detached())

        self.per_seed = sum(math.prod(shape) for shape in stack.shapes.values())

        def step(weights: Tensor, *args: Any) -> tuple[tuple[Tensor, ...], tuple[Tensor, Terms]]:
            views = stack.carve(weights.view(-1), weights.shape[0])
            params = tuple(views[k] for k in names)
            grads, (_, aux) = grad_and_value(objective, has_aux=True)(params, *args)
            return tuple(g.contiguous() for g in grads), aux

        with_fresh_code(step)  # the closures of every fit differ: one graph cache per fit
        # C++ host code: measured on CPUs only, so GPUs keep inductor's default
        options: dict[str, Any] = {"cpp_wrapper": stack.flat.device.type == "cpu"}
        if HAS_GUARD_FILTERS:
            options["guard_filter_fn"] = inputs_and_state_guards
        self.compiled = torch.compile(step, fullgraph=True, options=options)
        self.flat: Tensor | None = None
        self.weights = torch.empty(0)
        self.grads: list[Tensor] = []
        self.signatures: set[tuple[bool, bool]] = set()
        self.counts: dict[int, Tensor] = {}

    def _refresh(self) -> None:
        """The detached weights and the gradient views (again after the stack shrank)."""
        if self.flat is self.stack.flat:
            return
        self.flat = self.stack.flat
        self.weights = self.flat.detach().view(self.stack.size, self.per_seed)
        self.grads = [self.stack.views[k].grad for k in self.names]  # type: ignore[misc]

    def __call__(
        self,
        x: Inputs,
        y: Tensor,
        perturbed: Sequence[Inputs | None],
        alpha: Tensor,
        coefs: Coefficients,
        n_global: int,
        weight: Tensor | None = None,
    ) -> tuple[Tensor, Terms, list[Tensor]]:
        """Per-seed objective (S,), detached terms and the gradients of one batch (one per
        view ``names`` of the stack; :meth:`write_grads` puts them into ``flat_grad``).
        ``weight`` (S, rows): per-row weights of the losses, or None (one graph each)."""
        self._refresh()
        signature = (self.stack.size > 1, y.shape[1] > 1)
        new = signature not in self.signatures
        rows = [_own_storage(v, 2 if new else 0) for v in (x, y, list(perturbed))]
        w = _own_storage(weight, 2 if new else 0)
        per_seed = [_own_storage(v, 1 if new else 0) for v in (alpha, coefs)]
        n = self.counts.get(n_global)
        if n is None:
            n = self.counts[n_global] = torch.tensor(
                n_global, dtype=self.weights.dtype, device=self.weights.device
            )
        if new:
            _seeds_dynamic(self.weights)
        building = distinct_sizes() if new else contextlib.nullcontext()
        with building:
            grads, (loss, terms) = self.compiled(self.weights, *rows, *per_seed, n, w)
        self.signatures.add(signature)
        return loss, terms, list(grads)

    def write_grads(self, grads: list[Tensor]) -> None:
        """Copy per-view gradients into the stack's ``flat_grad``."""
        self._refresh()
        foreach_copy_(self.grads, grads)


def inputs_and_state_guards(entries: Sequence[GuardFilterEntry]) -> list[bool]:
    """Keep the guards on the compiled step's arguments and on the global state (their
    names are empty), drop those on its closures and on module globals."""
    return [e.name == "" or e.name.startswith(("args", "weights")) for e in entries]


def _seeds_dynamic(t: Tensor, dims: int = 1) -> Tensor:
    """Mark the first ``dims`` sizes of ``t`` (seeds, then rows) symbolic in the graph;
    a size of one stays static (the compiler specialises it anyway)."""
    for d in range(min(dims, t.dim())):
        if t.shape[d] > 1:
            mark_dynamic(t, d)
    return t


def _own_storage(value: Any, dims: int) -> Any:
    """Tensors (also in lists, dicts and coefficients) copied out of the larger buffers they
    are slices of, their first ``dims`` sizes marked symbolic: a compiled graph guards on
    storage offsets and static sizes and would recompile for every slice or shorter batch."""
    if isinstance(value, Tensor):
        return _seeds_dynamic(value.clone(memory_format=torch.contiguous_format), dims)
    if isinstance(value, Coefficients):
        return Coefficients(*(_own_storage(v, dims) for v in value))
    if isinstance(value, list):
        return [_own_storage(v, dims) for v in value]
    if isinstance(value, dict):
        return {k: _own_storage(v, dims) for k, v in value.items()}
    return value
