"""Is a candidate rule right for a segment of the data? (paper Sec. 4.2)

For every value of a group column, and for all rows together,
[rule_test][deepctrl.tabular.rule_test.rule_test] trains the estimator you configured on
k - 1 folds of the segment's rows (each fold with its own seed), sweeps alpha on the
held-out fold and judges the rule from the k pairs of held-out error and verification curves
([rule_verdict][deepctrl.tabular.rule_verdict]): "consistent", "contradicted" or
"inconclusive", with the reason in words.

Examples:
    >>> import deepctrl as dc
    >>> from deepctrl.tabular.known_truth import known_truth_table
    >>> table = known_truth_table({"a": "follows"}, rows=120, seed=0)
    >>> est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], max_epochs=5,
    ...                            n_seeds=1)
    >>> result = dc.rule_test(est, table[["price", "quality", "season"]], table["sales"],
    ...                       folds=3, progress=False)
    >>> sorted(result.to_dict())
    ['all', 'groups', 'rule', 'target']
"""

from __future__ import annotations

import contextlib
import copy
import warnings
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import clone, is_classifier

from deepctrl.core.inputs import Alphas
from deepctrl.core.rules import AllOf, Monotonic, Rule, Threshold
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine.progress import progress_bar
from deepctrl.tabular.alpha_choice import ALPHA_GRID
from deepctrl.tabular.cell_values import category_key
from deepctrl.tabular.class_labels import lookalike_texts
from deepctrl.tabular.estimator_base import DeepCTRLEstimator
from deepctrl.tabular.frames import as_frame, refuse_lazy, target_names
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.rule_leaves import leaves_and_weights
from deepctrl.tabular.rule_test_result import ALL, RuleTestResult, Segment
from deepctrl.tabular.segment_judging import (
    columns_named_by_rules,
    empty_columns,
    judge_segment,
    no_values,
)
from deepctrl.tabular.table_rules import describe

MIN_ROWS = 50
"""Default: segments with fewer rows are reported as inconclusive without training."""
MAX_GROUPS = 100
"""At most this many segments are trained; more give an error suggesting `min_rows`."""


