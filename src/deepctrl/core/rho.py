"""DeepCTRL's rho measured: the ratio of the initial rule loss to the task loss per seed,
taken for 1 where it says nothing (a loss that is zero, a ratio that is not finite, or one
from the fresh network below `RHO_FLOOR`)."""

from __future__ import annotations

import warnings

import torch
from torch import Tensor

from deepctrl.core.method_terms import LossEstimate
from deepctrl.core.warn_site import outside_stacklevel

RHO_FLOOR = 1e-3
"""With rho="auto", a rho measured on the fresh network (a rule judged on the output alone)
below this is taken for 1: the network already (nearly) keeps the rule at its initial
weights, so the ratio says nothing of how the losses compare once the rule is broken, and at
alpha 0 the task would weigh almost nothing. A rho measured on the reference response is
kept however small (its size follows the target's units)."""


def safe_ratio(
    rule_loss: Tensor, task_loss: Tensor, last: Tensor | None = None, floor: float = 0.0
) -> Tensor:
    """L_rule / L_task per seed; 1.0 where either is zero or not finite, or the ratio is
    not finite or below `floor`, with a warning at the start, or when re-measuring (`last`:
    the seeds' rho so far) once a seed falls back (not again every epoch while it stays
    there).

    >>> safe_ratio(torch.tensor([2.0, 0.0]), torch.tensor([4.0, 1.0]), torch.tensor([3.0, 1.0]))
    tensor([0.5000, 1.0000], dtype=torch.float64)
    >>> safe_ratio(torch.tensor([2.0]), torch.tensor([float("inf")]), torch.tensor([1.0]))
    tensor([1.], dtype=torch.float64)
    """
    ratio = rule_loss.double() / task_loss.double()
    broken = ~(torch.isfinite(rule_loss) & torch.isfinite(task_loss))
    tiny = ~broken & torch.isfinite(ratio) & (rule_loss > 0) & (ratio < floor)
    bad = broken | ~torch.isfinite(ratio) | (rule_loss <= 0) | (task_loss <= 0) | tiny
    new = bad if last is None else bad & (last.to(bad.device) != 1.0)
    when, now = ("initial", "at the start") if last is None else ("re-measured", "now")
    if bool((new & broken).any()):
        warnings.warn(
            f"rho: the {when} rule or task loss is NaN or infinite for some seeds; using rho "
            "= 1.0 there: look for a loss that has no value on some rows (a log or square "
            "root of a negative number, a division by 0) or targets whose squares exceed "
            "float32's range (3.4e38)",
            RuntimeWarning,
            stacklevel=outside_stacklevel(),
        )
    if bool((new & ~broken).any()):
        what = (
            f"rule loss is under {floor:g} of the task loss (rho "
            f"{', '.join(f'{float(r):.2g}' for r in ratio[tiny])}) or a loss is zero"
            if bool(tiny.any())
            else "rule or task loss is zero"
        )
        warnings.warn(
            f"rho: the {when} {what} for some seeds; using rho = 1.0 "
            f"there (a rule that holds on every row {now}, or one that judges no row: a "
            "threshold that no perturbed value crosses, or a relative perturbation of a "
            "feature that is 0 everywhere). When "
            "the rule's loss is in other units than the task's, as a penalty in the target's "
            "units is, give rho yourself (deepctrl fit --rho): about the rule loss over the "
            "task loss once the rule is broken",
            RuntimeWarning,
            stacklevel=outside_stacklevel(),
        )
    return torch.where(bad, torch.ones_like(ratio), ratio)


def ratio_floor(auto: bool, rule: Tensor, task: Tensor, estimate: LossEstimate) -> float:
    """:data:`RHO_FLOOR` when `rule`, measured for ``rho="auto"``, came from the fresh
    network (a rule judged on the output alone); 0 otherwise. A rule loss measured on the
    reference response is in the target's units, so its ratio to an MSE task loss shrinks
    with the target's scale (about 0.04 / s_y) without saying anything of the network: a
    small one is kept. Measured again on the fresh network only when the ratio is small."""
    if not auto or not bool(((rule.double() / task.double()) < RHO_FLOOR).any()):
        return 0.0
    fresh, _ = estimate(False)
    return RHO_FLOOR if torch.equal(fresh, rule) else 0.0
