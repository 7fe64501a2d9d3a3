"""How the estimators choose the rule strength alpha after training.

The default (``alpha="auto"``) keeps the rule the user stated: the alpha with the lowest
validation error among those whose verification ratio on the validation rows reaches
:data:`KEEP_RULE` (0.99), or the alpha with the highest verification when none does. This
is what a stated constraint means in monotone gradient boosting too: it holds. The lowest
validation error alone (``alpha="min_error"``) often lands on alpha 0 when the validation
rows are drawn like the training rows, which drops the rule; ``deepctrl test-rule`` is the
tool for doubting a rule.

>>> table = {"alpha": [0.0, 0.5, 1.0], "mse": [1.0, 1.1, 1.3],
...          "verification_ratio": [0.6, 0.995, 1.0]}
>>> keep_rule_alpha(table, "mse"), min_error_alpha(table, "mse")
(0.5, 0.0)
"""

from __future__ import annotations

import math
import numbers
import sys
from typing import Any

import numpy as np

from deepctrl.core.ratio_text import ratio_text

ALPHA_GRID = [round(0.05 * i, 10) for i in range(21)]
LABEL_FREE_GRID = [round(0.05 * i, 10) for i in range(31)]
"""0, 0.05, ..., 1.5: the alphas tried for a verification goal without labels (above 1 the
rule path is extrapolated, as the paper does on a population that follows the rule more)."""
KEEP_RULE = 0.99
"""The verification ratio the default alpha reaches on the validation rows."""
CHOICES = ("auto", "min_error")
HIGHER_IS_BETTER = ("accuracy", "auc")


def _one_number_tensor(value: Any) -> bool:
    """Whether ``value`` is a one-element tensor of numbers (torch is not imported for it:
    without torch loaded no value is a tensor, and the command line starts without it)."""
    torch = sys.modules.get("torch")
    return (
        torch is not None
        and isinstance(value, torch.Tensor)
        and value.numel() == 1
        and value.dtype != torch.bool
    )


def check_alpha(alpha: Any, name: str = "alpha") -> float | str:
    """``alpha`` as a finite float >= 0 (0 follows the data, 1 the rule; above 1 extrapolates
    the rule), or one of the texts "auto" and "min_error"; a 0-d array or one-element
    tensor counts as its number.

    >>> import torch
    >>> check_alpha(np.array(0.5)), check_alpha(torch.tensor([0.25])), check_alpha("auto")
    (0.5, 0.25, 'auto')
    """
    if isinstance(alpha, str) and alpha in CHOICES:
        return alpha
    return alpha_number(alpha, name, "a finite number, 'auto' or 'min_error'")


def alpha_number(alpha: Any, name: str, allowed: str = "a finite number") -> float:
    """``alpha`` as a finite float >= 0, as every alpha of a grid must be (a grid takes no
    names); ``allowed`` is what the error says ``name`` may be.

    >>> alpha_number(float("nan"), "every alpha")
    Traceback (most recent call last):
    ...
    ValueError: every alpha must be a finite number, got nan
    >>> alpha_number(np.zeros(600), "alpha")
    Traceback (most recent call last):
    ...
    ValueError: alpha must be a finite number, got ndarray of 600 values (one alpha per row is \
for predict and predict_proba)
    """
    if (isinstance(alpha, np.ndarray) and alpha.ndim == 0) or _one_number_tensor(alpha):
        alpha = alpha.item()
    if hasattr(alpha, "__len__") and not isinstance(alpha, str | bytes):
        n = len(alpha)
        raise ValueError(
            f"{name} must be {allowed}, got {type(alpha).__name__} of {n} value"
            f"{'' if n == 1 else 's'} (one alpha per row is for predict and predict_proba)"
        )
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, numbers.Real)
        or not math.isfinite(float(alpha))
    ):
        raise ValueError(f"{name} must be {allowed}, got {alpha!r}")
    if alpha < 0:
        raise ValueError(f"{name} must be >= 0 (0 follows the data, 1 the rule), got {alpha:g}")
    return float(alpha)


