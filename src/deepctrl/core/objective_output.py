"""`ObjectiveOutput`: what an [Objective][deepctrl.core.objective.Objective] returns for one
batch, the loss to call `backward()` on and its parts."""

from __future__ import annotations

import math
from dataclasses import dataclass

from torch import Tensor

from deepctrl.core.method_terms import Terms


@dataclass(frozen=True)
class ObjectiveOutput:
    """One batch's loss and its parts.

    Attributes:
        loss: The scalar to call `backward()` on.
        task: The batch's mean task loss (with weights sum(w l) / batch size), detached
            for logging (`terms` keeps it in the graph).
        rule: The batch's mean rule loss, likewise; NaN when it is not computed (no rule,
            or a method that does not use one, such as TaskOnly), as the verification
            ratio is then.
        alpha: The rule strength used.
        y_hat: The outputs on x.
        satisfied: Per sample, whether the rule held (None without a rule).
        judged: Per sample, whether the rule can judge it (None without a rule).
        terms: What the method's hooks take (in the graph).
    """

    loss: Tensor
    task: Tensor
    rule: Tensor
    alpha: float
    y_hat: Tensor
    satisfied: Tensor | None
    judged: Tensor | None
    terms: Terms

    @property
    def verification_ratio(self) -> float:
        """The fraction of judged samples of this batch on which the rule held (NaN without a
        rule or without a judged sample)."""
        if self.satisfied is None or self.judged is None or not bool(self.judged.any()):
            return math.nan
        return float(self.satisfied[self.judged].float().mean())

    def __repr__(self) -> str:
        """The losses and alpha as numbers, the tensors of rows as their dtype and shape."""
        terms = ", ".join(f"{k}={_shown(v)}" for k, v in self.terms._asdict().items())
        return (
            f"ObjectiveOutput(loss={_shown(self.loss)}, task={_shown(self.task)}, "
            f"rule={_shown(self.rule)}, alpha={self.alpha:.6g}, y_hat={_shown(self.y_hat)}, "
            f"satisfied={_shown(self.satisfied)}, judged={_shown(self.judged)}, "
            f"terms=Terms({terms}))"
        )


def _shown(value: Tensor | None) -> str:
    """A scalar tensor as its number, any other as its dtype and shape.

    >>> import torch
    >>> _shown(torch.tensor(0.25)), _shown(torch.zeros(64, 1)), _shown(None)
    ('0.25', '<float32 (64, 1)>', 'None')
    """
    if value is None:
        return "None"
    if value.dim() == 0:
        return f"{value.item():.6g}"
    return f"<{str(value.dtype).removeprefix('torch.')} {tuple(value.shape)}>"
