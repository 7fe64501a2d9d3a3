"""Class labels as a classifier reads them: missing labels refused, one type of label,
one class per label however its accents are encoded, and warnings for rare classes and
for labels that differ only in spaces or case."""

from __future__ import annotations

import numbers
import unicodedata
import warnings
from collections import Counter
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import StratifiedKFold
from sklearn.utils.validation import column_or_1d

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.frames import named_table
from deepctrl.tabular.table_messages import shown

RARE_CLASS = 5
"""A class with fewer rows than this is warned about: too few to learn or to validate on."""


def warn_rare_and_lookalike_classes(classes: np.ndarray, counts: np.ndarray, weight: Any) -> None:
    """Warn about classes of fewer than :data:`RARE_CLASS` rows (``counts``: the rows of
    positive weight, per class) and about text labels that
    differ only in surrounding spaces or case (`"yes"`, `" yes"`, `"Yes"`: three classes).

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     labels = np.array(["no", "yes", "yes "])
    ...     warn_rare_and_lookalike_classes(labels, np.array([9, 9, 9]), None)
    >>> print(str(seen[0].message)[:60])
    classes 'yes' and 'yes ' differ only in spaces or case, so t
    """
    n = int(counts.sum())
    for label, count in zip(classes.tolist(), counts.tolist(), strict=True):
        if 0 < count < RARE_CLASS:  # a class of no row is named by the weights' warning
            heavy = (
                f"; with class_weight='balanced' each of its rows weighs as much as "
                f"{n / (len(classes) * count):.0f} average rows"
                if isinstance(weight, str) and weight == "balanced"
                else ""
            )
            warnings.warn(
                f"class {shown(label)} has {count} of {n} rows, too few to learn or to "
                f"validate on{heavy}: merge it into another class or drop its rows",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
    for same in lookalike_texts(classes.tolist()):
        warnings.warn(
            f"classes {' and '.join(map(repr, same))} differ only in spaces or case, so "
            "they are different classes: write each label one way",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )


def lookalike_texts(labels: Iterable[Any]) -> list[list[str]]:
    """The distinct text labels that differ only in surrounding spaces or case, in sets of
    two or more.

    >>> lookalike_texts(["north", "North ", "south", 3, "north"])
    [['north', 'North ']]
    """
    spelled: dict[str, list[str]] = {}
    for label in dict.fromkeys(labels):
        if isinstance(label, str):
            spelled.setdefault(label.strip().casefold(), []).append(label)
    return [same for same in spelled.values() if len(same) > 1]


def class_labels(y: Any, warn: bool = False) -> np.ndarray:
    """Class labels as a 1-D array; a missing label is an error. A pandas nullable column
    (boolean, Int64) without a missing value keeps its labels' type (True, 1), where
    scikit-learn's conversion would make them floats.

    >>> class_labels(pd.Series([True, False], dtype="boolean")).tolist()
    [True, False]
    """
    y = named_table(y)
    if isinstance(y, pd.api.extensions.ExtensionArray):  # a nullable column's .values
        y = pd.Series(y)
    numpy_dtype = getattr(getattr(y, "dtype", None), "numpy_dtype", None)
    if isinstance(y, pd.Series) and numpy_dtype is not None and not y.isna().any():
        y = y.to_numpy(dtype=numpy_dtype)
    labels = column_or_1d(y, warn=warn)
    absent = pd.isna(labels)
    if labels.dtype.kind in "OUS":  # empty text, or spaces only, is missing too
        absent = absent | np.array([is_missing_text(v) for v in labels], dtype=bool)
    missing = np.flatnonzero(absent)
    if len(missing):
        raise ValueError(
            f"y has {len(missing)} missing class label(s) (first at row {missing[0]}; empty "
            "text counts as missing); drop those rows or give them a class"
        )
    return labels


def check_one_label_type(labels: np.ndarray) -> None:
    """Labels mixing numbers and text are an error naming one of each.

    >>> check_one_label_type(np.array([0, "yes"], dtype=object))
    Traceback (most recent call last):
    ...
    ValueError: y mixes numbers and text (such as 0 and 'yes'): give every label one type
    """
    if labels.dtype != object:
        return
    text = next((v for v in labels if isinstance(v, str)), None)
    number = next(
        (v for v in labels if isinstance(v, numbers.Number) and not isinstance(v, bool)), None
    )
    if text is not None and number is not None:
        raise ValueError(
            f"y mixes numbers and text (such as {number!r} and {text!r}): give every label one type"
        )


def one_spelling_per_class(labels: np.ndarray) -> np.ndarray:
    """Text labels that differ only in how their accents are encoded (``ö`` as one
    character, or ``o`` and a combining mark, as macOS writes text) made one class, spelled
    as most of its rows spell it; a warning says which labels were merged. Labels that
    need no merging come back as given.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     merged = one_spelling_per_class(np.array(["K\u00f6ln", "Ko\u0308ln", "K\u00f6ln"]))
    >>> merged.tolist() == ["K\u00f6ln"] * 3, str(seen[0].message)[:52]
    (True, "label 'Köln' is written 2 ways (its accents encoded ")
    """
    if labels.dtype.kind not in "OU":
        return labels
    spellings: dict[str, Counter[str]] = {}
    for value in labels.tolist():
        if isinstance(value, str):
            spellings.setdefault(unicodedata.normalize("NFC", value), Counter())[value] += 1
    mixed = {key: seen for key, seen in spellings.items() if len(seen) > 1}
    if not mixed:
        return labels
    chosen = {}
    for seen in mixed.values():
        kept = max(sorted(seen), key=seen.__getitem__)
        chosen.update(dict.fromkeys(seen, kept))
        warnings.warn(
            f"label {shown(kept)} is written {len(seen)} ways (its accents encoded "
            "differently), which are one class here: every row of them gets this spelling",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    merged = [chosen.get(v, v) if isinstance(v, str) else v for v in labels.tolist()]
    return np.array(merged, dtype=object) if labels.dtype.kind == "O" else np.array(merged)


def stratified_folds(k: int, random_state: int, labels: Any) -> list[tuple[np.ndarray, np.ndarray]]:
    """`k` shuffled (training rows, held-out rows) pairs stratified by class: a class of fewer
    than `k` rows is held out in as many folds as it has rows (without scikit-learn's
    warning about it), the others spread evenly.

    >>> labels = np.asarray(["a", "a", "b", "b", "b", "c"])
    >>> sorted(sorted(labels[held].tolist()) for _, held in stratified_folds(2, 0, labels))
    [['a', 'b', 'b'], ['a', 'b', 'c']]
    """
    labels = np.asarray(labels)
    split = StratifiedKFold(k, shuffle=True, random_state=random_state)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The least populated class")
        return list(split.split(np.zeros(len(labels)), labels))