def per_row_alphas(alpha: Any, n: int) -> np.ndarray:
    """One rule strength per row, as float64: finite numbers >= 0, as many as the rows.

    >>> per_row_alphas([0.0, 0.5], 2).tolist()
    [0.0, 0.5]
    """
    try:
        values = np.asarray(alpha, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("a per-row alpha must hold numbers") from None
    if values.shape != (n,):
        raise ValueError(
            f"a per-row alpha needs one value per row: got shape {values.shape} for {n} rows"
        )
    if not np.isfinite(values).all():
        raise ValueError("a per-row alpha must hold finite numbers")
    if (values < 0).any():
        row = int(np.argmax(values < 0))
        raise ValueError(f"a per-row alpha must be >= 0: row {row} has {values[row]:g}")
    return values


def check_goal(min_verification: Any) -> float:
    """A verification goal as a float in (0, 1]."""
    if (
        isinstance(min_verification, bool)
        or not isinstance(min_verification, numbers.Real)
        or not 0 < float(min_verification) <= 1
    ):
        raise ValueError(
            "min_verification must be a number greater than 0 and at most 1, "
            f"got {min_verification!r}"
        )
    return float(min_verification)


def _errors(table: dict[str, list[float]], metric: str) -> list[float]:
    sign = -1.0 if metric in HIGHER_IS_BETTER else 1.0
    return [sign * v if not math.isnan(v) else math.inf for v in table[metric]]


def min_error_alpha(table: dict[str, list[float]], metric: str) -> float:
    """The alpha with the lowest ``metric`` (the smallest such alpha on ties, in whatever
    order the table lists them).

    >>> min_error_alpha({"alpha": [1.0, 0.5, 0.0], "mae": [2.0, 1.0, 1.0]}, "mae")
    0.0
    """
    errors, alphas = _errors(table, metric), table["alpha"]
    return float(alphas[min(range(len(errors)), key=lambda i: (errors[i], alphas[i]))])


def keep_rule_alpha(
    table: dict[str, list[float]], metric: str, min_verification: float = KEEP_RULE
) -> float:
    """The lowest-error alpha among those whose verification ratio reaches
    ``min_verification``; else the alpha with the highest verification (lowest error on
    ties)."""
    errors = _errors(table, metric)
    ratios = [-1.0 if math.isnan(r) else r for r in table["verification_ratio"]]
    rows = range(len(errors))
    kept = [i for i in rows if ratios[i] >= min_verification]
    if kept:
        best = min(kept, key=lambda i: (errors[i], -table["alpha"][i]))
    else:
        best = min(rows, key=lambda i: (-ratios[i], errors[i]))
    return float(table["alpha"][best])


def row_of(table: dict[str, list[float]], alpha: float) -> dict[str, float]:
    """The sweep row of ``alpha``."""
    i = min(range(len(table["alpha"])), key=lambda j: abs(table["alpha"][j] - alpha))
    return {k: v[i] for k, v in table.items()}


def first_reaching(table: dict[str, list[float]], goal: float) -> tuple[float, float]:
    """The smallest alpha whose verification ratio reaches ``goal``, and that ratio; a
    ValueError naming the highest ratio reached when none does."""
    found = list(zip(table["alpha"], table["verification_ratio"], strict=True))
    reached = [(a, r) for a, r in found if r >= goal]
    if reached:
        return min(reached)
    span = f"{min(a for a, _ in found):g}..{max(a for a, _ in found):g}"
    judged = [(a, r) for a, r in found if not math.isnan(r)]
    if not judged:
        raise ValueError(
            f"no alpha in {span} reaches verification ratio {goal:g}: the "
            "rules judge none of these rows"
        )
    best = max(r for _, r in judged)
    at = min(a for a, r in judged if r == best)
    raise ValueError(
        f"no alpha in {span} reaches verification ratio {goal:g} on these "
        f"rows (highest {ratio_text(best, goal)} at alpha {at:g})"
    )
