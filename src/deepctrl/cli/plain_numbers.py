"""Columns of numbers written plainly as text, read as floats: by pyarrow as pandas reads
them where every value is a plain number, else by pandas; and a column partly read as
numbers, its other values kept as text.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from deepctrl.cli.column_patterns import arrow_array, text_bytes

_PLAIN_BYTES = np.zeros(256, dtype=bool)
_PLAIN_BYTES[list(b"0123456789+-.")] = True


_PLAIN_NUMBER = r"^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)\z"
"""A number pyarrow and pandas both parse to the nearest float, in RE2: no exponent, no
space, up to 15 digits (checked by its length)."""


def _parsed(text: pd.Series, shaped: bool = False) -> np.ndarray | None:
    """A column of text as floats, parsed by pyarrow as pandas parses it, where every value
    is a plain number of up to 15 digits (``-0`` among whole numbers is 0, as pandas reads
    it); None where a value is not, or without pyarrow. ``shaped`` says each value is one
    as ``re`` reads digits and spaces, so that values of 0-9, signs and points are."""
    arrow = arrow_array(text)
    if arrow is None or arrow.null_count == len(arrow):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    if shaped:
        data = text_bytes(text)
        plain = data is not None and bool(_PLAIN_BYTES[np.frombuffer(data, np.uint8)].all())
    else:
        plain = bool(pc.all(pc.match_substring_regex(arrow, _PLAIN_NUMBER)).as_py())
    if not plain or pc.max(pc.binary_length(arrow)).as_py() > 15:
        return None
    try:
        values = np.array(pc.cast(arrow, pa.float64()).to_numpy(zero_copy_only=False))
    except pa.ArrowInvalid:  # a sign older pyarrow does not parse ("+8" in 12): pandas reads it
        return None
    if not pc.any(pc.match_substring(arrow, ".")).as_py():
        values[values == 0] = 0.0
    return values


def to_numbers(text: pd.Series, errors: str = "raise", shaped: bool = False) -> pd.Series:
    """``pd.to_numeric(text, errors=errors)`` of a column of text, as floats (see
    :func:`_parsed`, which ``shaped`` is passed to).

    >>> to_numbers(pd.Series(["-0", "12", None], dtype="string")).tolist()
    [0.0, 12.0, nan]
    >>> to_numbers(pd.Series(["-0", "1.5", "x"], dtype="string"), errors="coerce").tolist()
    [-0.0, 1.5, nan]
    """
    values = _parsed(text, shaped)
    if values is None:
        values = pd.to_numeric(text, errors=errors).to_numpy(dtype=np.float64, na_value=np.nan)
    return pd.Series(values, index=text.index, name=text.name)


def numbers_or_nan(series: pd.Series) -> pd.Series:
    """``pd.to_numeric(series, errors="coerce")`` as floats, read once per distinct value (a
    column of a few categories over a million rows takes milliseconds, not seconds).

    >>> numbers_or_nan(pd.Series(["1.5", "x", None, "1.5"], dtype=object)).tolist()
    [1.5, nan, nan, 1.5]
    >>> numbers_or_nan(pd.Series([0.0, -0.0, 2.5])).tolist()  # one zero, as distinct values
    [0.0, 0.0, 2.5]
    """
    values: np.ndarray | None = None
    if series.dtype == np.float64:
        values = series.to_numpy(copy=True)
        zero = values == 0
        if zero.any():
            values[zero] = values[zero][0]
    elif isinstance(series.dtype, pd.StringDtype):
        values = _parsed(series.astype("string"))
    if values is None:
        codes, distinct = pd.factorize(series, use_na_sentinel=True)
        numbers = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").to_numpy(
            dtype=np.float64, na_value=np.nan
        )
        values = np.where(
            codes >= 0, numbers[np.maximum(codes, 0)] if len(numbers) else np.nan, np.nan
        )
    return pd.Series(values, index=series.index, name=series.name)


def partly_numbers(text: pd.Series, numbers: pd.Series, known: bool = False) -> pd.Series | None:
    """``text`` with ``numbers`` (NaN where a value reads as none) in place of the values
    they read, the others kept (for :func:`clean_columns
    <deepctrl.cli.table_cleaning.clean_columns>` to name): floats when every value reads, None when
    no more than half do (none, in a column ``known`` to hold numbers: a model's).

    >>> text = pd.Series(["1", "x", None, "3"], dtype=object)
    >>> partly_numbers(text, pd.Series([1.0, None, None, 3.0])).tolist()
    [1.0, 'x', None, 3.0]
    """
    read = numbers.notna().to_numpy()
    present = int(text.notna().sum())
    if not read.any() or (not known and read.sum() * 2 <= present):
        return None
    if read.sum() == present:
        return numbers.astype(float)
    return text.astype(object).where(~read, numbers.astype(object))
