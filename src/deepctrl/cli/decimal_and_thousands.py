"""Numbers a CSV file writes with a decimal comma ("1,5") or with commas or dots between
thousands ("1,234.5", "1.234,5"), for [read_table][deepctrl.cli.table_reading.read_table]:
which the dots of a semicolon file are, and the columns read as numbers.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Collection, Mapping

import numpy as np
import pandas as pd

from deepctrl.cli.column_patterns import ColumnPattern, contains, holds, text_dtype
from deepctrl.cli.plain_numbers import partly_numbers, to_numbers

_DECIMAL_COMMA = ColumnPattern(  # "1,31E-05" too, as spreadsheets write small numbers
    r"\s*[-+]?\d*,\d+(?:[eE][-+]?\d+)?\s*|\s*[-+]?\d+(?:[eE][-+]?\d+)?\s*"
)
_DOT_GROUPED = ColumnPattern(r"\s*[-+]?[1-9]\d{0,2}(\.\d{3})+(,\d+)?\s*")
_DIGIT_COMMA = ColumnPattern(r"\d,\d")


def writes_decimal_commas(text: pd.Series) -> bool:
    """Whether a column of text holds a decimal comma (a digit, a comma, a digit)."""
    return holds(text, ",") and bool(_DIGIT_COMMA.search(text.astype("string")).any())


def decimal_commas(frame: pd.DataFrame, known: Collection[str] = ()) -> pd.DataFrame:
    """Text columns of numbers written with a decimal comma (as semicolon-separated files
    from spreadsheets in many locales write them) as numbers; values of such a column that
    are no numbers ("Summe") stay text when most are numbers (or any, in the ``known``
    number columns of a model), for :func:`clean_columns
    <deepctrl.cli.table_cleaning.clean_columns>` to name. A column where some values group their
    thousands with dots ("1.850,46" beside "926,59", as price lists write them) is left
    for :func:`thousands`, which reads both.

    >>> frame = pd.DataFrame({"p": ["1,5", "-2", None], "c": ["a", "1,5", "2"]})
    >>> decimal_commas(frame).p.tolist()
    [1.5, -2.0, nan]
    >>> decimal_commas(pd.DataFrame({"p": ["2,5", "3,75", "Summe"]})).p.tolist()
    [2.5, 3.75, 'Summe']
    >>> decimal_commas(pd.DataFrame({"c": ["0,25", "1,31E-05", "2E3"]})).c.tolist()
    [0.25, 1.31e-05, 2000.0]
    """
    for name in frame.columns:
        series = frame[name]
        if not text_dtype(series):
            continue
        text = series.astype("string")
        if not holds(text, ","):
            continue  # no comma: nothing to read here (most text columns end here)
        is_number = _DECIMAL_COMMA.fullmatch(text)
        if not (is_number & contains(text, ",")).any():
            continue
        if _DOT_GROUPED.fullmatch(text).any():
            continue  # "1.850,46" beside "926,59": thousands() reads the column
        numbers = text.where(is_number).str.strip().str.replace(",", ".", regex=False)
        numbers = to_numbers(numbers, "coerce", shaped=True)
        column = partly_numbers(series, numbers, name in known)
        if column is not None:
            frame[name] = column
    return frame


_GROUPED = {  # separator of the file -> (thousands grouping, decimal mark) of its numbers
    ",": (",", "."),
    "\t": (",", "."),
    ";": (".", ","),
}
THOUSANDS = "thousands"
"""How a semicolon file writes a column's dots: between thousands (``1.927`` is 1927)."""
DECIMAL = "decimal"
"""How a semicolon file writes a column's dots: as decimal points (``10.482``)."""
_POINT_DECIMALS = ColumnPattern(r"[-+]?\d*\.(\d{1,2}|\d{4,})")


def may_be_grouped(series: pd.Series) -> bool:
    """Whether a column pandas read as numbers from a semicolon file may hold whole numbers
    written with dots between thousands ("1.927", read as 1.927), which only the file's text
    tells: not where a value shows that the column holds none (a value that is neither
    whole nor, from 1 to 999, a multiple of 0.001; an infinity; no value from 1 to 999),
    nor in a column of whole numbers or booleans.

    >>> may_be_grouped(pd.Series([1.927, 850.0])), may_be_grouped(pd.Series([1.5, 2000.25]))
    (True, False)
    """
    if not pd.api.types.is_float_dtype(series.dtype):
        return False
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[~np.isnan(values)]
    if np.isinf(values).any():
        return False
    size = np.abs(values)
    between = (size >= 0.999) & (size <= 1000.001)
    thousandths = np.abs(values * 1000 - np.round(values * 1000)) < 1e-6
    whole = values == np.round(values)
    return bool(between.any() and (whole | (between & thousandths)).all())


