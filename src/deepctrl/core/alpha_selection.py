"""The choice of alpha from a sweep's table (`select_alpha`): the smallest alpha that reaches
a verification ratio, or the one with the best error or score."""

from __future__ import annotations

import math

from deepctrl.core.checks import finite_real
from deepctrl.core.evaluation import Table
from deepctrl.core.metrics import HIGHER_IS_BETTER
from deepctrl.core.ratio_text import ratio_text

ERROR_METRICS = ("poisson", "mae", "mse", "rmse", "bce", "cross_entropy")
"""The error columns `select_alpha` picks by, the first present: the deviance first, since
a table holds it only for log-rate outputs, beside which the others compare log-rates
with counts."""


def _error_metric(table: Table, metric: str | None) -> str:
    if metric is not None:
        if metric in ("alpha", "verification_ratio"):
            raise ValueError(
                f"metric {metric!r} is not an error to minimise: pick an error or score column"
                + (", and reach a ratio with min_verification" if metric != "alpha" else "")
            )
        if metric not in table:
            raise ValueError(f"metric {metric!r} is not in the table ({sorted(table)})")
        return metric
    for name in (*ERROR_METRICS, *sorted(HIGHER_IS_BETTER)):
        if name in table:
            return name
    raise ValueError(f"the table has no metric to select on ({sorted(table)})")


def select_alpha(
    table: Table,
    min_verification: float | None = None,
    objective: str = "min_error",
    metric: str | None = None,
) -> float:
    """Pick an alpha from a [sweep][deepctrl.core.evaluation.sweep] table.

    With `min_verification`: the smallest alpha whose verification ratio is at least
    that, or, when `metric` is given too, the alpha with the best `metric` among them (as
    the table estimators' `select_alpha(X, y, min_verification=...)` does when given
    labels). Otherwise `objective="min_error"`: the alpha with the best `metric` (accuracy
    and auc are maximised, the others minimised; NaN counts as the worst).

    When several alphas tie on `metric`, the smallest is taken, as the table estimators'
    `"min_error"` choice takes it; their rule-keeping choice (`alpha="auto"`, and
    `select_alpha(X, y, min_verification=...)`) takes the largest, the stronger rule.

    Args:
        table: A table of [sweep][deepctrl.core.evaluation.sweep], or any mapping of
            columns (a pandas DataFrame, tensors, arrays); rows are read by position.
        min_verification: The verification ratio to reach; None picks by `metric`.
        objective: How to pick without `min_verification`; `"min_error"` is the only one.
        metric: The column to optimise; None is the first error metric in the table
            (poisson, mae, mse, rmse, bce, cross_entropy), else accuracy or auc, and with
            `min_verification` the smallest alpha reaching it.

    Returns:
        The chosen alpha.

    Raises:
        ValueError: When no alpha reaches `min_verification` (the message names the
            highest ratio), the table has no verification ratio or no such metric, the
            metric has no value (all NaN), or `objective` is not `"min_error"`.
        TypeError: When `table` is not a dict of columns.

    Examples:
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2],
        ...               "verification_ratio": [0.2, 0.8, 0.99]}, min_verification=0.9)
        1.0
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2]})
        0.5
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2],
        ...               "verification_ratio": [0.95, 0.97, 0.99]}, 0.9, metric="mae")
        0.5
    """
    if not (hasattr(table, "get") and hasattr(table, "items")):
        raise TypeError(
            f"table must be a dict of columns, as dc.sweep returns, got {type(table).__name__}"
        )
    if objective != "min_error":
        raise ValueError(f"objective must be 'min_error', got {objective!r}")
    table = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in table.items()}
    alphas = table.get("alpha", [])
    if len(alphas) == 0:
        raise ValueError("the table has no alphas to select from")
    uneven = [k for k, v in table.items() if hasattr(v, "__len__") and len(v) != len(alphas)]
    if uneven:
        raise ValueError(
            f"the table's columns must have one value per alpha: {uneven[0]} has "
            f"{len(table[uneven[0]])} for {len(alphas)} alphas"
        )
    if min_verification is not None:
        given, min_verification = (
            min_verification,
            finite_real(min_verification, "min_verification"),
        )
        if not 0 < min_verification <= 1:
            raise ValueError(
                f"min_verification is a ratio in (0, 1], got {given!r}"
                + (
                    f" (for {min_verification:g} %, give {min_verification / 100:g})"
                    if 1 < min_verification <= 100
                    else ""
                )
            )
        if "verification_ratio" not in table:
            raise ValueError("the table has no verification_ratio (sweep without a rule)")
        ratios = table["verification_ratio"]
        ok = [i for i, r in enumerate(ratios) if r >= min_verification]
        if not ok:
            judged = [i for i in range(len(alphas)) if not math.isnan(ratios[i])]
            if not judged:
                raise ValueError("no alpha has a verification ratio: the rule judged no row")
            best = max(judged, key=lambda i: ratios[i])
            raise ValueError(
                f"no alpha reaches verification ratio {min_verification}"
                f" (highest {ratio_text(ratios[best], min_verification)} at alpha "
                f"{alphas[best]})"
            )
        return float(min(alphas[i] for i in ok)) if metric is None else _best_by(table, metric, ok)
    return _best_by(table, metric, list(range(len(alphas))))


def _best_by(table: Table, metric: str | None, rows: list[int]) -> float:
    """The alpha of ``rows`` (indices into the table) with the best ``metric``, the smallest
    on ties; an error when none of them has a value."""
    name = _error_metric(table, metric)
    sign = -1.0 if name in HIGHER_IS_BETTER else 1.0
    values = [sign * v if not math.isnan(v) else math.inf for v in table[name]]
    if all(math.isnan(table[name][i]) for i in rows):
        raise ValueError(f"no alpha has a value of {name} (every one is NaN)")
    alphas = table["alpha"]
    return float(alphas[min(rows, key=lambda i: (values[i], float(alphas[i])))])
