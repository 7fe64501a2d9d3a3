"""A fast forward for stacked copies of common architectures.

``vmap(functional_call)`` works for any module but pays a lot of Python per call. For the
architectures this library builds (``DeepCTRL`` made of ``Sequential``/``MLP`` parts with
``Linear`` (and :class:`~deepctrl.core.layers.OneHotLinear`), ``ReLU``, ``Sigmoid``,
``Tanh``, and :class:`deepctrl.core.model.Residual`),
``lower`` turns the module into a plain function on stacked parameters that runs every
layer as ONE batched matrix product (``baddbmm``) for all seeds (and a ``LogSoftmax`` or
``Softmax`` over the last axis, as a classifier's head, as one call). Anything else returns
None and the caller falls back to vmap. A subclass of those lowers as long as it computes what
its parent does: ``forward`` is the parent's (and a linear layer's weight and bias are its own
parameters, not parametrized); one that overrides ``forward`` does not. The merge is the
model's own :class:`~deepctrl.core.merges.Merge`, called on the rows of all seeds at once.

With ``exact=ExactSums(...)`` the weight and bias gradients of every linear layer are summed
over the rows in float64 (and, under data-parallel training, over the ranks) and rounded to
the weights' dtype once, and each row's own products (the layer's output and the gradient
passed to its input) are computed in float64 and rounded, so a batch's gradient does not
depend on how its rows are split (see :class:`ExactSums`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from deepctrl.core.layers import OneHotLinear, Residual, add_input, one_hot_codes, runs_as
from deepctrl.core.model import DeepCTRL

Params = dict[str, Tensor]
Lowered = Callable[[Params, Tensor, Tensor], Tensor]
"""f(stacked params, x (S, batch, features), alpha (S,)) -> (S, batch, out)."""

TWIN = "twin."
"""Prefix of the (2S, ...) views pairing a rule-encoder parameter with its data-encoder twin."""

_DEEPCTRL_METHODS = ("encode", "mix", "decide")
"""What a :class:`DeepCTRL`'s forward calls besides its parts: a subclass keeps them to lower."""

_ACTIVATIONS: dict[type[nn.Module], Callable[[Tensor], Tensor]] = {
    nn.ReLU: torch.relu,
    nn.Sigmoid: torch.sigmoid,
    nn.Tanh: torch.tanh,
    nn.Identity: lambda x: x,
}
_SOFTMAXES: dict[type[nn.Module], Callable[..., Tensor]] = {
    nn.LogSoftmax: torch.log_softmax,
    nn.Softmax: torch.softmax,
}


class ExactSums:
    """Gradient sums over rows (and ranks) in float64, rounded once.

    In float32 a sum over the rows of a batch rounds differently when the rows are split
    (over ranks) or blocked differently, and training magnifies that: where a gradient
    entry cancels to nearly zero (a rule's pair of forwards at an alpha near 1, say), the
    rounding residue is all there is, and Adam's first steps turn it into a step of about
    half the learning rate. Summed in float64, the residue is ~1e-16 of the terms instead of
    ~1e-7, and the rounded gradient is the same however the rows were split.

    ``reduce`` sums a float64 tensor over the ranks in place (None in a single process).
    Under data-parallel training the layers' float64 sums wait in ``pending`` until
    :meth:`finish` sums them over the ranks in one call and writes them, rounded, into
    their weights' gradients.
    """

    def __init__(self, reduce: Callable[[Tensor], None] | None = None) -> None:
        self.reduce = reduce
        self.pending: dict[int, tuple[Tensor, Tensor]] = {}

    def add(self, weight: Tensor, total: Tensor) -> None:
        """Hold ``total``, a float64 gradient of ``weight`` (a leaf), until :meth:`finish`."""
        held = self.pending.get(id(weight))
        self.pending[id(weight)] = (weight, total if held is None else held[1] + total)

    def finish(self) -> None:
        """Sum the held gradients over the ranks and write them into the weights' ``grad``."""
        if not self.pending:
            return
        held = list(self.pending.values())
        self.pending.clear()
        flat = torch.cat([total.reshape(-1) for _, total in held])
        if self.reduce is not None:
            self.reduce(flat)
        for (weight, _), part in zip(held, flat.split([t.numel() for _, t in held]), strict=True):
            assert weight.grad is not None  # the stack's views point into its flat gradient
            weight.grad.copy_(part.view(weight.shape))


