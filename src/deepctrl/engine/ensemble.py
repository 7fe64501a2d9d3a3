"""Many copies of one module trained as ONE model with a leading seed dimension.

The weights of S copies live in one flat buffer, each parameter a view of shape
(S, *shape); gradients land in a second flat buffer, so an optimizer step is a handful of
operations on two tensors whatever the number of layers. Every copy keeps its own weights
and optimizer state. Copies that stop early are dropped. Parameters frozen in the model
given (``requires_grad=False``) keep their values through every step.

The forward takes one of three paths, chosen on the first call:

* ``"lowered"``: MLP-made models (:mod:`deepctrl.engine.lowering`) run every layer as ONE batched
  matrix product for all seeds. A seed computes what it computes alone to float rounding:
  a stack of one seed and a stack of several may round their products differently (stacks
  of two and three seeds agree bit for bit).
* ``"vmap"``: other models go through ``torch.func.vmap(functional_call)`` (convolutions,
  attention, BatchNorm, Embedding, ...). Batched kernels may round differently from a
  single model's, so a seed agrees with its solo run to float rounding.
* ``"loop"``: one seed (a plain forward, faster than vmap for one), models that vmap cannot
  run (recurrent layers have no batching rule) and models with dropout run seed after seed;
  each seed draws its dropout masks from its own generator, so a seed of a dropout model
  computes bit for bit what it computes alone.
"""

from __future__ import annotations

import contextlib
import copy
import math
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap
from torch.optim.adam import adam

from deepctrl.core.calls import accepts_alpha, has_randomness, in_mode, one_tensor, unwrap
from deepctrl.core.inputs import Inputs, apply, batch_len, seed_of
from deepctrl.core.log import info
from deepctrl.core.seeding import derive_seed
from deepctrl.engine.lowering import TWIN, ExactSums, lower, twin_pairs
from deepctrl.engine.torch_private import HAS_FUSED_ADAM, fused_adam_


