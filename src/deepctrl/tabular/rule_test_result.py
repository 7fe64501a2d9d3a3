"""What a rule test found: every segment's rows, curves and verdict (`Segment`) and the
whole test (`RuleTestResult`), as rule_test.json stores them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

ALL = "all"


@dataclass
class Segment:
    """One segment's rows, curves (folds x alphas) and verdict.

    Attributes:
        rows: The segment's number of rows.
        verdict: `"consistent"`, `"contradicted"` or `"inconclusive"`.
        reason: The verdict's reason, in words.
        statistics: What [segment_statistics][deepctrl.tabular.rule_verdict.segment_statistics]
            found (empty when the segment was not trained).
        errors: The held-out error of every fold at every alpha, or None.
        verification: The held-out verification ratio of every fold at every alpha, or None.
    """

    rows: int
    verdict: str
    reason: str
    statistics: dict[str, Any] = field(default_factory=dict)
    errors: np.ndarray | None = None
    verification: np.ndarray | None = None

    def to_dict(self, alphas: Sequence[float]) -> dict[str, Any]:
        """The segment as rule_test.json stores it (curves as fold means).

        Args:
            alphas: The alphas of the curves.

        Returns:
            Rows, verdict, reason, statistics and (when trained) the mean curves.
        """
        out: dict[str, Any] = {
            "rows": self.rows,
            "verdict": self.verdict,
            "reason": self.reason,
            **self.statistics,
        }
        if self.errors is not None and self.verification is not None:
            out["curve"] = {
                "alpha": list(alphas),
                "error": self.errors.mean(axis=0).tolist(),
                "verification": np.nanmean(self.verification, axis=0).tolist(),
            }
        return out


@dataclass
class RuleTestResult:
    """What [rule_test][deepctrl.tabular.rule_test.rule_test] found.

    Attributes:
        rule: The rules tested, in words.
        target: The target's name (the names of several targets, joined).
        metric: The held-out error metric of the curves.
        alphas: The alphas of the curves.
        groups: Each segment by group value (as text).
        all: All rows together.
        folds: The folds each segment is split into.
    """

    rule: str
    target: str
    metric: str
    alphas: list[float]
    groups: dict[str, Segment]
    all: Segment
    folds: int

    def to_dict(self) -> dict[str, Any]:
        """The contents of rule_test.json.

        Returns:
            The rule, the target and every segment's
                [to_dict][deepctrl.tabular.rule_test_result.Segment.to_dict] with the metric.
        """
        return {
            "rule": self.rule,
            "target": self.target,
            "groups": {
                k: {"metric": self.metric, **v.to_dict(self.alphas)} for k, v in self.groups.items()
            },
            "all": {"metric": self.metric, **self.all.to_dict(self.alphas)},
        }

    def verdicts(self) -> dict[str, str]:
        """The verdicts.

        Returns:
            The verdict of each group value, and of `"all"`.
        """
        return {**{k: v.verdict for k, v in self.groups.items()}, ALL: self.all.verdict}
