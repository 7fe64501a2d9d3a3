"""The lines that describe a fitted estimator (``est.summary()``, ``deepctrl fit``)."""

from __future__ import annotations

import math
from typing import Any

from deepctrl.core.ratio_text import ratio_text
from deepctrl.core.rules import Monotonic, Relative, Threshold
from deepctrl.tabular.alpha_choice import KEEP_RULE, row_of
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.params import fitted_param
from deepctrl.tabular.rule_leaves import leaves_and_weights
from deepctrl.tabular.table_rules import acts_on, describe


def _imputed(est: Any) -> str | None:
    """Missing values counted over every row given to ``fit`` (training and validation:
    the encoder is fitted on them all)."""
    parts = []
    for col in est.encoder_.columns:
        if not col.missing:
            continue
        how = (
            "as a category of its own"
            if col.kind == CATEGORICAL
            else f"filled with the column's mean {col.mean:.4g}"
            + (" days" if col.kind == DATE else "")
            + ", plus an indicator input"
        )
        parts.append(f"{col.name} {col.missing} ({how})")
    if not parts:
        return None
    cross_fit = fitted_param(est, "validation") == "cross_fit"
    given = est.n_train_ + (0 if cross_fit else est.n_validation_)
    return f"missing values in the {given} rows given: " + "; ".join(parts)


def _loss(est: Any) -> str | None:
    """The Poisson loss, and the training means its log-rates are relative to (the
    squared and absolute errors are said by the metrics' names)."""
    if getattr(est, "classes_", None) is not None or fitted_param(est, "loss") != "poisson":
        return None
    means = ", ".join(
        f"{name} {mean:.4g}"
        for name, mean in zip(est.output_names_, est.target_scale_.tolist(), strict=True)
    )
    return (
        "loss: poisson (predictions are exp of the networks' log-rate times the scale, the "
        f"training mean or 1 for a target that is all 0: {means})"
    )


def _dates(est: Any) -> str | None:
    parts = [
        f"{c.name} from {c.origin[:19]} ({c.width} input{'s' if c.width != 1 else ''}: days"
        + "".join(f", {p} cycle" for p in c.parts)
        + (", missing indicator" if c.indicator else "")
        + ")"
        for c in est.encoder_.columns
        if c.kind == DATE
    ]
    return "dates: " + "; ".join(parts) if parts else None


def _choice(est: Any, alpha: float, label: str) -> str:
    row = row_of(est.validation_sweep_, alpha)
    metric = est.primary_metric
    return (
        f"alpha {alpha:g} ({label} {metric} {row[metric]:.4g}, verification "
        f"{ratio_text(row['verification_ratio'], KEEP_RULE)})"
    )


def _weighted(est: Any) -> str:
    """How the errors below were weighted: by `sample_weight` (weights that differ between
    the rows kept) and by a classifier's `class_weight`; empty if not."""
    how = ["rows weighted by sample_weight"] if getattr(est, "sample_weighted_", False) else []
    if hasattr(est, "classes_") and fitted_param(est, "class_weight") is not None:
        how.append("classes weighted by class_weight")
    return f" ({' and '.join(how)})" if how else ""


def summary_lines(est: Any) -> list[str]:
    """Rows, inputs, missing values, dates, rules and what they act on, epochs, and the
    default alpha beside the lowest-error one."""
    label = "validation" if est.n_validation_ else "training"
    split = f"validated on {est.n_validation_}" if est.n_validation_ else "no validation split"
    validation, rules = fitted_param(est, "validation"), fitted_param(est, "rules")
    if est.n_validation_ and validation == "last":
        split = f"validated on the last {est.n_validation_}"
    if validation == "cross_fit":
        label = "out-of-fold"
        split = f"cross-fitted: {len(est.models_)} networks, each validated on its own fold"
    lines = [
        f"trained {type(est).__name__} on {est.n_train_} rows ({split}), "
        f"{est.encoder_.n_encoded} inputs after encoding"
    ]
    lines += [line for line in (_loss(est), _imputed(est), _dates(est)) if line]
    leaves, _ = leaves_and_weights(rules)
    if not leaves:
        lines.append("rules: none")
    else:
        feature_rules = acts_on(rules, est.rule_outputs(), est.encoder_)
        others = [describe(r) for r in leaves if not hasattr(r, "direction")]
        lines.append("rules: " + ", ".join(feature_rules + others))
    lines.append(f"epochs: {est.n_epochs_} (best at {max(est.best_epochs_)})")
    table = est.validation_sweep_
    metrics = [m for m in table if m not in ("alpha", "verification_ratio")]
    first = row_of(table, 0.0)
    shown = [
        f"{m} n/a (a class has no {label} row)"
        if m == "auc" and math.isnan(first[m])
        else f"{m} {first[m]:.4g}"
        for m in metrics
    ]
    lines.append(f"{label} at alpha 0{_weighted(est)}: " + ", ".join(shown))
    if est.rule_ is not None:
        lines.append(
            f"default alpha: {_choice(est, est.selected_alpha_, label)}: the lowest "
            f"{label} error among alphas whose verification reaches {KEEP_RULE:g}"
            + (
                ""
                if row_of(table, est.selected_alpha_)["verification_ratio"] >= KEEP_RULE
                else " (none does: the highest verification)"
            )
        )
        lines.append(
            f"lowest {label} error: {_choice(est, est.min_error_alpha_, label)} (alpha='min_error')"
        )
        judged = _judged(est, label)
        if judged:
            lines.append(judged)
        if est.alpha_ != est.selected_alpha_:
            lines.append(f"predict uses alpha {est.alpha_:g} ({_set_by(est)})")
    return lines