def _group_labels(groups: Any, n: int) -> pd.Series:
    """The group of each of the `n` rows, as text keys; a column's name is refused."""
    if isinstance(groups, str | bytes):
        raise ValueError(
            f"groups must be one label per row, not a column name: pass the column itself "
            f"(X[{groups!r}]), left out of X to test as deepctrl test-rule --group does"
        )
    values = np.asarray(groups, dtype=object)
    if values.ndim != 1:
        raise ValueError(
            f"groups must be one column, one label per row, got a table of shape "
            f"{values.shape}: pass the column (X['segment'], not X[['segment']])"
        )
    labels = pd.Series(values).reset_index(drop=True)
    if len(labels) != n:
        raise ValueError(f"groups has {len(labels)} values for {n} rows")
    try:
        labels = labels.map(category_key)  # 10.0 read from a file is the group "10"
    except ValueError as exc:  # a date, say
        raise ValueError(
            f"groups holds a value that cannot name a group ({exc}): give the groups as text, "
            "numbers or booleans (dates as text: groups.astype(str))"
        ) from None
    if labels.isna().any():
        raise ValueError(
            f"groups has {int(labels.isna().sum())} missing values; give them a group of "
            "their own (such as 'unknown') or drop those rows"
        )
    if (labels == ALL).any():
        raise ValueError(
            f"groups has the value {ALL!r}, which names all rows together in the results; "
            "rename that group"
        )
    for same in lookalike_texts(labels):
        warnings.warn(
            f"groups {' and '.join(map(repr, same))} differ only in spaces or case, so they "
            "are tested apart: write each group one way to test them together",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    return labels


def _in_order(label: str) -> tuple[int, float, str]:
    """Numbers first, in numeric order, then text in alphabetical order.

    >>> sorted(["10", "north", "2", "-1.5"], key=_in_order)
    ['-1.5', '2', '10', 'north']
    """
    try:
        return 0, float(label), ""
    except ValueError:
        return 1, 0.0, label


SEED_LIMIT = 2**32
"""The seeds of the estimators' folds are below this (NumPy's ``RandomState`` takes no more)."""


def _check(estimator: Any, folds: int, min_rows: int, random_state: Any) -> None:
    if not isinstance(estimator, DeepCTRLEstimator):
        raise ValueError(
            "rule_test needs a DeepCTRLRegressor or DeepCTRLClassifier, got "
            f"{type(estimator).__name__}"
        )
    if not leaves_and_weights(estimator.rules)[0]:
        raise ValueError("the estimator has no rules to test; pass rules=[...]")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ValueError(f"folds must be an integer of at least 2, got {folds!r}")
    if min_rows < 2 * folds:
        raise ValueError(f"min_rows must be at least 2 x folds = {2 * folds}, got {min_rows}")
    top = SEED_LIMIT - folds
    if isinstance(random_state, bool) or not isinstance(random_state, int | np.integer):
        raise ValueError(f"random_state must be a whole number, got {random_state!r}")
    if not 0 <= random_state <= top:
        raise ValueError(
            f"random_state must be from 0 to {top} with {folds} folds (fold k trains with "
            f"seed random_state + k, and seeds stay below 2**32), got {random_state}"
        )


def rule_test(
    estimator: DeepCTRLEstimator,
    X: Any,
    y: Any,
    groups: Any = None,
    *,
    folds: int = 5,
    min_rows: int = MIN_ROWS,
    alphas: Alphas | None = None,
    random_state: int = 0,
    progress: bool = True,
) -> RuleTestResult:
    """Test the rules of an unfitted `estimator` on every segment of `X, y` that
    `groups` defines, and on all rows together.

    Each segment is split into `folds` folds (stratified by class for a classifier); a
    copy of the estimator (seed `random_state + fold`) trains on the others and is swept
    over `alphas` on the held-out fold. Segments with fewer than `min_rows` rows are
    reported as inconclusive without training; see
    [write_rule_test][deepctrl.tabular.rule_test_report.write_rule_test] for the files.

    Args:
        estimator: An unfitted [DeepCTRLRegressor][deepctrl.tabular.estimators.DeepCTRLRegressor]
            or [DeepCTRLClassifier][deepctrl.tabular.estimators.DeepCTRLClassifier] with
            the rules to test.
        X: The table: any table the estimators take (pandas, polars, pyarrow, numpy,
            sparse).
        y: The targets, one row per row of X.
        groups: One label per row, such as a column of the table: the column itself, not
            its name (`deepctrl test-rule --group` takes a name and leaves that column out
            of the models' inputs; leave it out of X for the same test). None tests all
            rows only.
        folds: The number of folds, at least 2.
        min_rows: The fewest rows a segment needs to be trained, at least `2 * folds`.
        alphas: The alphas of the curves, rising from 0 to 1; None is 0 to 1 by 0.05.
        random_state: The seed of the folds; fold k trains with seed `random_state + k`,
            below 2**32.
        progress: Show a progress bar.

    Returns:
        Every segment's verdict, reason, statistics and curves.

    Raises:
        ValueError: When the estimator is not a table estimator or has no rules, `folds` or
            `min_rows` is too small, `random_state` is negative or its folds' seeds would
            reach 2**32, `y` or `groups` does not have one value per row,
            `groups` is a string (a column's name) or has missing values, `alphas` does
            not rise from 0 to 1, no segment has `min_rows` rows, or more than
            [MAX_GROUPS][deepctrl.tabular.rule_test.MAX_GROUPS] segments have them.
    """
    _check(estimator, folds, min_rows, random_state)
    refuse_lazy(X, "X")
    X = as_frame(X).reset_index(drop=True)
    names = target_names(y)  # a polars or pyarrow column's name too
    y = (
        pd.Series(np.asarray(y) if not isinstance(y, pd.Series) else y).reset_index(drop=True)
        if not isinstance(y, pd.DataFrame)
        else y.reset_index(drop=True)
    )
    if isinstance(y, pd.Series) and names is not None and len(names) == 1:
        y = y.rename(names[0])
    if len(y) != len(X):
        raise ValueError(f"y has {len(y)} rows but X has {len(X)}")
    estimator = _classes_named(estimator, y)
    grid = [float(a) for a in (ALPHA_GRID if alphas is None else alphas)]
    if not grid or grid[0] != 0.0 or grid[-1] != 1.0 or sorted(grid) != grid:
        raise ValueError("alphas must rise from 0 to 1")
    labels = _group_labels(groups, len(X)) if groups is not None else None
    sizes = labels.value_counts(sort=False) if labels is not None else pd.Series(dtype=int)
    judged = [str(g) for g, n in sizes.items() if n >= min_rows]
    if len(sizes) > 1 and not judged:
        raise ValueError(
            f"no value of the group column has {min_rows} rows, the fewest a group needs "
            f"(the largest has {int(sizes.max())} of {len(X)}): group more coarsely, "
            "lower min_rows (--min-rows), or test the whole table without groups"
        )
    if len(sizes) == 1:
        warnings.warn(
            f"the group column has one value ({sizes.index[0]!r}), so its group is the "
            "whole table: tested once, as 'all'",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
        sizes = sizes.iloc[:0]
    if len(sizes) > 2 * len(judged) + 10:
        warnings.warn(
            f"the group column has {len(sizes)} values and {len(sizes) - len(judged)} of "
            f"them have fewer than {min_rows} rows, too few to judge: groups should be "
            "categories (a region, a store), not measurements",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    if len(judged) > MAX_GROUPS:
        raise ValueError(
            f"the group column has {len(judged)} values with at least {min_rows} "
            f"rows; a rule test trains {folds} models per value, so at most "
            f"{MAX_GROUPS} are allowed: raise min_rows (--min-rows on the command line) or "
            "group more coarsely"
        )
    with contextlib.closing(
        progress_bar(folds * (len(judged) + 1), "rule test", progress, unit="fit", leave=True)
    ) as bar:
        results: dict[str, Segment] = {}
        metric = ""
        named = columns_named_by_rules(estimator.rules, X.columns)
        for name in sorted(sizes.index, key=_in_order):
            bar.set_postfix_str(f"group {name}")
            mask = (labels == name).to_numpy()
            group = X[mask]
            empty = empty_columns(group)
            ruled_empty = sorted(str(c) for c in empty if str(c) in named)
            if ruled_empty and len(group) >= min_rows:
                results[name] = Segment(len(group), "inconclusive", no_values(ruled_empty))
                bar.update(folds)
                continue
            results[name], m = judge_segment(
                estimator,
                group.drop(columns=empty),  # a discount that one store never gives
                y[mask],
                folds,
                random_state,
                grid,
                min_rows,
                bar,
                f"group {name!r}",
            )
            metric = metric or m
        bar.set_postfix_str(ALL)
        every, m = judge_segment(
            estimator, X, y, folds, random_state, grid, min_rows, bar, "all rows", whole=True
        )
        # the table's log loss names every group's: of two of its classes it is their bce
        metric = m or metric
    leaves, _ = leaves_and_weights(estimator.rules)
    if isinstance(y, pd.DataFrame):
        target = ", ".join(map(str, y.columns))
    else:  # an unnamed target is "y", as the estimators call it
        target = "y" if y.name is None else str(y.name)
    return RuleTestResult(
        " and ".join(describe(r) for r in leaves),
        target,
        metric or m or _metric_before_training(estimator, y),
        grid,
        results,
        every,
        folds,
    )


def _classes_named(estimator: Any, y: Any) -> Any:
    """`estimator` with every feature rule of a classifier that names no class set to the
    class it acts on when fitted on all rows (``classes_[1]`` of two, ``classes_[0]`` of
    more), with a warning: a group without some class would otherwise default to another."""
    leaves, weights = leaves_and_weights(estimator.rules)
    feature_rules = Monotonic | Threshold
    unnamed = [leaf for leaf in leaves if isinstance(leaf, feature_rules) and leaf.output is None]
    if not is_classifier(estimator) or not unnamed or isinstance(y, pd.DataFrame):
        return estimator
    try:  # as the classifier sorts its classes_
        classes = np.unique(pd.Series(np.ravel(y)).dropna().to_numpy()).tolist()
    except TypeError:  # labels of mixed kinds, which the fit refuses
        return estimator
    if len(classes) < 2:
        return estimator
    label = classes[Outputs.classification(classes).find(None)]  # as a fit would choose
    named = [copy.copy(leaf) for leaf in leaves]
    for leaf in named:
        if isinstance(leaf, feature_rules) and leaf.output is None:
            leaf.output = label
    warnings.warn(
        f"{', '.join(describe(leaf) for leaf in unnamed)} names no class, so in every group "
        f"it acts on P({label!r}), the {'second of 2' if len(classes) == 2 else 'first'} of "
        "the table's classes in sorted order; name the class to choose another (output=LABEL; "
        'in a rules file, output = "LABEL")',
        UserWarning,
        stacklevel=outside_stacklevel(),
    )
    given = estimator.rules
    rules: Any = AllOf(named, weights)  # a rule of several weighted leaves, as given
    if isinstance(given, Rule) and not isinstance(given, AllOf):
        rules = named[0]
    elif isinstance(given, list | tuple) and not any(isinstance(r, AllOf) for r in given):
        rules = named
    return clone(estimator).set_params(rules=rules)


def _metric_before_training(estimator: Any, y: Any) -> str:
    """The error metric a fit of `estimator` on target `y` would judge alphas by, for a
    test that trained no segment: the regressor's loss, or the classifier's log loss by
    its number of classes."""
    if not is_classifier(estimator):
        return str(estimator.loss)
    return "cross_entropy" if pd.Series(np.ravel(y)).nunique() > 2 else "bce"
