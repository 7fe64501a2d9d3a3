"""Checks of a table's columns against the command's options: the target column and the
task it makes, the feature, id and weight columns, and the rules against the columns and
classes; each problem a one-line ValueError naming the file, the column and the line.
"""

from __future__ import annotations

import copy
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.plain_numbers import numbers_or_nan
from deepctrl.cli.table_as_written import zero_padded_columns
from deepctrl.cli.table_cleaning import (
    as_categories,
    left_out_columns,
    read_targets,
    row_lines,
    weight_text,
)
from deepctrl.tabular.number_text import NUMBER_LIKE
from deepctrl.tabular.table_messages import listed


def infer_task(
    series: pd.Series, task: str | None, loss: str | None = None
) -> tuple[str, str | None]:
    """The task, given or inferred from the target (with a note saying so): classification
    for text or at most 10 distinct integer values, else regression; numbers of few values
    are a regression too when a regression ``loss`` is given (counts, for the Poisson
    loss)."""
    numeric = pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )
    if task == "regression" and not numeric:
        raise ValueError(
            f"target column {series.name!r} is not numeric, so it cannot be a regression target"
        )
    if task is not None:
        return task, None
    if not numeric:
        chosen = "classification"
        _check_class_count(series)
    else:
        values = series.to_numpy(dtype=np.float64)
        integral = bool(np.all(values == np.round(values)))
        chosen = "classification" if integral and len(np.unique(values)) <= 10 else "regression"
        if chosen == "classification" and loss is not None:
            return "regression", (
                f"task: regression (--loss {loss} is a regression loss; set --task to choose)"
            )
    return chosen, f"task: {chosen} (from target column {series.name!r}; set --task to choose)"


def check_whole_classes(series: pd.Series, task: str) -> None:
    """A classification target of numbers holds whole numbers; else an error counting the
    others.

    >>> check_whole_classes(pd.Series([0.5, 1.0, 2.25], name="sales"),
    ...                     "classification")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: target column 'sales' holds 2 non-integer numbers; classes must be labels ...
    """
    if task != "classification" or not pd.api.types.is_float_dtype(series.dtype):
        return
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    fractional = int(np.sum(values != np.round(values)) - np.isnan(values).sum())
    if fractional:
        raise ValueError(
            f"target column {series.name!r} holds {fractional} non-integer numbers; classes "
            "must be labels or whole numbers (drop --task classification for a regression)"
        )


