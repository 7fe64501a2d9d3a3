"""Checking the columns of a table as read by
[read_table][deepctrl.cli.table_reading.read_table], with one clear line for every problem:
text among numbers or dates and infinities (an error naming the first such line, or those
rows dropped), rows without a target; the feature columns a model does without (empty ones,
identifiers); a target or a code column read as the file writes it.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.plain_numbers import numbers_or_nan
from deepctrl.cli.table_layout import layout, line_of
from deepctrl.cli.table_reading import PARQUET_SUFFIXES, text_columns
from deepctrl.tabular.cell_values import category_key, is_missing_text
from deepctrl.tabular.column_kinds import CATEGORICAL, column_kind, reading_hint
from deepctrl.tabular.date_columns import date_text_rows
from deepctrl.tabular.table_messages import shown


def as_categories(series: pd.Series) -> pd.Series:
    """A column as categories spelled as text (whole numbers without a decimal point, as a
    model matches them at prediction), missing values kept.

    >>> as_categories(pd.Series([1.0, None, 2.5])).tolist()
    ['1', None, '2.5']
    """
    return pd.Series(
        [category_key(v) for v in series], index=series.index, name=series.name, dtype=object
    )


def _has_date_text(series: pd.Series, may_be_dates: bool) -> bool:
    """Whether a column may hold dates written as text (not numbers, booleans or parsed
    dates)."""
    return may_be_dates and (
        pd.api.types.is_object_dtype(series.dtype) or pd.api.types.is_string_dtype(series.dtype)
    )


def _plain_numbers(series: pd.Series) -> bool:
    """Whether pandas read a column as numbers (not booleans)."""
    dtype = series.dtype
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _mostly(rows: np.ndarray, missing: np.ndarray) -> bool:
    """Whether ``rows`` are at least half of the rows with a value."""
    return bool(rows.sum() >= 0.5 * (~missing).sum())


def _decimal_comma(value: Any) -> bool:
    """Whether ``value`` is a number written with a decimal comma, not one grouped in
    thousands (which a comma file's column of numbers reads).

    >>> _decimal_comma("2,5"), _decimal_comma("0,436"), _decimal_comma("2,642")
    (True, True, False)
    """
    text = str(value).strip()
    return bool(re.fullmatch(r"[-+]?\d+,\d+", text)) and not re.fullmatch(
        r"[-+]?[1-9]\d{0,2}(,\d{3})+", text
    )


def row_lines(rows: np.ndarray, path: Path) -> str:
    """'line 5' of the first bad row of a CSV file (see :func:`line_of`), or 'row 4' of a
    Parquet file."""
    first = int(rows[0])
    if path.suffix.lower() in PARQUET_SUFFIXES:
        return f"row {first}"
    return f"line {line_of(path, first)}"


def weight_text(
    path: Path, name: str, rows: np.ndarray, total: int, first: Any, drops: bool
) -> str:
    """The error for text in ``rows`` of a weight column (``first``, the first row's
    value), naming its line, and ``--drop-missing`` where it ``drops`` those rows."""
    return (
        f"{path}: weight column {name!r} has text in {len(rows)} of {total} rows "
        f"({row_lines(rows, path)}: {first!r}); every row needs a weight >= 0: correct "
        + ("those rows, or use --drop-missing to drop them" if drops else "or drop those rows")
    )


IDENTIFIER_ROWS = 50
"""From this many rows, a text column with a different value in every row is an identifier."""
IDENTIFIER_SAMPLE = 1000
"""How many of a column's values tell whether it holds numbers or dates in a form not read as
such (``(5,82)``, ``20 kg``, ``May 21, 2024``), which the model warns of instead of leaving
the column out as an identifier."""
IDENTIFIER = "an identifier column, left out"
EMPTY = "an empty column, left out"
"""What a rule naming a column :func:`left_out_columns` left out is told."""


def left_out_columns(
    frame: pd.DataFrame, features: Sequence[str], path: Path, categorical: Sequence[str] = ()
) -> dict[str, str]:
    """The ``features`` a model does without, and why, with a note for each: columns with
    no value at all (nothing to learn from), and text columns that hold a different value in
    every row (an order number, a customer id: one-hot, each would be one input per row that
    no new row matches, and slow to train), unless named in ``categorical`` or written as
    numbers or dates (``(5,82)``, ``20 kg``, ``May 21, 2024``, which fitting warns are not
    read as such).

    >>> rows = pd.DataFrame({"order": [f"A{i}" for i in range(60)], "x": range(60)})
    >>> rows["note"] = None
    >>> left_out_columns(rows, ["order", "x", "note"], Path("t.csv"))
    {'order': 'an identifier column, left out', 'note': 'an empty column, left out'}
    """
    left_out = {}
    for name in features:
        series = frame[name]
        present = int(series.notna().sum())
        if present == 0:
            print(f"note: {path}: left out column {name!r}, which has no values", file=sys.stderr)
            left_out[name] = EMPTY
        elif (
            name not in categorical
            and present >= IDENTIFIER_ROWS
            and column_kind(series) == CATEGORICAL
            and not isinstance(series.dtype, pd.CategoricalDtype)
            and series.nunique(dropna=True) == present
            and not _mostly(date_text_rows(series)[0], series.isna().to_numpy())
            and not _mostly(numbers_or_nan(series).notna().to_numpy(), series.isna().to_numpy())
            and reading_hint(name, series.dropna().unique()[:IDENTIFIER_SAMPLE]) is None
        ):
            print(
                f"note: {path}: left out column {name!r}, which holds a different value in "
                f"every row (an identifier); --id-column {shlex.quote(name)} says so and "
                "silences this note",
                file=sys.stderr,
            )
            left_out[name] = IDENTIFIER
        else:
            _note_kept(series, name, path, present)
    return left_out


def _note_kept(series: pd.Series, name: str, path: Path, present: int) -> None:
    """Notes on a column the model keeps but may not want: one value in every row (nothing
    to learn from; a column of one value and missing ones tells them apart), whole numbers
    that are dates written YYYYMMDD, or a different whole number in every row (a customer
    number?)."""
    if present == len(series) and present >= 2 and _one_value(series):
        print(
            f"note: {path}: column {name!r} holds one value in every row "
            f"({shown(series.iloc[0])}), from which the model learns nothing",
            file=sys.stderr,
        )
    elif present >= 2 and _compact_dates(series):
        print(
            f"note: {path}: column {name!r} holds whole numbers that look like dates written "
            f"YYYYMMDD ({int(series.dropna().iloc[0])}), which the model reads as numbers; "
            "written YYYY-MM-DD (2024-05-31) they are read as dates",
            file=sys.stderr,
        )
    elif (
        present >= IDENTIFIER_ROWS
        and pd.api.types.is_integer_dtype(series.dtype)
        and series.nunique(dropna=True) == present
    ):
        print(
            f"note: {path}: column {name!r} holds a different whole number in every row; if "
            f"it identifies rows, --id-column {shlex.quote(name)} leaves it out (the model "
            "reads it as a number)",
            file=sys.stderr,
        )


def _one_value(series: pd.Series) -> bool:
    """Whether a column's present values are all one value (numbers compared by their
    range, which needs no hashing of a million values).

    >>> _one_value(pd.Series([2.5, 2.5, None])), _one_value(pd.Series(["a", "b"]))
    (True, False)
    """
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return bool(series.min() == series.max())
    return bool(series.nunique(dropna=True) == 1)


def _compact_dates(series: pd.Series) -> bool:
    """Whether every value of a number column is a whole number that is a date written
    YYYYMMDD, from 1900 to 2100.

    >>> _compact_dates(pd.Series([20240531, 19991231, None]))
    True
    >>> _compact_dates(pd.Series([20240531, 20240231])), _compact_dates(pd.Series([1.5]))
    (False, False)
    >>> _compact_dates(pd.Series([None, None], dtype="Int64"))
    False
    >>> _compact_dates(pd.Series([0.5, 1.0], dtype=np.float16))  # no overflow warning
    False
    """
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series):
        return False
    low, high = series.min(), series.max()  # before the slow part; float16 holds no 19000101
    if pd.isna(low) or not (float(low) >= 19000101 and float(high) <= 21001231):
        return False
    values = pd.Series(series.dropna().unique())
    if (values % 1).any():
        return False
    text = values.astype(np.int64).astype(str)
    return bool(pd.to_datetime(text, format="%Y%m%d", errors="coerce").notna().all())


FLOAT32_MAX = float(np.finfo(np.float32).max)
"""The largest number a model computes with; beyond it, a value is infinite to the model."""


def _infinite_rows(series: pd.Series, name: str, path: Path, drop: bool, hint: bool) -> np.ndarray:
    """The rows of a number column holding an infinity ("inf" in a CSV file) or a number
    beyond float32's range (which the model computes in), to drop with ``drop``; without it,
    an error naming the first."""
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        return np.zeros(len(series), dtype=bool)
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    with np.errstate(invalid="ignore"):
        infinite = np.abs(values) > FLOAT32_MAX
    if infinite.any() and not drop:
        rows = np.flatnonzero(infinite)
        first = float(values[rows[0]])
        what, fix = (
            ("an infinite value", "leave unknown values empty")
            if np.isinf(first)
            else ("a number too large for float32 (±3.4e38)", "correct it or leave it empty")
        )
        raise ValueError(
            f"{path}: column {name!r} has {what} in {len(rows)} of {len(series)} "
            f"rows ({row_lines(rows, path)}: {first}); {fix}"
            + ("; use --drop-missing to drop those rows" if hint else "")
        )
    return infinite


_LEADING_ZERO = re.compile(r"0\d+")
_IN_PARENTHESES = re.compile(r"\([^()]*\d[^()]*\)")
"""A number in parentheses, as accounting writes a negative: ``($202.43)``."""


def _as_written(series: pd.Series, text: pd.Series, codes: bool = False) -> pd.Series:
    """A target column as pandas read it, or its ``text`` as written in the file where that
    reads it better: a column of text labels keeps "None", "NA" or "null" as labels (only an
    empty field, or one of spaces, is missing), and whole numbers written with a leading zero
    ("007") stay text, as class codes. For ``codes`` (a ``--categorical`` column) one such
    number reads the whole column as written, beside "2.5" too, so that a file to score
    finds "007" by its text."""
    text = text.str.strip()
    if _plain_numbers(series):
        written = text[text != ""]
        padded = written.str.fullmatch(_LEADING_ZERO).any()
        if padded and (codes or written.str.fullmatch(r"\d+").all()):
            return text.where(text != "", None)
        return series
    present = series.dropna()
    if len(present) and all(isinstance(v, str) for v in present):
        return series.where(series.notna(), text.where(text != "", None))
    return series


def _padded(series: pd.Series) -> bool:
    """Whether a column holds text of a whole number written with a leading zero ("007").

    >>> _padded(pd.Series(["007", "10"], dtype=object)), _padded(pd.Series([7, 10]))
    (True, False)
    """
    text = series.map(lambda v: v.strip() if isinstance(v, str) else "")
    return bool(text.str.fullmatch(_LEADING_ZERO).any())


def read_targets(
    frame: pd.DataFrame, path: Path, targets: Sequence[str], codes: bool = False
) -> pd.DataFrame:
    """``frame`` (changed in place) with its ``targets`` (or with ``codes``, its
    ``--categorical`` columns) read from a CSV file at ``path`` as :func:`_as_written`
    says; a Parquet file's as they are."""
    if not targets or path.suffix.lower() in PARQUET_SUFFIXES:
        return frame
    text = text_columns(path, frame, targets)
    for name in targets:
        frame[name] = _as_written(frame[name], text[name].set_axis(frame.index), codes)
    return frame


