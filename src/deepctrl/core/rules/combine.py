"""Several rules at once."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import torch
from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.rules.base import Context, Rule, checked_rule

MAX_WEIGHT = 1e6
"""The largest weight of a member of AllOf: weights count relative to each other, and the
squared gradients of a far larger one overflow float32 in the optimizer."""


class AllOf(Rule):
    """All of `rules` at once: loss sum_i w_i loss_i, satisfied when every rule is.

    A sample counts for verification when at least one member rule can judge it.
    Nested `AllOf` are flattened.

    Args:
        rules: The member rules, at least one.
        weights: The weight of each rule's loss, >= 0; None weighs every rule 1.

    Raises:
        ValueError: When `rules` is not a list (or tuple) of rules or is empty, or `weights`
            is not a list with one weight >= 0 per rule, has none above 0, or one above
            `MAX_WEIGHT`.

    Examples:
        >>> from deepctrl.core.rules import Penalty
        >>> both = AllOf([Penalty(lambda x, y: y[:, 0]), Penalty(lambda x, y: -y[:, 0] - 1)])
        >>> len(both.leaves())
        2
    """

    def __init__(self, rules: Sequence[Rule], weights: Sequence[float] | None = None) -> None:
        if isinstance(rules, Rule) or not isinstance(rules, list | tuple):
            raise ValueError(
                f"AllOf takes a list of rules, got {type(rules).__name__}: AllOf([rule, ...])"
            )
        if weights is not None and not isinstance(weights, list | tuple | np.ndarray):
            raise ValueError(
                f"AllOf's weights must be a list, one per rule, got {type(weights).__name__}"
            )
        if not rules:
            raise ValueError("AllOf needs at least one rule")
        weights = (
            [1.0] * len(rules)
            if weights is None
            else [finite_real(w, "AllOf weight", nonneg=True) for w in weights]
        )
        if len(weights) != len(rules):
            raise ValueError(f"AllOf got {len(rules)} rules but {len(weights)} weights")
        self._leaves: list[Rule] = []
        self.weights: list[float] = []
        for rule, w in zip(rules, weights, strict=True):
            checked_rule(rule, "every member of AllOf")
            inner = rule.weights if isinstance(rule, AllOf) else [1.0]
            self._leaves += rule.leaves()
            self.weights += [w * v for v in inner]
        if not any(self.weights):
            raise ValueError("AllOf weights are all 0, so no rule would act; give one above 0")
        if max(self.weights) > MAX_WEIGHT:
            raise ValueError(
                f"AllOf weight {max(self.weights):g} (of a rule, nested weights multiplied) "
                f"is above {MAX_WEIGHT:g}: weights count relative to each other, and a huge "
                "one overflows the training loss"
            )

    @classmethod
    def as_stored(cls, rules: Sequence[Rule], weights: Sequence[float]) -> AllOf:
        """Single rules with the weights a model file stored, unchecked against the limits
        above (a file written before them still loads)."""
        out = cls(rules)
        out.weights = [float(w) for w in weights]
        return out

    def leaves(self) -> list[Rule]:
        return list(self._leaves)

    def leaf_weights(self) -> list[float]:
        return list(self.weights)

    def _parts(self, ctx: Context) -> tuple[Context, ...]:
        if len(ctx.parts) != len(self._leaves):
            raise ValueError(f"AllOf expected {len(self._leaves)} contexts, got {len(ctx.parts)}")
        return ctx.parts

    def loss(self, ctx: Context) -> Tensor:
        parts = self._parts(ctx)
        return cast(
            Tensor,
            sum(w * r.loss(c) for r, w, c in zip(self._leaves, self.weights, parts, strict=True)),
        )

    def satisfied(self, ctx: Context) -> Tensor:
        parts = self._parts(ctx)
        ok = [r.satisfied(c) | ~r.judged(c) for r, c in zip(self._leaves, parts, strict=True)]
        return torch.stack(ok).all(dim=0)

    def applicable(self, ctx: Context) -> Tensor:
        parts = self._parts(ctx)
        return torch.stack([r.applicable(c) for r, c in zip(self._leaves, parts, strict=True)]).any(
            dim=0
        )

    def judged(self, ctx: Context) -> Tensor:
        parts = self._parts(ctx)
        return torch.stack([r.judged(c) for r, c in zip(self._leaves, parts, strict=True)]).any(
            dim=0
        )

    def __repr__(self) -> str:
        return f"AllOf({self._leaves!r}, weights={self.weights!r})"

    def config(self) -> dict[str, Any]:
        return {
            "kind": "allof",
            "rules": [r.config() for r in self._leaves],
            "weights": self.weights,
        }
