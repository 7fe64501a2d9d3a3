"""The choice of a fitted table estimator's alpha from its sweeps: at fit (the rule-keeping
and the lowest-error alpha), and again on other rows by `select_alpha` or, without labels,
for a verification goal by `alpha_for_verification` (mixed into `DeepCTRLEstimator` on
top of `AlphaEvaluation`, whose sweeps it reads)."""

from __future__ import annotations

import warnings
from typing import Any

from sklearn.utils.validation import check_is_fitted

from deepctrl.core import alpha_selection
from deepctrl.core.inputs import Alphas
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.alpha_choice import (
    ALPHA_GRID,
    KEEP_RULE,
    LABEL_FREE_GRID,
    check_goal,
    first_reaching,
    keep_rule_alpha,
    min_error_alpha,
    row_of,
)
from deepctrl.tabular.alpha_evaluation import AlphaEvaluation


class AlphaSelection(AlphaEvaluation):
    """The estimators' choice of alpha from the sweeps of their fitted networks."""

    def _select(
        self,
        table: dict[str, list[float]],
        min_verification: float | None = None,
        min_error: bool = False,
    ) -> float:
        """The rule-keeping alpha (the lowest error among alphas whose verification ratio
        reaches 0.99, or `min_verification` when given: an error when none does) or the
        lowest-error one."""
        if self.rule_ is None:
            return 0.0
        if min_verification is not None:
            alpha_selection.select_alpha(table, min_verification=min_verification)  # one reaches it
            return keep_rule_alpha(table, self.primary_metric, min_verification)
        if min_error:
            return min_error_alpha(table, self.primary_metric)
        return keep_rule_alpha(table, self.primary_metric)

    def alpha_for_verification(
        self, X: Any, min_verification: float, alphas: Alphas | None = None
    ) -> tuple[float, float]:
        """The smallest alpha whose verification ratio on the rows of X reaches
        `min_verification`; no labels needed and the estimator is left as it is.

        Args:
            X: The rows, without labels.
            min_verification: The verification ratio to reach, in (0, 1].
            alphas: The alphas to try; None is 0 to 1.5 by 0.05 (above 1 the rule path is
                extrapolated).

        Returns:
            The alpha and its verification ratio.

        Raises:
            ValueError: When no alpha reaches the goal (the message names the highest ratio
                reached), `min_verification` is out of range, or the model has no rules.

        Examples:
            ```python
            alpha, ratio = model.alpha_for_verification(X_new, 0.95)
            ```
        """
        goal = check_goal(min_verification)
        check_is_fitted(self, "models_")
        if self.rule_ is None:
            raise ValueError(
                "this model has no rules, so it has no verification ratio to choose alpha by"
            )
        grid = LABEL_FREE_GRID if alphas is None else alphas
        return first_reaching(self.sweep(X, None, grid).to_dict(orient="list"), goal)

    def select_alpha(
        self,
        X_val: Any,
        y_val: Any = None,
        min_verification: float | None = None,
        alphas: Alphas | None = None,
        objective: str = "auto",
        sample_weight: Any = None,
    ) -> float:
        """Choose the alpha that predictions use by default (`alpha_`) on a validation set
        and return it.

        As at fit, the lowest-error alpha whose verification ratio on X_val reaches 0.99
        (`objective="auto"`), or reaches `min_verification` when given, or the lowest
        error alone (`objective="min_error"`). The `alpha` parameter stays as you set it.
        Without labels (`y_val=None`) `min_verification` is required and the choice is
        that of `alpha_for_verification`: the smallest alpha whose ratio reaches it.

        Args:
            X_val: The validation rows.
            y_val: Their targets; None chooses by verification alone.
            min_verification: The verification ratio to reach, in (0, 1]; None chooses by
                `objective`.
            alphas: The alphas to try; None is 0 to 1 by 0.05 (0 to 1.5 without labels).
            objective: `"auto"` or `"min_error"` (not with `min_verification`), as above.
            sample_weight: Row weights for the errors (as fit weighs its validation rows;
                a `class_weight` is not applied here: pass the weights it implies).

        Returns:
            The chosen alpha, now `alpha_`.

        Raises:
            ValueError: When `objective` or `min_verification` is not valid, `y_val` is
                None without `min_verification`, no alpha reaches `min_verification`, or
                the model has no rules.

        Examples:
            On unlabelled rows:

            ```python
            model.select_alpha(X_new, min_verification=0.95)
            ```
        """
        if min_verification is not None:
            min_verification = check_goal(min_verification)
        if objective not in ("auto", "min_error"):
            raise ValueError(f"objective must be 'auto' or 'min_error', got {objective!r}")
        if objective == "min_error" and min_verification is not None:
            raise ValueError(
                "objective='min_error' and min_verification exclude each other: the lowest "
                "error whatever the rule, or the lowest error among alphas that keep it"
            )
        if y_val is None:
            if sample_weight is not None:
                raise ValueError("sample_weight weighs the error metrics: give y_val as well")
            if min_verification is None:
                raise ValueError(
                    "select_alpha without labels (y_val=None) needs "
                    "min_verification, the verification ratio to reach"
                )
            alpha, _ = self.alpha_for_verification(X_val, min_verification, alphas)
            self.alpha_ = alpha
            return alpha
        table = self.sweep(
            X_val, y_val, ALPHA_GRID if alphas is None else alphas, sample_weight=sample_weight
        )
        if self.rule_ is None:
            raise ValueError("this model has no rules, so alpha has no effect")
        rows = table.to_dict(orient="list")
        alpha = self._select(rows, min_verification, min_error=objective == "min_error")
        if objective == "auto" and min_verification is None and _none_keeps(rows):
            ratio = row_of(rows, alpha)["verification_ratio"]
            warnings.warn(
                f"no alpha reaches verification {KEEP_RULE:g} on these rows, so the one "
                f"that keeps the rule best is chosen: alpha {alpha:g}, verification "
                f"{ratio:.3f}; give a grid that reaches higher alphas, or "
                "min_verification to require a ratio",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        self.alpha_ = alpha
        return alpha


def _none_keeps(table: dict[str, list[float]]) -> bool:
    """Whether no alpha of a sweep reaches the default goal of keeping the rule."""
    return not any(r >= KEEP_RULE for r in table["verification_ratio"])
