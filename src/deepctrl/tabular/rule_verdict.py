"""From held-out error and verification curves over alpha to a verdict on a rule.

Each fold of a segment gives two curves on its held-out rows: the error `E[f, a]` and the
verification ratio `V[f, a]` at every alpha of the grid. The statistics compare alphas
within a fold (paired), so the differences between folds in difficulty cancel:

- the best alpha minimises the mean error; its interval holds every alpha whose paired
  difference to the best is not above zero at 90 % confidence (t over the folds);
- the enforcement cost is the error at alpha 1 minus the best error, with its t interval;
- `verification_alpha0` is how often the data-only path (alpha 0) already obeys the rule;
  its t interval takes the folds' standard deviation as at least the binomial one of their
  judged rows, and is widened to the exact (Clopper-Pearson) binomial interval of those
  rows pooled over the folds: a few folds of a few rows each can give equal ratios, whose
  plain t interval has no width;
- the cost of following the rule is measured at the smallest alpha whose mean verification
  ratio reaches [HOLDS][deepctrl.tabular.rule_verdict.HOLDS] (alpha 1 if none does).

DeepCTRL's rule path fits the data less well than its data path even when the rule is
right, so the error at alpha 1 exceeds the best error on almost every segment; the verdict
therefore weighs the data-only verification first. The thresholds come from the reliability
study in the documentation ("Testing a candidate rule").

Examples:
    >>> import numpy as np
    >>> E = np.array([[1.0, 0.9, 1.2], [1.1, 1.0, 1.3], [0.9, 0.8, 1.1]])
    >>> V = np.array([[0.1, 0.6, 1.0], [0.2, 0.7, 1.0], [0.1, 0.5, 1.0]])
    >>> s = segment_statistics(E, V, [0.0, 0.5, 1.0], judged=[10, 10, 10])
    >>> s["best_alpha"], round(s["enforcement_cost"], 6), round(s["verification_alpha0"], 4)
    (0.5, 0.3, 0.1333)
    >>> s["followed_rows_alpha0"], s["judged_rows"]
    (4, 30)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

CONFIDENCE = 0.90
"""Two-sided confidence of every interval (t over folds; the data-only verification's at
least binomial over its judged rows)."""
HOLDS = 0.95
"""The verification ratio at which a model counts as following the rule."""


@dataclass(frozen=True)
class Thresholds:
    """Where the verdicts change.

    Args:
        agree: The lower bound of the data-only verification above which the data agree
            with the rule.
        disagree: Its upper bound below which they disagree.
        tolerance: A cost within this share of the best error counts as no cost.
    """

    agree: float = 0.70
    disagree: float = 0.20
    tolerance: float = 0.01


def _t_interval(values: np.ndarray, sd_floor: float = 0.0) -> tuple[float, float, float]:
    """Mean and CONFIDENCE interval of the mean of `values` (one per fold), their standard
    deviation taken as at least `sd_floor`."""
    mean = float(values.mean())
    if len(values) < 2:
        return mean, -math.inf, math.inf
    half = float(
        stats.t.ppf(0.5 + CONFIDENCE / 2, len(values) - 1)
        * max(float(values.std(ddof=1)), sd_floor)
        / math.sqrt(len(values))
    )
    return mean, mean - half, mean + half


def binomial_interval(followed: int, judged: int) -> tuple[float, float]:
    """The exact (Clopper-Pearson) CONFIDENCE interval of a share of `followed` in `judged`
    rows.

    >>> tuple(round(v, 3) for v in binomial_interval(6, 8))
    (0.4, 0.954)
    """
    tail = (1 - CONFIDENCE) / 2
    low = float(stats.beta.ppf(tail, followed, judged - followed + 1)) if followed else 0.0
    high = (
        float(stats.beta.ppf(1 - tail, followed + 1, judged - followed))
        if followed < judged
        else 1.0
    )
    return low, high


def _verification_alpha0(
    ratios: np.ndarray, counts: np.ndarray
) -> tuple[float, float, float, int, int]:
    """Mean of the folds' data-only verification ratios, its interval, and the rows judged
    and followed, pooled over the folds. The interval is the wider of the t interval over
    the folds, their standard deviation taken as at least the one their rows alone give
    (binomial, at the share (followed + 2) / (rows + 4), which none or all of the rows
    following do not make 0), and the exact binomial interval of the pooled rows."""
    judged = ~np.isnan(ratios)
    values, n = ratios[judged], counts[judged]
    if not len(values):
        return math.nan, math.nan, math.nan, 0, 0
    rows, followed = int(n.sum()), round(float((values * n).sum()))
    share = (followed + 2) / (rows + 4)
    mean, low, high = _t_interval(values, math.sqrt(share * (1 - share) * np.mean(1 / n)))
    exact = binomial_interval(followed, rows)
    return mean, min(low, exact[0]), max(high, exact[1]), rows, followed


def judged_folds(verification: np.ndarray) -> np.ndarray:
    """The rows (folds) of a verification curve with a ratio: a fold whose held-out rows the
    rule judged none of (a threshold no pair crossed) has none, and the others decide.

    >>> judged_folds(np.array([[0.5, 1.0], [np.nan, np.nan]])).tolist()
    [[0.5, 1.0]]
    """
    return verification[~np.isnan(verification).all(axis=1)]


def segment_statistics(
    errors: np.ndarray, verification: np.ndarray, alphas: Sequence[float], judged: Sequence[int]
) -> dict[str, Any]:
    """Best alpha, costs and data-only verification, with intervals, from per-fold curves.

    Args:
        errors: The held-out error of every fold at every alpha, (folds, len(alphas)).
        verification: The held-out verification ratio likewise.
        alphas: The alphas, from 0 and ending at 1.
        judged: The held-out rows the rule judged in every fold (the sweep's
            `attrs["judged_rows"][0]`).

    Returns:
        The statistics by name: `best_alpha`, `verification_alpha0`, `enforcement_cost`,
            `cost_rule_holds` and others, with `_interval` bounds.

    Raises:
        ValueError: When `judged` does not hold one count per fold, at least 1 where the
            fold has a verification ratio at alpha 0.
    """
    E, V, grid = np.asarray(errors, float), np.asarray(verification, float), list(alphas)
    counts = np.asarray(judged, dtype=float)
    if counts.shape != (E.shape[0],) or not (counts[~np.isnan(V[:, 0])] >= 1).all():
        raise ValueError(
            f"judged must hold one row count per fold ({E.shape[0]}), at least 1 where a fold "
            "has a verification ratio"
        )
    mean_error = E.mean(axis=0)
    best = int(np.argmin(mean_error))
    diff = E - E[:, [best]]
    lows = [_t_interval(diff[:, a])[1] for a in range(len(grid))]
    plausible = [grid[a] for a in range(len(grid)) if lows[a] <= 0.0]
    last = len(grid) - 1
    cost, cost_lo, cost_hi = _t_interval(diff[:, last])
    Vj = judged_folds(V)
    mean_v = np.nan_to_num(np.nanmean(Vj, axis=0), nan=0.0) if len(Vj) else np.zeros(len(grid))
    reach = np.flatnonzero(mean_v >= HOLDS)
    holds = int(reach[0]) if len(reach) else last
    hold_cost, hold_lo, hold_hi = _t_interval(diff[:, holds])
    v0, v0_lo, v0_hi, rows, followed = _verification_alpha0(V[:, 0], counts)
    return {
        "folds": int(E.shape[0]),
        "folds_judged": int((~np.isnan(V[:, 0])).sum()),
        "judged_rows": rows,
        "followed_rows_alpha0": followed,
        "best_alpha": grid[best],
        "best_alpha_interval": [min(plausible), max(plausible)],
        "verification_alpha0": v0,
        "verification_alpha0_interval": [max(v0_lo, 0.0), min(v0_hi, 1.0)],
        "error_alpha0": float(mean_error[0]),
        "error_best": float(mean_error[best]),
        "error_alpha1": float(mean_error[last]),
        "enforcement_cost": cost,
        "enforcement_cost_interval": [cost_lo, cost_hi],
        "alpha_rule_holds": grid[holds] if len(reach) else None,
        "cost_rule_holds": hold_cost,
        "cost_rule_holds_interval": [hold_lo, hold_hi],
    }


def _span(low: float, high: float) -> str:
    """An interval in whole percents, rounded outwards: a lower end of 99.5 % is not 100 %.

    >>> _span(0.995, 1.0), _span(0.0, 0.0296)
    ('99% to 100%', '0% to 3%')
    """
    low, high = max(low, 0.0), min(high, 1.0)
    return f"{math.floor(low * 100 + 1e-9):d}% to {math.ceil(high * 100 - 1e-9):d}%"


def judge(s: dict[str, Any], limits: Thresholds | None = None) -> tuple[str, str]:
    """The verdict on a segment, and its reason in words.

    Args:
        s: What [segment_statistics][deepctrl.tabular.rule_verdict.segment_statistics]
            returned.
        limits: Where the verdicts change; None is the default
            [Thresholds][deepctrl.tabular.rule_verdict.Thresholds].

    Returns:
        `"consistent"`, `"contradicted"` or `"inconclusive"`, and the reason.
    """
    limits = limits or Thresholds()
    v0, (v0_lo, v0_hi) = s["verification_alpha0"], s["verification_alpha0_interval"]
    allowed = limits.tolerance * abs(s["error_best"])
    cost, (cost_lo, cost_hi) = s["cost_rule_holds"], s["cost_rule_holds_interval"]
    where = (
        f"at alpha {s['alpha_rule_holds']:g}"
        if s["alpha_rule_holds"] is not None
        else f"at alpha 1, where it still falls short of {HOLDS:.0%} verification"
    )
    best = abs(s["error_best"])
    share = cost / best if best else 0.0 if cost == 0 else math.copysign(math.inf, cost)
    tolerance = f"{limits.tolerance * 100:g}%"  # 1%, or 0.5% given
    judged = s.get("folds_judged")  # statistics saved before it was counted have none
    if not math.isfinite(v0) or (judged is not None and judged < 2):
        which = (
            "none of the held-out rows"
            if not judged
            else f"rows in {judged} of {s.get('folds')} folds"
        )
        return "inconclusive", (
            f"the rule judged {which} (a threshold rule judges only the rows "
            "that its perturbation carries across the threshold; a larger perturbation "
            "judges more)"
        )
    seen = (
        f"the data-only model (alpha 0) follows the rule on {v0:.0%} of held-out rows, "
        "on average over the folds"
    )
    span = _span(v0_lo, v0_hi)
    if v0_lo >= limits.agree:
        return "consistent", f"{seen} ({span} at {CONFIDENCE:.0%} confidence)"
    if cost_hi <= allowed and v0_lo > 0.5:
        return "consistent", (
            f"{seen} ({span}), more than half, and following the rule "
            f"({where}) costs {share:+.1%} error, within {tolerance} of the best "
            f"error at {CONFIDENCE:.0%} confidence"
        )
    if v0_hi <= limits.disagree and cost_lo > allowed:
        return "contradicted", (
            f"{seen} ({span}), and following it "
            f"({where}) costs {share:+.1%} error, beyond the noise"
        )
    if v0_hi - v0_lo > 2 * (limits.agree - 0.5):
        return "inconclusive", (
            f"{seen}, but its interval is too wide to tell ({span}): too few judged rows,"
            " or folds that disagree"
        )
    if v0_hi <= limits.disagree:
        return "inconclusive", (
            f"{seen}, but following it ({where}) costs {share:+.1%} error,"
            " not distinguishable from no cost"
        )
    lean = (
        "the data lean against the rule, short of contradicting it"
        if v0_hi < 0.5
        else "the data lean towards the rule, short of agreeing with it"
        if v0_lo > 0.5
        else "the data show no clear direction"
    )
    return "inconclusive", (
        f"{seen} ({span}): {lean}, and following the rule ({where}) costs {share:+.1%}"
    )


def too_few_rows(rows: int, needed: int) -> tuple[str, str]:
    """The verdict on a segment with fewer rows than a rule test needs.

    Args:
        rows: The segment's rows.
        needed: The rows a rule test needs.

    Returns:
        `"inconclusive"`, and the reason.
    """
    return "inconclusive", f"{rows} row{'s' * (rows != 1)}: too few to judge ({needed} needed)"