def clean_columns(
    frame: pd.DataFrame,
    columns: Sequence[str],
    path: Path,
    drop: bool,
    hint: bool = True,
    targets: Sequence[str] = (),
    categorical: Sequence[str] = (),
    dates: Sequence[str] | None = None,
    weights: Sequence[str] = (),
) -> pd.DataFrame:
    """Check ``columns`` for text in mostly-numeric columns and for values that are not
    dates in date columns (an error naming the first such line, or with ``drop`` those rows
    are dropped); ``categorical`` columns hold categories, numbers and text alike, and are
    not checked; ``weights`` columns (``--weight-column``) hold numbers, whatever the
    error for text in them says. The date columns are ``dates`` (a model's, whose other
    columns are then numbers or categories), or when None the text columns whose values are
    mostly ISO 8601 dates (and a number column is one whose values are mostly numbers).
    Missing values stay (the model imputes them), unless ``drop`` is set; rows whose
    ``targets`` are missing are always dropped, saying how many, and a target of whole
    numbers stays whole once they are."""
    frame = frame.copy(deep=False)  # columns are replaced, never written into
    frame = read_targets(frame, path, targets)
    bad = np.zeros(len(frame), dtype=bool)
    for name in columns:
        series = frame[name]
        missing = series.isna().to_numpy()
        read_as_dates = False
        if dates is not None and name in dates and _plain_numbers(series) and (~missing).any():
            rows = np.flatnonzero(~missing)
            first = str(series.iloc[rows[0]])
            raise ValueError(
                f"{path}: column {name!r} holds dates, but numbers in {len(rows)} of "
                f"{len(frame)} rows ({row_lines(rows, path)}: {first!r}); write dates as "
                "YYYY-MM-DD (a spreadsheet's day numbers are not read as dates)"
            )
        if name not in categorical and _has_date_text(series, dates is None or name in dates):
            dated, other = date_text_rows(series)
            read_as_dates = dates is not None or _mostly(dated, missing)
            if read_as_dates and other.any():
                rows = np.flatnonzero(other)
                if not drop:
                    raise ValueError(
                        f"{path}: column {name!r} holds dates, but a value that is not an "
                        f"ISO 8601 date in {len(rows)} of {len(frame)} rows "
                        f"({row_lines(rows, path)}: {series.iloc[rows[0]]!r}); write dates as "
                        "YYYY-MM-DD and leave unknown ones empty"
                        + ("; use --drop-missing to drop those rows" if hint else "")
                    )
                frame[name] = series.where(~other, None)
                bad |= other
        if (
            not read_as_dates
            and name not in categorical
            and not pd.api.types.is_numeric_dtype(series.dtype)
            and not pd.api.types.is_bool_dtype(series.dtype)
            and not pd.api.types.is_datetime64_any_dtype(series.dtype)  # Parquet timestamps
        ):
            as_number = numbers_or_nan(series)
            text = as_number.isna().to_numpy() & ~missing
            # a model's number column holds numbers only; in a new table, most values must
            # be numbers for the column to count as one
            known = dates is not None and name not in targets
            if known and series.map(lambda v: isinstance(v, float) and pd.notna(v)).any():
                # the file's reading made numbers of some values: text it left among them
                # (4.25 beside 4,5 in a file of decimal commas) reads no way the file writes
                text |= series.map(lambda v: isinstance(v, str)).to_numpy() & ~missing
            if (
                (~missing).sum()
                and (known or name in weights or as_number.notna().sum() >= 0.5 * (~missing).sum())
                and text.any()
            ):
                rows = np.flatnonzero(text)
                if not drop and name in weights:
                    raise ValueError(
                        weight_text(path, name, rows, len(frame), series.iloc[rows[0]], hint)
                    )
                if not drop:
                    tip = "; use --drop-missing to drop those rows" if hint else ""
                    if hint and dates is None:  # a model's columns have their kinds already
                        tip += (
                            f", or --categorical {shlex.quote(name)} if its values are categories"
                        )
                    first = series.iloc[rows[0]]
                    csv_file = path.suffix.lower() not in PARQUET_SUFFIXES
                    if isinstance(first, str) and _IN_PARENTHESES.fullmatch(first.strip()):
                        # an accounting negative: dropping such rows drops the losses
                        tip = (
                            "; a negative written in parentheses is not read: write it as "
                            f"-{first.strip()[1:-1].strip()}"
                            + (" (--drop-missing would drop exactly these rows)" if hint else "")
                        )
                    elif _decimal_comma(first) and csv_file and layout(path).sep != ";":
                        tip += (
                            "; a decimal comma is read in a semicolon-separated file (or "
                            f"write {str(first).strip().replace(',', '.')})"
                        )
                    raise ValueError(
                        f"{path}: column {name!r} has text in {len(rows)} of "
                        f"{len(frame)} rows ({row_lines(rows, path)}: {first!r}){tip}"
                    )
                frame[name] = as_number
                bad |= text
        bad |= _infinite_rows(frame[name], name, path, drop, hint)
        if name in targets and not pd.api.types.is_numeric_dtype(series.dtype):
            # text of spaces is no label (a column of booleans and blanks, too, is read)
            missing = missing | series.map(is_missing_text).to_numpy(dtype=bool)
        if drop or name in targets:
            bad |= missing
    if bad.any():
        what = (
            "missing values, infinities or text among numbers or dates"
            if drop
            else "a missing target"
        )
        print(f"dropped {int(bad.sum())} of {len(frame)} rows with {what}", file=sys.stderr)
        frame = frame.loc[~bad]
        if len(frame) == 0:
            raise ValueError(f"{path}: no rows left after dropping rows with {what}")
        for name in columns:
            if (
                name not in categorical
                and pd.api.types.is_object_dtype(frame[name].dtype)
                and numbers_or_nan(frame[name]).notna().all()
                and not (name in targets and _padded(frame[name]))  # codes kept as written
            ):
                frame[name] = pd.to_numeric(frame[name])
        for name in targets:
            values = frame[name]
            if pd.api.types.is_float_dtype(values.dtype) and (values % 1 == 0).all():
                frame[name] = values.astype(np.int64)
    return frame