class Stack:
    """S copies of ``models[0]``'s architecture with the weights of each of ``models``."""

    def __init__(
        self,
        models: Sequence[nn.Module],
        seeds: Sequence[int] | None = None,
        exact: ExactSums | None = None,
    ) -> None:
        if not models:
            raise ValueError("Stack needs at least one model")
        self.template = copy.deepcopy(models[0]).to("meta")
        self.takes_alpha = accepts_alpha(models[0])
        self.lowered = lower(models[0], exact=exact)
        self.exact = exact is not None
        self.random = has_randomness(models[0])
        self.path: str | None = None
        device = next(models[0].parameters()).device
        self.rng = [
            torch.Generator(device).manual_seed(derive_seed(s, "forward")).get_state()
            for s in (seeds if seeds is not None else range(len(models)))
        ]
        params, buffers = stack_module_state(list(models))
        self.twins = twin_pairs(models[0]) if self.lowered is not None else []
        partner = dict(self.twins)
        twinned = set(partner.values())
        order = []
        for name in params:
            if name not in twinned:
                order += [name, partner[name]] if name in partner else [name]
        params = {k: params[k] for k in order}
        self.frozen = [k for k, p in models[0].named_parameters() if not p.requires_grad]
        self.shapes = {k: tuple(v.shape[1:]) for k, v in params.items()}
        self.buffers = {k: v.detach().clone() for k, v in buffers.items()}
        self._build(torch.cat([v.detach().reshape(-1) for v in params.values()]), len(models))

    def _build(self, flat: Tensor, size: int) -> None:
        """Point the parameter views and their gradients into ``flat`` (layout: by name,
        each twin pair adjacent).

        ``flat`` is the leaf the optimizer updates; the views, leaves of the forward graph,
        share its storage, and their gradients share the storage of ``flat.grad``.
        """
        self.size = size
        self.flat = flat.requires_grad_(True)
        self.flat_grad = torch.zeros_like(flat)
        self.flat.grad = self.flat_grad
        grads = self.carve(self.flat_grad, size)
        self.views = {}
        for name, view in self.carve(self.flat.detach(), size).items():
            view.requires_grad_(True)
            view.grad = grads[name]
            self.views[name] = view
        self.params = {k: v for k, v in self.views.items() if not k.startswith(TWIN)}
        self.held: Tensor | None = None  # the frozen weights' places in `flat`, if any
        self.held_values: Tensor | None = None
        if self.frozen:
            held = torch.zeros_like(flat, dtype=torch.bool)
            for name, view in self.carve(held, size).items():
                if name in self.frozen:
                    view.fill_(True)
            self.held = held.nonzero().flatten()
            self.held_values = flat.detach()[self.held].clone()

    def restore_frozen(self) -> None:
        """Put the frozen parameters (``requires_grad=False`` in the model given) back to
        their values after an optimizer step, which updates the flat buffer whole."""
        if self.held is not None and self.held_values is not None:
            self.flat.detach().index_copy_(0, self.held, self.held_values)

    def carve(self, flat: Tensor, size: int) -> dict[str, Tensor]:
        """Views of ``flat`` (the weights of ``size`` seeds in this stack's layout): every
        parameter (size, *shape) and every twin pair ``"twin.<name>"`` (2 size, *shape)."""
        views: dict[str, Tensor] = {}
        offsets, offset = {}, 0
        for name, shape in self.shapes.items():
            n = size * math.prod(shape)
            offsets[name] = offset
            views[name] = flat[offset : offset + n].view(size, *shape)
            offset += n
        for rule_name, _ in self.twins:
            shape = self.shapes[rule_name]
            n = 2 * size * math.prod(shape)
            views[TWIN + rule_name.removeprefix("rule_encoder.")] = flat[
                offsets[rule_name] : offsets[rule_name] + n
            ].view(2 * size, *shape)
        return views

    def select(self, flat: Tensor, index: Tensor) -> Tensor:
        """Rows ``index`` of every parameter block of a flat buffer with this layout."""
        out, offset = [], 0
        for shape in self.shapes.values():
            n = self.size * math.prod(shape)
            out.append(flat[offset : offset + n].view(self.size, -1)[index].reshape(-1))
            offset += n
        return torch.cat(out)

    def _call(
        self, params: dict[str, Tensor], buffers: dict[str, Tensor], x: Inputs, alpha: Tensor
    ) -> Tensor:
        kwargs = {"alpha": alpha} if self.takes_alpha else {}
        out = functional_call(self.template, (params, buffers), (x,), kwargs)
        return one_tensor(out, "training")

    def forward(self, x: Inputs, alpha: Tensor) -> Tensor:
        """x: (S, batch, ...) (a tensor or a dict of them), alpha: (S,) -> (S, batch, ...).

        The path is chosen on the first call (see the module's docstring).
        """
        if self.path is None:
            self.path = self._choose(x, alpha)
            if self.exact and self.path != "lowered":
                raise ValueError(
                    "exact_sums=True needs an MLP-made model (Linear layers and "
                    "activations, as dc.mlp builds) fed one (batch, features) tensor; this one "
                    f"runs on the {self.path} path"
                )
        if self.path == "lowered":
            return self.lowered(self.views, x, alpha)  # type: ignore[misc, arg-type]
        if self.path == "vmap":
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="There is a performance drop")
                return vmap(self._call, randomness="different")(self.params, self.buffers, x, alpha)
        return self._loop(x, alpha)

    __call__ = forward

    def _choose(self, x: Inputs, alpha: Tensor) -> str:
        if self.lowered is not None and isinstance(x, Tensor) and x.dim() == 3:
            return "lowered"  # rows of features; an MLP on (batch, time, features) is vmapped
        what = type(unwrap(self.template)).__name__
        if self.size == 1:
            return "loop"
        if self.random:
            if self.size > 1:
                info(
                    f"{what} has dropout: the {self.size} seeds run one after another, each "
                    "drawing its own masks as when trained alone"
                )
            return "loop"
        reason = self._vmap_failure(x, alpha)
        if reason is None:
            return "vmap"
        if self.size > 1:
            info(
                f"torch.func.vmap cannot run {what} ({reason}); the {self.size} seeds run "
                "one after another instead (same results, slower)"
            )
        return "loop"

    def _vmap_failure(self, x: Inputs, alpha: Tensor) -> str | None:
        """Why vmap cannot run a training step of this model (forward and backward, train
        mode, on a few rows and on copies of the weights and buffers), or None if it can."""
        params = {k: v.detach().clone().requires_grad_(True) for k, v in self.params.items()}
        buffers = {k: v.clone() for k, v in self.buffers.items()}
        few = apply(lambda t: t[:, : min(4, batch_len(x, 1))], x)
        try:
            with (
                in_mode(self.template, True),
                warnings.catch_warnings(),
                torch.random.fork_rng(devices=[]),
                torch.enable_grad(),
            ):
                warnings.simplefilter("ignore")
                out = vmap(self._call, randomness="different")(params, buffers, few, alpha)
                out.float().sum().backward()
        except Exception as exc:  # any failure (a missing batching rule most often)
            text = str(exc).strip().splitlines()[0].split(". ")[0] if str(exc).strip() else ""
            return text[:160] or type(exc).__name__
        return None

    def _loop(self, x: Inputs, alpha: Tensor) -> Tensor:
        """Seed after seed; with dropout in training, each from its own random stream."""
        outs = []
        own_rng = self.random and self.template.training
        with self._rng_of_seeds(own_rng) as rng:
            for i in range(self.size):
                params = {k: v[i] for k, v in self.params.items()}
                buffers = {k: v[i] for k, v in self.buffers.items()}
                if own_rng:
                    rng.set(self.rng[i])
                outs.append(self._call(params, buffers, seed_of(x, i), alpha[i]))
                if own_rng:
                    self.rng[i] = rng.get()
        return torch.stack(outs)

    @contextlib.contextmanager
    def _rng_of_seeds(self, needed: bool) -> Iterator[_GlobalRng]:
        """The global random state of the weights' device, restored afterwards."""
        device = self.flat.device
        if not needed:
            yield _GlobalRng(device)
            return
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            yield _GlobalRng(device)

    def zero_grad(self) -> None:
        self.flat_grad.zero_()

    def keep(self, mask: Tensor, others: Sequence[Tensor] = ()) -> list[Tensor]:
        """Keep the copies where ``mask`` is True; ``others`` (flat buffers with the same
        layout, e.g. optimizer moments) are sliced alike and returned."""
        index = mask.nonzero().flatten()
        sliced = [self.select(t, index) for t in others]
        self.rng = [self.rng[i] for i in index.tolist()]
        self.buffers = {k: v[index].clone() for k, v in self.buffers.items()}
        self._build(self.select(self.flat.detach(), index), len(index))
        return sliced

    def state_of(self, i: int) -> dict[str, Tensor]:
        """The state dict of copy ``i``."""
        out = {k: v[i].detach().clone() for k, v in self.params.items()}
        out.update({k: v[i].clone() for k, v in self.buffers.items()})
        return out


