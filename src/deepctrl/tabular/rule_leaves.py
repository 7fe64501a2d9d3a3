"""The single rules (leaves) of an estimator's ``rules`` and their weights, and the
expression rule as the networks train on it."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from deepctrl.core.rules import AllOf, Context, Penalty, Rule


def leaves_and_weights(rules: Any) -> tuple[list[Rule], list[float]]:
    """The single rules of an estimator's ``rules`` (a rule, a list, or None) with weights."""
    if rules is None:
        return [], []
    items = [rules] if isinstance(rules, Rule) else rules
    if not isinstance(items, list | tuple):
        raise ValueError(f"rules must be a rule or a list of rules, got {type(rules).__name__}")
    leaves: list[Rule] = []
    weights: list[float] = []
    for item in items:
        if not isinstance(item, Rule):
            raise ValueError(f"rules must be deepctrl rules, got {type(item).__name__}")
        leaves += item.leaves()
        weights += item.weights if isinstance(item, AllOf) else [1.0]
    return leaves, weights


def relative_weights(weights: list[float]) -> list[float]:
    """Rule weights divided by the largest: only their ratios count, so one factor on
    every weight, or a single rule's weight, trains the same model to the last bit (rho
    would absorb the factor, but not the optimizer's rounding). All zeros stay as given,
    for `AllOf` to refuse.

    >>> relative_weights([2.0, 4.0]), relative_weights([0.5])
    ([0.5, 1.0], [1.0])
    """
    top = max(weights, default=0.0)
    return [w / top for w in weights] if top > 0 else weights


class ExpressionPenalty(Penalty):
    """An expression rule on the encoded table: a row with a missing value in a column the
    expression reads (its indicator input set) is not judged, since the expression would
    see the value filled in, not the row's own."""

    def __init__(self, fn: Any, tau: float, strict: bool, missing_inputs: list[int]) -> None:
        super().__init__(fn, tau=tau, strict=strict)
        self.missing_inputs = list(missing_inputs)
        """The indicator inputs of the columns the expression reads."""

    def judged(self, ctx: Context) -> Tensor:
        judged = super().judged(ctx)
        if not self.missing_inputs or not isinstance(ctx.x, Tensor):
            return judged
        return judged & ~(ctx.x[:, self.missing_inputs] > 0.5).any(dim=1)
