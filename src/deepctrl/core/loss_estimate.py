"""The rule loss at alpha 1 and the task loss at alpha 0 of one model over a data set: the
[LossEstimate][deepctrl.core.method_terms.LossEstimate] from which an
[Objective][deepctrl.core.objective.Objective] measures rho, and the outputs of a
low-precision forward taken in float32 for the losses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from deepctrl.core.calls import eval_mode
from deepctrl.core.data import as_pair
from deepctrl.core.inputs import Inputs, apply, batch_len
from deepctrl.core.losses import block_sums, check_outputs
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule, perturb_all
from deepctrl.core.scale import at_least_float32, scales_of
from deepctrl.core.seeding import derive_seed
from deepctrl.core.sources import blocks, is_loader
from deepctrl.core.world import World

LOW_PRECISION = (torch.float16, torch.bfloat16)


def upcast(t: Tensor) -> Tensor:
    """Outputs of a low-precision (autocast) forward, in float32 for the losses."""
    return t.float() if t.dtype in LOW_PRECISION else t


def loss_estimate(
    model: nn.Module,
    forward: Callable[[Inputs, float], Tensor],
    rule: Rule | None,
    loss_fn: PerSample,
    task_loss: str | PerSample,
    seed: int,
    data: Any,
    block_rows: int,
    device: torch.device,
    dtype: torch.dtype,
) -> Callable[[bool], tuple[Tensor, Tensor]]:
    """`estimate(reference)`: (L_rule at alpha 1, L_task at alpha 0) over `data`, the outputs
    of `model` from `forward(x, alpha)`, the perturbations drawn from `seed`."""

    def one_seed(alpha: float) -> Callable[[Inputs], Tensor]:
        return lambda z: upcast(forward(apply(lambda t: t[0], z), alpha))[None]

    def estimate(reference: bool) -> tuple[Tensor, Tensor]:
        scales = (
            scales_of(
                data if is_loader(data) else as_pair(data, "data", device, dtype),
                block_rows,
                device,
                dtype,
            )
            if reference
            else None
        )
        gen = torch.Generator(device).manual_seed(derive_seed(seed, "eval"))
        sums = torch.zeros(3, dtype=torch.float64, device=device)
        with eval_mode(model), torch.no_grad():
            for x, y in blocks(data, block_rows, device, dtype, "data"):

                def checked(z: Inputs, y: Tensor | None = y) -> Tensor:
                    # outputs that do not fit the targets: one line, as in training,
                    # before any loss reads them (the task sum below runs first)
                    out = one_seed(0.0)(z)
                    if y is not None:
                        check_outputs(out[0], y, task_loss)
                    return out

                perturbed = perturb_all(rule, x, gen) if rule is not None else []
                xs, ys = apply(lambda t: t[None], x), y[None]  # type: ignore[index]
                ps = [None if p is None else apply(lambda t: t[None], p) for p in perturbed]
                what = "reference" if reference else "rule"
                sums[1] += block_sums(checked, None, loss_fn, xs, ys, [], "task")[0]
                sums[0] += block_sums(one_seed(1.0), rule, loss_fn, xs, ys, ps, what, scales)[0]
                sums[2] += batch_len(x)
        sums = World.current().all_reduce_sum(sums)
        kept = at_least_float32(dtype)
        return (sums[:1] / sums[2]).to(kept).cpu(), (sums[1:2] / sums[2]).to(kept).cpu()

    return estimate