FEW_JUDGED = 30
"""Below this many judged rows a verification ratio is named as resting on few rows."""


def _judged(est: Any, label: str) -> str | None:
    """How many validation rows the verification ratios rest on, when the rule did not
    judge them all."""
    pair = getattr(est, "judged_rows_", None)
    if pair is None:
        return None
    judged, rows = pair
    rules = fitted_param(est, "rules")
    return judged_line(rules, judged, rows, f"{label} rows", getattr(est, "encoder_", None))


def _unjudged_reasons(rules: Any, encoder: TableEncoder | None) -> list[str]:
    """Why a rule of `rules` may leave a row unjudged, given the columns it acts on: a
    threshold not crossed, a missing value, a relative perturbation of a value of 0.

    >>> from deepctrl.rules import Monotonic, Relative
    >>> import pandas as pd
    >>> enc = TableEncoder.fit(pd.DataFrame({"promo": [0, 1, 1]}))
    >>> _unjudged_reasons(Monotonic("promo", "decreasing", perturbation=Relative(0.1)), enc)
    ['a relative perturbation does not move a value of 0']
    """
    reasons = []
    for leaf in leaves_and_weights(rules)[0]:
        if isinstance(leaf, Threshold):
            reasons.append(
                "a threshold rule judges only the rows whose perturbation crosses its threshold"
            )
        if not isinstance(leaf, Monotonic | Threshold) or encoder is None:
            continue
        try:
            col = encoder.column(leaf.feature)
        except ValueError:
            continue
        if col.indicator:
            reasons.append("a row whose ruled feature is missing is not judged")
        if isinstance(leaf.given_perturbation, Relative) and col.low <= 0 <= col.high:
            reasons.append("a relative perturbation does not move a value of 0")
    return list(dict.fromkeys(reasons))


def judged_line(
    rules: Any, judged: int, rows: int, what: str = "rows", encoder: TableEncoder | None = None
) -> str | None:
    """How many of `rows` the verification ratios rest on, None when the rule judged them
    all, with why a row may go unjudged (a threshold rule judges only the rows whose
    perturbation crosses its threshold; with the fitted `encoder`, also a missing value or
    a relative perturbation of 0).

    >>> from deepctrl.rules import Threshold
    >>> judged_line(Threshold("stops", 1.5), 12, 120).split(" (")[0]
    'verification judged on 12 of 120 rows'
    """
    if judged == rows:
        return None
    reasons = _unjudged_reasons(rules, encoder)
    why = "; ".join(reasons) or "a row whose ruled feature is missing is not judged"
    if judged == 0:
        return f"the rule judged none of the {rows} {what} ({why}): no ratio to go by"
    few = "; a ratio over so few rows is a weak guarantee" if judged < FEW_JUDGED else ""
    return f"verification judged on {judged} of {rows} {what} ({why}){few}"


def _set_by(est: Any) -> str:
    """Why the alpha `predict` uses is not the default one."""
    if est.alpha == "min_error" and est.alpha_ == est.min_error_alpha_:
        return "alpha='min_error'"
    if not isinstance(est.alpha, str) and est.alpha_ == float(est.alpha):
        return f"alpha={est.alpha!r}"
    return "chosen by select_alpha"