class _ExactLinear(torch.autograd.Function):
    """Batched ``x @ w^T + b`` computed in float64 and rounded, whose weight and bias
    gradients are float64 sums."""

    @staticmethod
    def forward(x: Tensor, w: Tensor, b: Tensor | None, sums: ExactSums) -> Tensor:
        # float64 products rounded once: a row's output does not depend on how many rows
        # share its batch (float32 BLAS kernels can block a 3-to-5 product differently for
        # 40 and for 64 rows and round its last bit differently)
        x64, w64 = x.double(), w.double().transpose(1, 2)
        out = torch.bmm(x64, w64) if b is None else torch.baddbmm(b.double().unsqueeze(1), x64, w64)
        return out.to(x.dtype)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Tensor) -> None:
        x, w, b, sums = inputs
        ctx.save_for_backward(x, w)
        ctx.sums, ctx.has_bias = sums, b is not None
        if sums.reduce is not None:
            ctx.leaves = (w, b)

    @staticmethod
    def backward(ctx: Any, grad: Tensor) -> tuple[Tensor | None, ...]:
        x, w = ctx.saved_tensors
        g64 = grad.double()
        grad_x = torch.bmm(g64, w.double()).to(grad.dtype) if ctx.needs_input_grad[0] else None
        grad_w = torch.bmm(g64.transpose(1, 2), x.double())
        grad_b = g64.sum(1) if ctx.has_bias else None
        if ctx.sums.reduce is not None:  # summed over the ranks later, in one call
            ctx.sums.add(ctx.leaves[0], grad_w)
            if grad_b is not None:
                ctx.sums.add(ctx.leaves[1], grad_b)
            return grad_x, None, None, None
        return (grad_x, grad_w.to(w.dtype), None if grad_b is None else grad_b.to(w.dtype), None)


def _linear(prefix: str, bias: bool, exact: ExactSums | None) -> Lowered:
    w, b = f"{prefix}weight", f"{prefix}bias"
    if exact is not None:
        return lambda p, x, a: _ExactLinear.apply(x, p[w], p[b] if bias else None, exact)
    if bias:
        return lambda p, x, a: torch.baddbmm(p[b].unsqueeze(1), x, p[w].transpose(1, 2))
    return lambda p, x, a: torch.bmm(x, p[w].transpose(1, 2))


def _one_hot_linear(layer: OneHotLinear, prefix: str, exact: ExactSums | None) -> Lowered:
    """An :class:`~deepctrl.core.layers.OneHotLinear` on stacked weights: the columns
    outside the one-hot blocks as one batched product, each block as one lookup of a weight
    column per row and seed. With ``exact``, one dense product (the same function) whose
    gradient sums are float64."""
    bias = layer.bias is not None
    if exact is not None:
        return _linear(prefix, bias, exact)
    w_name, b_name, blocks, dense = (
        f"{prefix}weight",
        f"{prefix}bias",
        layer.blocks,
        layer.dense_columns,
    )

    def run(p: Params, x: Tensor, a: Tensor) -> Tensor:
        w = p[w_name]
        cols = dense.to(x.device)
        x_dense, w_dense = x[..., cols], w[..., cols].transpose(1, 2)
        if bias:
            out = torch.baddbmm(p[b_name].unsqueeze(1), x_dense, w_dense)
        else:
            out = torch.bmm(x_dense, w_dense)
        codes, values = one_hot_codes(x, blocks)
        seeds, n_in = w.shape[0], w.shape[2]
        per_seed = torch.arange(seeds, device=x.device).view(seeds, 1, 1) * n_in
        table = w.transpose(1, 2).reshape(seeds * n_in, -1)
        return out + (table[codes + per_seed] * values.unsqueeze(-1)).sum(-2)

    return run


def _chain(parts: list[Lowered]) -> Lowered:
    def run(p: Params, x: Tensor, a: Tensor) -> Tensor:
        for f in parts:
            x = f(p, x, a)
        return x

    return run


def _sequential(module: nn.Sequential, prefix: str, exact: ExactSums | None) -> Lowered | None:
    parts = [lower(child, f"{prefix}{name}.", exact) for name, child in module.named_children()]
    lowered = [f for f in parts if f is not None]
    return None if len(lowered) < len(parts) else _chain(lowered)


def twin_pairs(m: nn.Module) -> list[tuple[str, str]]:
    """(rule_encoder name, data_encoder name) of every parameter when a :class:`DeepCTRL`'s
    two encoders have the same architecture, so they can run as one batch of 2S copies.
    Encoders that look up one-hot blocks run apart: each reads the shared input, where twins
    would copy it, wide as it is, for the second half of the batch."""
    if not runs_as(m, DeepCTRL, *_DEEPCTRL_METHODS) or m.rule_encoder is None:
        return []
    if any(isinstance(layer, OneHotLinear) for layer in m.rule_encoder.modules()):
        return []
    rule, data = m.rule_encoder, m.data_encoder
    if lower(rule) is None or repr(rule) != repr(data):
        return []
    r, d = list(rule.named_parameters()), list(data.named_parameters())
    if [(n, p.shape) for n, p in r] != [(n, p.shape) for n, p in d]:
        return []
    return [(f"rule_encoder.{n}", f"data_encoder.{n}") for n, _ in r]


