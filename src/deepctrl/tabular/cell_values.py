"""Single values of a table: whether one is missing, the cells a column cannot hold, and
categories as plain values, their key text and a column's codes into them."""

from __future__ import annotations

import unicodedata
from typing import Any

import numpy as np
import pandas as pd

Category = str | int | float | bool | None


def is_missing_text(value: Any) -> bool:
    """Whether a table value means "no value": None, NaN, NA, NaT, or text of spaces only.

    >>> [is_missing_text(v) for v in (None, float("nan"), "  ", "a", 0)]
    [True, True, True, False, False]
    """
    return (
        value is None
        or (isinstance(value, str) and value.strip() == "")
        or (isinstance(value, float) and bool(np.isnan(value)))
        or value is pd.NA
        or value is pd.NaT
    )


def _plain(value: Any) -> Category:
    """A category as a plain JSON-friendly Python value (None for a missing value); text
    with its accents composed (Unicode NFC), so that ``Köln`` written with a separate
    accent mark (as macOS may write it) is the same category as ``Köln`` typed in one.

    >>> _plain("Ko\u0308ln") == "K\u00f6ln", _plain(np.int64(3)), _plain("")
    (True, 3, None)
    """
    if is_missing_text(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if not isinstance(value, str | int | float | bool):
        raise ValueError(f"category {value!r} is neither text, a number nor a boolean")
    return value


def plain_all(values: Any, column: Any) -> list[Category]:
    """:func:`_plain` of every value, an error naming the column.

    >>> plain_all([pd.Interval(0, 1)], "age band")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: column 'age band': category Interval(0, 1, ...) is neither text, ...
    """
    try:
        return [_plain(v) for v in values]
    except ValueError as exc:
        raise ValueError(f"column {column!r}: {exc}") from None


def _booleans_as_text(series: pd.Series) -> pd.Series:
    """A mixed column with its booleans as their text: True equals 1 in Python, so the
    boolean True and the number 1 of one column would otherwise be one category.

    >>> _booleans_as_text(pd.Series([True, 1, "a"], dtype=object)).tolist()
    ['True', 1, 'a']
    """
    flags = series.map(lambda v: isinstance(v, bool | np.bool_))
    if not flags.any():
        return series
    return series.where(~flags, series.map(str))


def plain_codes(series: pd.Series) -> tuple[np.ndarray, list[Category]]:
    """Each row's index into the column's distinct values, and those values as plain
    categories (None where missing); :func:`_plain` runs once per distinct value."""
    if pd.api.types.infer_dtype(series, skipna=True).startswith("mixed"):
        series = _booleans_as_text(series)
    try:
        # on the column itself: text columns give no Python string per row
        codes, distinct = pd.factorize(series, use_na_sentinel=False)
    except TypeError:
        raise ValueError(
            f"column {series.name!r} holds values that are neither text nor numbers"
        ) from None
    return np.asarray(codes, dtype=np.int64), plain_all(distinct, series.name)


NESTED = (list, tuple, dict, set, np.ndarray)
"""Cell values a table column cannot hold: each column is one input (or one category)."""


def check_flat(frame: pd.DataFrame, where: str = "X") -> None:
    """A `ValueError` naming the first column whose cells are lists, arrays or records
    (Parquet list and struct columns): a model takes one value per cell.

    >>> check_flat(pd.DataFrame({"tags": [[1, 2], [3]]}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: X: column 'tags' holds lists, not single values; spread them over columns ...
    """
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object:
            continue
        first = column.dropna().head(1)
        if len(first) and isinstance(first.iloc[0], NESTED):
            kind = {dict: "records", np.ndarray: "lists"}.get(type(first.iloc[0]), "lists")
            raise ValueError(
                f"{where}: column {str(name)!r} holds {kind}, not single values; spread them "
                "over columns of their own or leave the column out"
            )


def category_key(value: Any) -> str | None:
    """A table value as category text (None when missing), whole numbers without a decimal
    point: the spelling by which a value read another way (the text "10" from a CSV, the
    number 10 or 10.0 from a frame, "True" beside the boolean True) still finds its
    training category.

    >>> category_key(10.0), category_key("10"), category_key(np.bool_(True)), category_key(" ")
    ('10', '10', 'True', None)
    """
    plain = _plain(value)
    if plain is None:
        return None
    if isinstance(plain, float) and plain.is_integer():
        return str(int(plain))
    return str(plain)


def float_text(value: Any) -> tuple[str, ...]:
    """The text of a number as a float (``str(20.0)``, as ``astype(str)`` writes the number
    20 or 20.0), by which it is found beside its :func:`category_key`; nothing for text or
    a boolean.

    >>> float_text(20), float_text(np.float64(0.5)), float_text(True), float_text("20")
    (('20.0',), ('0.5',), (), ())
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, int | float) and not isinstance(value, bool):
        return (str(float(value)),)
    return ()
