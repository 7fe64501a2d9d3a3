"""Many copies of one module trained as ONE model with a leading seed dimension.

Parameters of S copies are stacked (``torch.func.stack_module_state``) and the forward is
``vmap(functional_call)``; every copy keeps its own weights and optimizer state, so seed s
trained in a group computes what it computes alone. Copies that stop early are dropped.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from deepctrl.model import DeepCTRL


class Stack:
    """S copies of ``models[0]``'s architecture with the weights of each of ``models``."""

    def __init__(self, models: Sequence[nn.Module]) -> None:
        if not models:
            raise ValueError("Stack needs at least one model")
        self.template = copy.deepcopy(models[0]).to("meta")
        self.takes_alpha = isinstance(models[0], DeepCTRL)
        params, buffers = stack_module_state(list(models))
        self.params = {k: v.detach().clone().requires_grad_(True) for k, v in params.items()}
        self.buffers = {k: v.detach().clone() for k, v in buffers.items()}

    @property
    def size(self) -> int:
        return next(iter(self.params.values())).shape[0]

    def _call(self, params: dict[str, Tensor], buffers: dict[str, Tensor], x: Tensor,
              alpha: Tensor) -> Tensor:
        args = (x, alpha) if self.takes_alpha else (x,)
        return functional_call(self.template, (params, buffers), args)

    def forward(self, x: Tensor, alpha: Tensor) -> Tensor:
        """x: (S, batch, ...), alpha: (S,) -> (S, batch, ...).

        One seed goes through vmap too, so that it computes bit for bit what it computes
        in a group (a plain call would use other matrix kernels and round differently).
        """
        return vmap(self._call, randomness="different")(self.params, self.buffers, x, alpha)

    __call__ = forward

    def parameters(self) -> list[Tensor]:
        return list(self.params.values())

    def keep(self, mask: Tensor) -> dict[Tensor, Tensor]:
        """Keep the copies where ``mask`` is True; returns old->new parameter mapping."""
        mapping = {}
        for k, v in self.params.items():
            new = v.detach()[mask].clone().requires_grad_(True)
            mapping[v] = new
            self.params[k] = new
        self.buffers = {k: v[mask].clone() for k, v in self.buffers.items()}
        return mapping

    def state_of(self, i: int) -> dict[str, Tensor]:
        """The state dict of copy ``i``."""
        out = {k: v[i].detach().clone() for k, v in self.params.items()}
        out.update({k: v[i].clone() for k, v in self.buffers.items()})
        return out


def keep_optimizer_state(opt: torch.optim.Optimizer, mapping: dict[Tensor, Tensor],
                         mask: Tensor) -> torch.optim.Optimizer:
    """A new optimizer of the same kind over the kept copies, its state sliced alike."""
    new_params = [mapping[p] for g in opt.param_groups for p in g["params"]]
    defaults = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    new = type(opt)(new_params, **defaults)
    for old, fresh in mapping.items():
        state = opt.state.get(old)
        if not state:
            continue
        new.state[fresh] = {
            k: (v[mask].clone() if isinstance(v, Tensor) and v.dim() > 0 else v)
            for k, v in state.items()
        }
    return new