def load_copy(model: nn.Module, state: dict[str, Tensor]) -> None:
    """Copy ``state`` (a :meth:`Stack.state_of`) into ``model``.

    The state names each parameter and buffer once, by its first name, and holds the
    buffers a ``state_dict`` leaves out (``persistent=False``): a module shared by both
    encoders, or a fixed positional table, gets its trained values through every name,
    where ``model.load_state_dict`` would refuse the state.

    >>> lin = nn.Linear(2, 1)
    >>> twice = nn.ModuleDict({"a": lin, "b": lin})
    >>> load_copy(twice, {"a.weight": torch.ones(1, 2), "a.bias": torch.zeros(1)})
    >>> twice["b"].weight.tolist()
    [[1.0, 1.0]]
    """
    tensors = {**dict(model.named_parameters()), **dict(model.named_buffers())}
    if tensors.keys() != state.keys():
        differ = sorted(tensors.keys() ^ state.keys())
        raise RuntimeError(f"a trained copy's state does not fit its model: {differ}")
    with torch.no_grad():
        for name, value in state.items():
            tensors[name].copy_(value)


class _GlobalRng:
    """Get and set the global generator state of one device."""

    def __init__(self, device: torch.device) -> None:
        self.device = device

    def get(self) -> Tensor:
        if self.device.type == "cuda":
            return torch.cuda.get_rng_state(self.device)
        return torch.get_rng_state()

    def set(self, state: Tensor) -> None:
        if self.device.type == "cuda":
            torch.cuda.set_rng_state(state, self.device)
        else:
            torch.set_rng_state(state)