def _check_class_count(series: pd.Series) -> None:
    """A text target with more distinct values than classes can be (more than 50, and
    more than half of its rows) is an error, saying whether they look like numbers in a form
    the table is not read in (spaces between thousands, a decimal comma in a comma file).

    >>> _check_class_count(pd.Series([f"{i} 000 €" for i in range(100)],
    ...                              name="price"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: target column 'price' has 100 distinct values in 100 rows, too many to be ...
    """
    present = series.dropna().astype(str)
    distinct = present.nunique()
    if distinct <= max(50, len(present) // 2):
        return
    number_like = present.map(lambda v: bool(NUMBER_LIKE.fullmatch(v))).mean() >= 0.9
    raise ValueError(
        f"target column {series.name!r} has {distinct} distinct values in {len(present)} rows, "
        "too many to be classes"
        + (
            f": they look like numbers written in a form not read as numbers "
            f"({present.iloc[0]!r}); write them as plain numbers (1234.5) for a regression, or"
            if number_like
            else ";"
        )
        + " give --task classification to train on them as classes"
    )


def no_column(path: Path | str, what: str, name: str, columns: Sequence[str]) -> str:
    """The message for a ``what`` column ``name`` that ``path`` lacks: its columns, and one
    that is ``name`` but for spaces around it.

    >>> message = no_column("t.csv", "target", "sales", ["price ", " sales"])
    >>> message.split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ["t.csv has no target column 'sales' (columns: 'price ', ' sales')",
     "column ' sales' has spaces around its name"]
    """
    return (
        f"{path} has no {what} column {name!r} (columns: {listed([repr(c) for c in columns])})"
        + spaced([name], columns)
    )


def spaced(names: Sequence[str], columns: Sequence[str]) -> str:
    """A hint for the first of ``names`` that one of ``columns`` is but for spaces around
    it, else "".

    >>> spaced(["sales"], ["price ", "sales "]), spaced(["x"], ["price "])
    ("; column 'sales ' has spaces around its name", '')
    >>> spaced([" sales "], ["sales"])
    "; the name ' sales ' has spaces around it, where the file writes 'sales'"
    """
    for name in names:
        for column in columns:
            if column != name and column.strip() == name.strip():
                if column == column.strip():  # the spaces are in the name looked for
                    return (
                        f"; the name {name!r} has spaces around it, where the file writes "
                        f"{column!r}"
                    )
                return f"; column {column!r} has spaces around its name"
    return ""


def outputs_as_labels(rules: list[Any], target: pd.Series) -> list[Any]:
    """``rules`` with each class named as text (``--rule-class 5``, ``output = "5"``) named
    as the target column holds it (5), as a rule written in Python for the same table names
    it; other rules as given.

    >>> from deepctrl.core.rules import Monotonic
    >>> outputs_as_labels([Monotonic("x", "increasing", output="5")], pd.Series([1, 5]))
    [Monotonic(feature='x', direction='increasing', output=5)]
    """
    from deepctrl.core.rules import AllOf

    labels = {str(v): v for v in target.dropna().unique() if not isinstance(v, str)}

    def relabelled(rule: Any) -> Any:
        if isinstance(rule, AllOf):
            return AllOf.as_stored([relabelled(r) for r in rule.leaves()], rule.weights)
        output = getattr(rule, "output", None)
        if not isinstance(output, str) or output not in labels:
            return rule
        out = copy.copy(rule)
        out.output = labels[output].item() if hasattr(labels[output], "item") else labels[output]
        return out

    return [relabelled(rule) for rule in rules]


def check_count_target(series: pd.Series, path: Path, loss: str | None) -> None:
    """``--loss poisson`` needs a target >= 0: an error naming the first line (CSV) or row
    (Parquet) with a negative value."""
    if loss != "poisson":
        return
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    negative = np.flatnonzero(values < 0)
    if len(negative):
        where = row_lines(np.array([series.index[negative[0]]]), path)
        raise ValueError(
            f"{path}: target column {series.name!r} has a negative value in {len(negative)} of "
            f"{len(values)} rows ({where}: {values[negative[0]]:g}); --loss poisson needs "
            "counts or other values >= 0"
        )


def check_table_rules(
    rules: list[Any],
    features: pd.DataFrame,
    target: pd.Series,
    task: str,
    not_features: dict[str, str] | None = None,
) -> None:
    """The rules' mistakes (columns, classes, contradictions) before anything is printed or
    trained; ``not_features`` says why a column of the file is not a feature ("the
    target"), for a rule that names it."""
    from deepctrl.tabular.model_outputs import Outputs
    from deepctrl.tabular.rule_checks import check_rules
    from deepctrl.tabular.rule_leaves import leaves_and_weights
    from deepctrl.tabular.table_rules import describe

    why = {str(target.name): "the target", **(not_features or {})}
    for leaf in leaves_and_weights(rules)[0]:
        name = getattr(leaf, "feature", None)
        if isinstance(name, str) and name in why and name not in features.columns:
            raise ValueError(
                f"rule {describe(leaf, where=True, key='column')}: {name!r} is {why[name]}, "
                "not a feature"
            )

    outputs = (
        Outputs.classification(sorted(target.unique().tolist()), recoded_hint=False)
        if task == "classification"
        else Outputs.regression([str(target.name)])
    )
    check_rules(rules, features, outputs)


def feature_columns(
    frame: pd.DataFrame,
    features: Sequence[str],
    categorical: Sequence[str],
    path: Path,
    roles: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The ``features`` a model gets, and those left out with why (empty and identifier
    columns, with a note each; an identifier named by ``--categorical`` is kept); the
    ``categorical`` columns ``frame`` then holds as categories. ``roles`` names what the
    columns that are not features are (``{"y": "the target"}``), for the errors."""
    roles = roles or {}
    for name in categorical:
        if name in roles:
            raise ValueError(f"--categorical {name}: {name!r} is {roles[name]}, not a feature")
    # codes 01, 1, 001 stay apart: numeric-looking ones read as written, in one pass, before
    # the notes on the columns kept (three codes are not "one value in every row")
    numeric = [c for c in categorical if c in features and pd.api.types.is_numeric_dtype(frame[c])]
    read_targets(frame, path, numeric, codes=True)
    left_out = left_out_columns(frame, features, path, categorical)
    kept = [c for c in features if c not in left_out]
    numbers = [c for c in kept if c not in categorical]
    for name, value in zero_padded_columns(path, frame, numbers).items():
        print(
            f"note: column {name!r} holds whole numbers written with leading zeros (such as "
            f"{value}), read as numbers; if they are codes, give --categorical "
            f"{shlex.quote(name)}",
            file=sys.stderr,
        )
    for name in categorical:
        if name not in kept:
            why = f" ({left_out[name]})" if name in left_out else ""
            raise ValueError(f"--categorical {name}: {path} has no feature column {name!r}{why}")
    for name in categorical:
        frame[name] = as_categories(frame[name])
    return kept, left_out


def check_weight_column(weights: pd.Series, path: Path, drops: bool = True) -> None:
    """A weight column holds a number >= 0 on every row; else an error naming the first
    line (CSV) or row (Parquet) that does not (and, where ``--drop-missing`` ``drops``
    rows without a weight, saying so)."""
    name = str(weights.name)
    numeric = pd.api.types.is_numeric_dtype(weights) or pd.api.types.is_string_dtype(weights)
    if not numeric or pd.api.types.is_bool_dtype(weights):
        raise ValueError(f"--weight-column {name!r} must hold numbers")
    values = numbers_or_nan(weights).to_numpy()
    text = np.isnan(values) & weights.notna().to_numpy()
    if text.any():
        rows = np.flatnonzero(text)
        first = weights.iloc[rows[0]]
        lines = weights.index.to_numpy()[rows]
        raise ValueError(weight_text(path, name, lines, len(values), first, drops))
    for bad, what in (
        (np.isnan(values), "no weight"),
        (values < 0, "a negative weight"),
        (np.isinf(values), "an infinite weight"),
    ):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            where = row_lines(np.array([weights.index[first]]), path)
            shown_value = "" if what == "no weight" else f": {values[first]:g}"
            raise ValueError(
                f"{path}: weight column {name!r} has {what} in {int(bad.sum())} of "
                f"{len(values)} rows ({where}{shown_value}); every row needs a weight >= 0"
                + (
                    " (--drop-missing drops the rows without one)"
                    if what == "no weight" and drops
                    else ""
                )
            )
    if not (values > 0).any():
        raise ValueError(
            f"{path}: weight column {name!r} is 0 on every row; give some rows a weight above 0"
        )


def id_frame(frame: pd.DataFrame, id_columns: Sequence[str], path: str) -> pd.DataFrame:
    """The ``--id-column`` columns of ``frame``, checked to exist."""
    absent = [c for c in id_columns if c not in frame.columns]
    if absent:
        raise ValueError(no_column(path, "id", absent[0], list(frame.columns)))
    return frame[list(dict.fromkeys(id_columns))]