def _twin_encoders(m: DeepCTRL, exact: ExactSums | None) -> Lowered | None:
    """Both encoders at once on the (2S, ...) twin views: rule copies first, then data."""
    inner = lower(m.rule_encoder, TWIN, exact) if m.rule_encoder is not None else None
    if inner is None:
        return None

    def run(p: Params, h: Tensor, alpha: Tensor) -> Tensor:
        return inner(p, h.repeat(2, 1, 1), alpha)

    return run


def _deepctrl(m: DeepCTRL, prefix: str, exact: ExactSums | None) -> Lowered | None:
    parts = {
        name: lower(getattr(m, name), f"{prefix}{name}.", exact)
        if getattr(m, name) is not None
        else None
        for name in ("shared", "data_encoder", "rule_encoder", "decision")
    }
    shared, data, rule, decision = (
        parts[n] for n in ("shared", "data_encoder", "rule_encoder", "decision")
    )
    if data is None or decision is None:
        return None
    if m.rule_encoder is not None and rule is None:
        return None
    if m.shared is not None and shared is None:
        return None
    merge, residual = m.merge, m.residual
    twins = _twin_encoders(m, exact) if prefix == "" and twin_pairs(m) else None

    def encoders(p: Params, h: Tensor, alpha: Tensor) -> tuple[Tensor, Tensor]:
        if twins is None:
            assert rule is not None  # every merge with a rule encoder lowered it
            return rule(p, h, alpha), data(p, h, alpha)
        z = twins(p, h, alpha)
        return z[: h.shape[0]], z[h.shape[0] :]

    def run(p: Params, x: Tensor, alpha: Tensor) -> Tensor:
        h = shared(p, x, alpha) if shared is not None else x
        seeds, rows = h.shape[:2]
        a = alpha.to(h.dtype).repeat_interleave(rows).unsqueeze(-1)  # one per row, as eager
        if merge.uses_rule_encoder:
            z_r, z_d = encoders(p, h, alpha)
            z = merge.latent(z_r.flatten(0, 1), z_d.flatten(0, 1), a).unflatten(0, (seeds, rows))
        else:
            z = data(p, merge.encoder_input(h.flatten(0, 1), a).unflatten(0, (seeds, rows)), alpha)
        y = decision(p, z, alpha)
        return add_input(y, x) if residual else y

    return run


def _own_parameters(layer: nn.Linear) -> bool:
    """Whether the weight and bias the layer computes with are its own parameters (not
    parametrized, nor computed by a hook), which the stacked parameters hold by name."""
    own = dict(layer.named_parameters(recurse=False))
    return own.get("weight") is layer.weight and (
        layer.bias is None or own.get("bias") is layer.bias
    )


def lower(module: nn.Module, prefix: str = "", exact: ExactSums | None = None) -> Lowered | None:
    """A batched function equivalent to ``module`` on stacked parameters, or None; with
    ``exact``, gradient sums in float64 (:class:`ExactSums`).

    >>> class Named(nn.Linear): pass
    >>> class Doubled(nn.Linear):
    ...     def forward(self, x): return 2 * super().forward(x)
    >>> lower(Named(2, 2)) is None, lower(Doubled(2, 2)) is None
    (False, True)
    """
    if runs_as(module, OneHotLinear):
        return _one_hot_linear(module, prefix, exact) if _own_parameters(module) else None
    if runs_as(module, nn.Linear):
        return _linear(prefix, module.bias is not None, exact) if _own_parameters(module) else None
    act = next((f for kind, f in _ACTIVATIONS.items() if runs_as(module, kind)), None)
    if act is not None:
        return lambda p, x, a: act(x)
    softmax = next((g for kind, g in _SOFTMAXES.items() if runs_as(module, kind)), None)
    if softmax is not None:
        # over the last axis only, which stacking leaves last (a classifier's head)
        return (lambda p, x, a: softmax(x, dim=-1)) if getattr(module, "dim", None) == -1 else None
    if runs_as(module, nn.Sequential):
        return _sequential(module, prefix, exact)
    if runs_as(module, Residual):
        inner = lower(module.inner, f"{prefix}inner.", exact)
        return None if inner is None else (lambda p, x, a: add_input(inner(p, x, a), x))
    if runs_as(module, DeepCTRL, *_DEEPCTRL_METHODS):
        return _deepctrl(module, prefix, exact)
    return None
