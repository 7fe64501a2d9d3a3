"""How a rule test judges one segment of the table: a copy of the estimator trained on
each fold's other rows and swept on the fold, the verdict from those held-out curves, and
the segments not judged because a column the rules name has no values in them."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier
from sklearn.model_selection import KFold
from sklearn.utils.multiclass import type_of_target

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.class_labels import stratified_folds
from deepctrl.tabular.class_predictions import WEIGHTS_HINT
from deepctrl.tabular.rule_checks import ruled_columns
from deepctrl.tabular.rule_leaves import leaves_and_weights
from deepctrl.tabular.rule_test_result import Segment
from deepctrl.tabular.rule_verdict import judge, segment_statistics, too_few_rows
from deepctrl.tabular.table_rules import Expression


def _fold_curves(
    estimator: Any,
    X: pd.DataFrame,
    y: pd.Series,
    folds: int,
    seed: int,
    alphas: list[float],
    bar: Any,
    segment: str,
) -> tuple[np.ndarray, np.ndarray, list[int], str]:
    """Held-out error and verification curves (folds x alphas), the held-out rows the rule
    judged in each fold, and the error's name; the
    warnings of the fits and sweeps are raised again once each, naming ``segment`` and the
    folds that gave them (a "training range" there is a fold's, not the table's)."""
    errors, ratios, judged, metric = [], [], [], ""
    said: dict[tuple[str, type[Warning]], list[int]] = {}
    classes = is_classifier(estimator) and type_of_target(y) in ("binary", "multiclass")
    if classes:  # each fold trains on every class a segment has twice
        splits = stratified_folds(folds, seed, y)
    else:
        splits = list(KFold(folds, shuffle=True, random_state=seed).split(X))
    for fold, (train, held) in enumerate(splits):
        est = clone(estimator).set_params(random_state=seed + fold, verbose=False)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            # the test judges alphas on its held-out folds
            warnings.filterwarnings("ignore", message="the default alpha will be chosen on")
            est.fit(X.iloc[train], y.iloc[train])
            # in the fold's own row order: the stored rule-test studies were made so
            table = est.sweep(X.iloc[held], y.iloc[held], alphas, by_value=False)
        for w in seen:
            # the verdicts compare held-out errors, not predicted classes: no advice to refit
            message = str(w.message).replace(WEIGHTS_HINT, RULE_TEST_NOTE)
            said.setdefault((message, w.category), []).append(fold + 1)
        metric = est.primary_metric
        errors.append(table[metric].to_numpy(float))
        ratios.append(table["verification_ratio"].to_numpy(float))
        judged.append(int(table.attrs["judged_rows"][0]))
        bar.update(1)
    for (message, category), where in said.items():
        which = sorted(set(where))
        folds_text = "fold" + ("s " if len(which) > 1 else " ") + ", ".join(map(str, which))
        warnings.warn(
            f"{segment}, {folds_text} of {folds}: {message}",
            category,
            stacklevel=outside_stacklevel(),
        )
    return np.array(errors), np.array(ratios), judged, metric


RULE_TEST_NOTE = (
    "; the verdicts compare held-out log losses, which do not need the class to be predicted"
)


def columns_named_by_rules(rules: Any, columns: Sequence[Any]) -> set[str]:
    """The columns the rules name: those feature rules raise and those expressions use.

    >>> from deepctrl.tabular.table_rules import Expression
    >>> sorted(columns_named_by_rules([Expression("y >= cost")], ["price", "cost"]))
    ['cost']
    """
    names = {str(c) for c in columns}
    used = {
        name
        for rule in leaves_and_weights(rules)[0]
        if isinstance(rule, Expression)
        for name in rule.comparison.names
    }
    return ruled_columns(rules, list(columns)) | (used & names)


def empty_columns(X: pd.DataFrame) -> list[Any]:
    """The columns without a value in ``X``'s rows (blank text is missing too).

    >>> X = pd.DataFrame({"price": [1.0, 2.0], "discount": [None, None], "note": ["", " "]})
    >>> empty_columns(X)
    ['discount', 'note']
    """
    return [
        c  # stops at a column's first value
        for c in X.columns
        if all(is_missing_text(v) for v in X[c].dropna())
    ]


def no_values(columns: list[str]) -> str:
    """Why a segment whose rule columns are empty is not judged.

    >>> no_values(["cost"])
    "the rule's column 'cost' has no values in this segment"
    """
    named = " and ".join(map(repr, columns))
    if len(columns) > 1:
        return f"the rule's columns {named} have no values in this segment"
    return f"the rule's column {named} has no values in this segment"


def judge_segment(
    estimator: Any,
    X: pd.DataFrame,
    y: pd.Series,
    folds: int,
    seed: int,
    alphas: list[float],
    min_rows: int,
    bar: Any,
    segment: str,
    whole: bool = False,
) -> tuple[Segment, str]:
    """The segment's verdict; a segment that cannot be trained on is inconclusive, but the
    ``whole`` table's failure is the caller's mistake (a continuous target read as classes,
    say) and raises."""
    if len(X) < min_rows:
        verdict, reason = too_few_rows(len(X), min_rows)
        return Segment(len(X), verdict, reason), ""
    try:
        errors, ratios, judged, metric = _fold_curves(
            estimator, X, y, folds, seed, alphas, bar, segment
        )
    except ValueError as exc:  # e.g. a classifier's fold with one class
        if whole:
            raise ValueError(f"could not train on the whole table: {exc}") from None
        return Segment(len(X), "inconclusive", f"could not train on this segment: {exc}"), ""
    stats = segment_statistics(errors, ratios, alphas, judged)
    verdict, reason = judge(stats)
    return Segment(len(X), verdict, reason, stats, errors, ratios), metric
