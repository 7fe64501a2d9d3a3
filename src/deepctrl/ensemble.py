"""Many copies of one module trained as ONE model with a leading seed dimension.

The weights of S copies live in one flat buffer, each parameter a view of shape
(S, *shape); gradients land in a second flat buffer, so an optimizer step is a handful of
operations on two tensors whatever the number of layers. The forward runs the lowered
batched function of :mod:`deepctrl.lowering` when the architecture allows it, else
``vmap(functional_call)``. Every copy keeps its own weights and optimizer state, so seed s
trained in a group computes what it computes alone. Copies that stop early are dropped.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap
from torch.optim.adam import adam

from deepctrl.lowering import TWIN, lower, twin_pairs
from deepctrl.model import DeepCTRL


class Stack:
    """S copies of ``models[0]``'s architecture with the weights of each of ``models``."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        if not models:
            raise ValueError("Stack needs at least one model")
        self.template = copy.deepcopy(models[0]).to("meta")
        self.takes_alpha = isinstance(models[0], DeepCTRL)
        self.lowered = lower(models[0])
        params, buffers = stack_module_state(list(models))
        self.twins = twin_pairs(models[0]) if self.lowered is not None else []
        partner = dict(self.twins)
        twinned = set(partner.values())
        order = []
        for name in params:
            if name not in twinned:
                order += [name, partner[name]] if name in partner else [name]
        params = {k: params[k] for k in order}
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
        self.params: dict[str, Tensor] = {}
        offsets, offset = {}, 0
        for name, shape in self.shapes.items():
            offsets[name] = offset
            self.params[name] = self._view(offset, (size, *shape))
            offset += size * math.prod(shape)
        self.views = dict(self.params)
        for rule_name, _ in self.twins:
            shape = (2 * size, *self.shapes[rule_name])
            self.views[TWIN + rule_name.removeprefix("rule_encoder.")] = self._view(
                offsets[rule_name], shape)

    def _view(self, offset: int, shape: tuple[int, ...]) -> Tensor:
        """A leaf view of the weights at ``offset`` whose gradient is a view of flat_grad."""
        n = math.prod(shape)
        view = self.flat.detach()[offset:offset + n].view(shape).requires_grad_(True)
        view.grad = self.flat_grad[offset:offset + n].view(shape)
        return view

    def select(self, flat: Tensor, index: Tensor) -> Tensor:
        """Rows ``index`` of every parameter block of a flat buffer with this layout."""
        out, offset = [], 0
        for shape in self.shapes.values():
            n = self.size * math.prod(shape)
            out.append(flat[offset:offset + n].view(self.size, -1)[index].reshape(-1))
            offset += n
        return torch.cat(out)

    def _call(self, params: dict[str, Tensor], buffers: dict[str, Tensor], x: Tensor,
              alpha: Tensor) -> Tensor:
        args = (x, alpha) if self.takes_alpha else (x,)
        return functional_call(self.template, (params, buffers), args)

    def forward(self, x: Tensor, alpha: Tensor) -> Tensor:
        """x: (S, batch, ...), alpha: (S,) -> (S, batch, ...).

        Architectures that :func:`deepctrl.lowering.lower` knows run as batched matrix
        products; others go through vmap. One seed takes the same path as a group, so that
        it computes bit for bit what it computes in a group.
        """
        if self.lowered is not None:
            return self.lowered(self.views, x, alpha)
        return vmap(self._call, randomness="different")(self.params, self.buffers, x, alpha)

    __call__ = forward

    def zero_grad(self) -> None:
        self.flat_grad.zero_()

    def keep(self, mask: Tensor, others: Sequence[Tensor] = ()) -> list[Tensor]:
        """Keep the copies where ``mask`` is True; ``others`` (flat buffers with the same
        layout, e.g. optimizer moments) are sliced alike and returned."""
        index = mask.nonzero().flatten()
        sliced = [self.select(t, index) for t in others]
        self.buffers = {k: v[index].clone() for k, v in self.buffers.items()}
        self._build(self.select(self.flat.detach(), index), len(index))
        return sliced

    def state_of(self, i: int) -> dict[str, Tensor]:
        """The state dict of copy ``i``."""
        out = {k: v[i].detach().clone() for k, v in self.params.items()}
        out.update({k: v[i].clone() for k, v in self.buffers.items()})
        return out


class FlatAdam:
    """Adam (``torch.optim.adam.adam``, the fused kernel where available) on a
    :class:`Stack`'s flat buffers: one step is one kernel over every weight of every seed.

    Adam is elementwise, so each seed's update is the one it gets when trained alone.
    """

    def __init__(self, stack: Stack, lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        self.stack, self.lr, self.betas, self.eps = stack, lr, betas, eps
        self.exp_avg = torch.zeros_like(stack.flat_grad)
        self.exp_avg_sq = torch.zeros_like(stack.flat_grad)
        self.steps = torch.zeros((), dtype=torch.float32, device=stack.flat.device)
        self.fused: bool | None = True

    @torch.no_grad()
    def step(self) -> None:
        args = ([self.stack.flat.detach()], [self.stack.flat_grad], [self.exp_avg],
                [self.exp_avg_sq], [], [self.steps])
        kwargs = dict(amsgrad=False, beta1=self.betas[0], beta2=self.betas[1], lr=self.lr,
                      weight_decay=0.0, eps=self.eps, maximize=False)
        if self.fused:
            try:
                adam(*args, fused=True, **kwargs)
                return
            except RuntimeError:
                self.fused = False  # no fused kernel for this device or dtype
        adam(*args, foreach=True, **kwargs)

    def keep(self, mask: Tensor) -> None:
        """Drop the seeds outside ``mask`` from the stack and from the moments."""
        self.exp_avg, self.exp_avg_sq = self.stack.keep(mask, [self.exp_avg, self.exp_avg_sq])