class FlatAdam:
    """Adam on a :class:`Stack`'s flat buffers: one step is one kernel over every weight of
    every seed (PyTorch's fused Adam kernel, called directly since the functional wrapper's
    Python costs more than the kernel on small networks; the foreach implementation where
    no fused kernel exists for the device or dtype).

    Adam is elementwise, so each seed's update is the one it gets when trained alone.
    """

    def __init__(
        self,
        stack: Stack,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
    ) -> None:
        self.stack = stack
        self.exp_avg = torch.zeros_like(stack.flat_grad)
        self.exp_avg_sq = torch.zeros_like(stack.flat_grad)
        self.steps = torch.zeros((), dtype=torch.float32, device=stack.flat.device)
        self.fused = HAS_FUSED_ADAM
        self.options: dict[str, Any] = dict(
            amsgrad=False,
            lr=lr,
            beta1=betas[0],
            beta2=betas[1],
            weight_decay=0.0,
            eps=eps,
            maximize=False,
        )
        self._parts: tuple[Tensor, list[str], list[list[Tensor]]] | None = None

    def set_lr(self, lr: float) -> None:
        """The learning rate of the following steps."""
        self.options["lr"] = float(lr)

    @property
    def lr(self) -> float:
        return float(self.options["lr"])

    def step(self) -> None:
        """Update every weight from ``stack.flat_grad`` (frozen ones stay as they are)."""
        self._update(
            [self.stack.flat.detach()], [self.stack.flat_grad], [self.exp_avg], [self.exp_avg_sq]
        )
        self.stack.restore_frozen()

    def step_views(self, names: list[str], grads: Sequence[Tensor]) -> None:
        """The same update with the gradients given per view (``names`` of ``stack.views``,
        together covering every weight once) instead of in ``flat_grad``."""
        weights, m, v = self._views(names)
        # the fused kernel walks every tensor's memory in order: the layouts must agree
        self._update(weights, [g.contiguous() for g in grads], m, v)
        self.stack.restore_frozen()

    def _views(self, names: list[str]) -> list[list[Tensor]]:
        """Views ``names`` of the weights and of both moments (cached until the stack changes)."""
        flat = self.stack.flat
        if self._parts is None or self._parts[0] is not flat or self._parts[1] != names:
            size = self.stack.size
            buffers = (flat.detach(), self.exp_avg, self.exp_avg_sq)
            carved = [self.stack.carve(b, size) for b in buffers]
            self._parts = (flat, names, [[c[k] for k in names] for c in carved])
        return self._parts[2]

    @torch.no_grad()
    def _update(
        self,
        weights: list[Tensor],
        grads: list[Tensor],
        exp_avg: list[Tensor],
        exp_avg_sq: list[Tensor],
    ) -> None:
        self.steps += 1
        if self.fused:
            if fused_adam_(weights, grads, exp_avg, exp_avg_sq, self.steps, **self.options):
                return
            self.fused = False  # no fused kernel for this device or dtype
        before = [self.steps - 1 for _ in weights]  # the functional Adam counts each one up
        adam(weights, grads, exp_avg, exp_avg_sq, [], before, foreach=True, **self.options)

    def keep(self, mask: Tensor) -> None:
        """Drop the seeds outside ``mask`` from the stack and from the moments."""
        self.exp_avg, self.exp_avg_sq = self.stack.keep(mask, [self.exp_avg, self.exp_avg_sq])