def thousands(
    frame: pd.DataFrame,
    sep: str,
    raw: pd.DataFrame | None = None,
    comma_decimals: bool = False,
    ranges: dict[str, tuple[float, float]] | None = None,
    dots: Mapping[str, str] | None = None,
    seen: dict[str, str] | None = None,
) -> pd.DataFrame:
    """Columns of numbers, some written with thousands separators ("1,234.5" in a comma
    file, "1.234,5" in a semicolon file), as numbers, with a note; values of such a column
    that are no numbers ("unknown", a "Total" row) stay text when most are numbers, for
    :func:`clean_columns <deepctrl.cli.table_cleaning.clean_columns>` to name. A number whose
    first group is 0 ("0,436") is not grouped. ``raw``, the columns pandas read as numbers
    that :func:`may_be_grouped` as the file writes them, lets those be checked too: in a
    semicolon file pandas reads the grouped whole number "1.927" as 1.927, yet a column
    written like it may hold three decimals (see :func:`_dots_group`, which
    ``comma_decimals``, whether the file writes decimals with commas, ``ranges``, a
    model's training range per column, and ``dots``, how its training file wrote a
    column's dots, :data:`THOUSANDS` or :data:`DECIMAL`, help decide). ``seen``, when
    given, gets how the dots of each column they were weighed in were read.

    >>> read = thousands(pd.DataFrame({"n": ["1,234", "56", None, "Total"]}), ",").n
    >>> read[[0, 1, 3]].tolist(), bool(pd.isna(read[2]))
    ([1234.0, 56.0, 'Total'], True)
    >>> german = pd.DataFrame({"sqft": [1.927, 850.0]})
    >>> raw = pd.DataFrame({"sqft": ["1.927", "850"]})
    >>> thousands(german, ";", raw, comma_decimals=True).sqft.tolist()
    [1927.0, 850.0]
    """
    ranges, dots, seen = ranges or {}, dots or {}, {} if seen is None else seen
    group, mark = _GROUPED.get(sep, (",", "."))
    g, m = re.escape(group), re.escape(mark)
    number = ColumnPattern(rf"[-+]?[1-9]\d{{0,2}}({g}\d{{3}})+({m}\d+)?|[-+]?\d+({m}\d+)?")
    for name in frame.columns:
        series = frame[name]
        # read by pandas, and may be grouped (the others are not: see may_be_grouped)
        read = raw is not None and name in raw.columns and pd.api.types.is_numeric_dtype(series)
        if not (read or text_dtype(series)):
            continue
        if not read and pd.api.types.infer_dtype(series, skipna=True) != "string":
            continue  # numbers among text, read already (decimal commas)
        text = (raw[name] if raw is not None and read else series).astype("string")
        if not holds(text, group):
            continue  # no value grouped (most columns end here)
        has_group = contains(text, group)
        text = text.str.strip()
        trained = dots.get(name) if mark == "," else None
        if mark == "," and trained != THOUSANDS and _POINT_DECIMALS.fullmatch(text).any():
            seen[name] = DECIMAL
            continue  # "1.25" beside "2.125": the column's dots are decimal points
        is_number = number.fullmatch(text)
        is_grouped = is_number & has_group  # a plain number holds no grouping
        present = int(text.notna().sum())
        # pandas read all; else most, or any in a model's number column (or where its
        # training file grouped the column: "1.25" beside "3.789" says nothing of it)
        if trained == THOUSANDS or (name in ranges and not read):
            needed = 1
        else:
            needed = present if read else present // 2 + 1
        if not is_grouped.any() or is_number.sum() < needed:
            continue
        first = text.iloc[int(is_grouped.argmax())]
        if mark == "," and not _dots_group(
            text[is_number], comma_decimals, ranges.get(name), trained
        ):
            _note_decimals(name, first, trained is not None)
            seen[name] = DECIMAL
            continue
        numbers = text.where(is_number).str.replace(group, "", regex=False)
        numbers = to_numbers(numbers.str.replace(mark, ".", regex=False), shaped=True)
        frame[name] = partly_numbers(series, numbers, name in ranges)
        if mark == ",":
            seen[name] = THOUSANDS
        print(
            f"note: read column {name!r} as numbers written with thousands separators ({first!r})",
            file=sys.stderr,
        )
    return frame


_DOTS_GROUP = ColumnPattern(r"[-+]?\d{1,3}(\.\d{3}){2,}(,\d+)?")


def _dots_group(
    numbers: pd.Series,
    comma_decimals: bool,
    trained: tuple[float, float] | None,
    written: str | None = None,
) -> bool:
    """Whether the dots of a semicolon file's column of numbers separate thousands. A value
    with two of them (1.003.500) says so; so does ``written``, how a model's training file
    wrote the column (:data:`THOUSANDS` or :data:`DECIMAL`), which a file to score is read
    as, whatever its other rows and columns hold; and so does a file that writes its
    decimals with commas. Otherwise "1.927" may as well be a decimal point before three
    digits, as programs write numbers (pandas reads it so), unless a model's training values
    of the column (``trained``: lowest, highest) take it as thousands, as a file without a
    decimal comma to tell, a single row to predict say, must be read as the model was.

    >>> _dots_group(pd.Series(["10.482", "29.631"], dtype="string"), False, None)
    False
    >>> _dots_group(pd.Series(["1.927", "850"], dtype="string"), True, None)
    True
    >>> _dots_group(pd.Series(["1.200"], dtype="string"), False, (850.0, 2100.0))
    True
    >>> _dots_group(pd.Series(["3.789"], dtype="string"), False, (1.0, 5000.0), THOUSANDS)
    True
    """
    if _DOTS_GROUP.fullmatch(numbers).any():
        return True
    if written is not None:
        return written == THOUSANDS
    if comma_decimals:
        return True
    if trained is None:
        return False
    low, high = trained
    grouped = pd.to_numeric(numbers.str.replace(".", "", regex=False), errors="coerce")
    median = float(grouped.median())
    return low / 2 <= median <= 2 * high and not low / 2 <= median / 1000 <= 2 * high


def _note_decimals(name: str, first: str, trained: bool = False) -> None:
    """The note for a column :func:`_dots_group` leaves with decimal points (``trained``:
    as a model's training file wrote them)."""
    why = (
        "as the model's training file wrote them"
        if trained
        else "dots separate thousands in a semicolon file that writes its decimals with "
        "commas, or where a value has two (1.003.500)"
    )
    print(
        f"note: read column {name!r} with decimal points ({first!r} as {float(first)}, not "
        f"{first.replace('.', '')}): {why}",
        file=sys.stderr,
    )
