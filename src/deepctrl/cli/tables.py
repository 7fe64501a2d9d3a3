"""Reading the user's table: CSV (comma, semicolon or tab separated, told by the first
lines or a ``sep=`` line; in a semicolon file, numbers may have a decimal comma; numbers may
have thousands separators, a currency sign or code or a percent sign; plain or compressed as
``.gz``, ``.bz2``, ``.xz`` or ``.zip``) or Parquet,
with one clear line for every problem
(missing file, empty file, not text, a column named twice, text in a numeric column, with
the line number). Missing values are kept for the model to impute.
"""

from __future__ import annotations

import lzma
import re
import shlex
import sys
import warnings
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.table_layout import OPENERS, Layout, layout, line_of, nfc, open_binary, workbook
from deepctrl.cli.table_numbers import (
    THOUSANDS,
    decimal_commas,
    dressed_numbers,
    may_be_grouped,
    numbers_or_nan,
    thousands,
    undress,
    writes_decimal_commas,
)
from deepctrl.cli.table_trained import category_keys, category_values, dots_written
from deepctrl.tabular.cell_values import category_key, check_flat, is_missing_text
from deepctrl.tabular.column_kinds import CATEGORICAL, column_kind, reading_hint
from deepctrl.tabular.date_columns import date_text_rows
from deepctrl.tabular.table_messages import shown

PARQUET_SUFFIXES = (".parquet", ".pq")
UNREAD_FORMATS = (
    ".xlsx",
    ".xls",
    ".ods",
    ".json",
    ".jsonl",
    ".ndjson",
    ".feather",
    ".arrow",
    ".orc",
    ".avro",
    ".h5",
    ".hdf5",
    ".pkl",
    ".pickle",
    ".xml",
    ".html",
    ".db",
    ".sqlite",
)
"""Suffixes of table formats deepctrl neither reads nor writes."""


def _not_utf8(path: Path) -> str:
    """Why ``path`` is not UTF-8 text, naming the first line that is not.

    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = bad.write_bytes("city\\nBonn\\nK\u00f6ln\\n".encode("latin-1"))
    >>> _not_utf8(bad).split(";")[0].endswith("line 3 has byte 0xf6 (not UTF-8)")
    True
    """
    with open_binary(path) as f:
        start = f.read(8)
    why = _utf16(path, start) or _compressed(path, start)
    if why:
        return why
    with open_binary(path) as f:
        for number, line in enumerate(f, start=1):
            if b"\0" in line:
                return f"data file {path} is not a text CSV file (line {number} has a NUL byte)"
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                return (
                    f"data file {path} is not UTF-8 text: line {number} has byte "
                    f"0x{line[exc.start]:02x} (not UTF-8); save it as UTF-8 (a file from a "
                    "spreadsheet in Latin-1 or Windows-1252: iconv -f cp1252 -t utf-8)"
                )
    return f"data file {path} is not a UTF-8 text CSV file"


def _utf16(path: Path, start: bytes) -> str | None:
    """Why ``path``, whose first bytes are ``start``, is not UTF-8 when it is UTF-16 text
    with its byte order mark (as spreadsheets save "Unicode Text"), else None.

    >>> _utf16(Path("t.csv"), "x,y".encode("utf-16")).split("; ")[1]
    'save it as UTF-8: iconv -f utf-16 -t utf-8 t.csv > t-utf8.csv'
    """
    if not start.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    converted = path.with_name(f"{path.stem}-utf8.csv")
    return (
        f'data file {path} is UTF-16 text (as spreadsheets save "Unicode Text"); save it as '
        f"UTF-8: iconv -f utf-16 -t utf-8 {shlex.quote(str(path))} > "
        f"{shlex.quote(str(converted))}"
    )


_MAGIC = {  # the first bytes of a compressed file -> how it is compressed, its suffix
    b"\x1f\x8b": ("gzip", ".gz"),
    b"BZh": ("bzip2", ".bz2"),
    b"\xfd7zXZ\x00": ("xz", ".xz"),
    b"PK\x03\x04": ("zip", ".zip"),
}
_OLD_WORKBOOK = b"\xd0\xcf\x11\xe0"
"""The first bytes of an Excel 97-2003 workbook (.xls)."""


def _compressed(path: Path, start: bytes) -> str | None:
    """Why ``path``, whose first bytes are ``start``, is not UTF-8 when it is a compressed
    file its suffix does not name, or a spreadsheet, else None.

    >>> _compressed(Path("shop.csv"), b"\\x1f\\x8b\\x08\\x00")
    'data file shop.csv is gzip-compressed; name it shop.csv.gz to have it read'
    >>> _compressed(Path("shop.csv"), b"\\xd0\\xcf\\x11\\xe0\\xa1\\xb1")
    'data file shop.csv is an Excel 97-2003 workbook (.xls); save it as CSV or Parquet'
    """
    if start.startswith(_OLD_WORKBOOK):
        return f"data file {path} is an Excel 97-2003 workbook (.xls); save it as CSV or Parquet"
    for magic, (kind, suffix) in _MAGIC.items():
        if start.startswith(magic):
            if kind == "zip" and zipfile.is_zipfile(path):
                spreadsheet = workbook(zipfile.ZipFile(path).namelist())
                if spreadsheet is not None:
                    return f"data file {path} is {spreadsheet}; save it as CSV or Parquet"
            return (
                f"data file {path} is {kind}-compressed; name it {path.name}{suffix} to have "
                "it read"
            )
    return None


def _header(path: Path, where: Layout) -> list[str]:
    """The column names as written; a name given twice (or twice but for how its accents
    are written) is an error, as pandas would rename the second. Empty names are no names:
    the empty columns of separators ending every line."""
    header = (
        pd.read_csv(  # names as written: "nan" and "None" are names, not missing
            path,
            sep=where.sep,
            header=None,
            nrows=1,
            dtype=str,
            keep_default_na=False,
            skiprows=where.skip,
        )
        .iloc[0]
        .tolist()
    )
    seen: set[str] = set()
    for name in header:
        if nfc(name) in seen:
            raise ValueError(f"data file {path}: the header names column {nfc(name)!r} twice")
        if name:
            seen.add(nfc(name))
    return [str(name) for name in header]


def _empty_unnamed(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The frame without the nameless, empty columns a separator at the end of every line
    makes (as spreadsheets often export), with a note."""
    empty = [c for c in frame.columns if str(c).startswith("Unnamed: ") and frame[c].isna().all()]
    if empty:
        print(
            f"note: {path}: left out {len(empty)} empty column(s) without a name (a separator "
            "at the end of every line)",
            file=sys.stderr,
        )
    return frame.drop(columns=empty)


def _csv(path: Path, where: Layout, **options: Any) -> pd.DataFrame:
    """``pd.read_csv`` of a file laid out as ``where`` says, its column names in composed
    form (see :func:`nfc`), that never takes the first column for an index: a row with one
    field more than the header (a separator at the end of data lines) would shift every
    column one place; a trailing empty field is dropped and a non-empty one is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            # low_memory=False: a column is typed over the whole file, not chunk by chunk
            # (a big file's stray text would leave numbers as text in some chunks only)
            frame = pd.read_csv(
                path,
                sep=where.sep,
                skiprows=where.skip,
                index_col=False,
                low_memory=False,
                **options,
            )
            frame.columns = [nfc(c) if isinstance(c, str) else c for c in frame.columns]
            return frame
        except pd.errors.ParserWarning:
            raise ValueError(
                f"data file {path}: some rows have more values than the header has column "
                "names; name every column in the header"
            ) from None


def _raw_numbers(
    path: Path, where: Layout, table: pd.DataFrame, dots: Mapping[str, str]
) -> tuple[pd.DataFrame | None, bool]:
    """What only the text of a semicolon file ``path``, read by pandas as ``table``, tells:
    its columns of numbers that :func:`may_be_grouped <deepctrl.cli.table_numbers.may_be_grouped>`
    as written, or that a model's training file grouped in thousands (``dots``) (None when
    there are none), and whether it writes decimal commas. Only those columns and the
    columns of text among numbers are read again as text."""
    grouped = [
        name
        for name in table.columns
        if may_be_grouped(table[name])
        or (dots.get(name) == THOUSANDS and pd.api.types.is_float_dtype(table[name].dtype))
    ]
    mixed = [name for name in table.columns if pd.api.types.is_object_dtype(table[name].dtype)]
    comma_decimals = any(
        writes_decimal_commas(table[name])
        for name in table.columns
        if pd.api.types.is_string_dtype(table[name].dtype) and name not in mixed
    )
    if not (grouped or mixed):
        return None, comma_decimals
    places = sorted(table.columns.get_loc(name) for name in grouped + mixed)
    raw = _csv(path, where, dtype=str, usecols=places)
    comma_decimals = comma_decimals or any(writes_decimal_commas(raw[name]) for name in mixed)
    return (raw[grouped] if grouped else None), comma_decimals


def text_columns(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str], nrows: int | None = None
) -> pd.DataFrame:
    """``columns`` of the table at ``path`` as the text written in a CSV file (leading zeros,
    "NA" and whole numbers kept as they are, an empty field as ""), for ids written back
    beside predictions; a Parquet file's columns as ``frame`` holds them.

    Args:
        path: The table's file.
        frame: The table as read by [read_table][deepctrl.cli.tables.read_table].
        columns: The columns to read as text.
        nrows: Read only the first rows (None: all).

    Returns:
        The columns, one row per row of ``frame`` (or per row read).
    """
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES or not columns:
        return frame[list(columns)].iloc[:nrows]
    where = layout(path)
    names = [nfc(name) or f"Unnamed: {i}" for i, name in enumerate(_header(path, where))]
    places = [names.index(nfc(name)) for name in columns]
    text = _csv(path, where, dtype=str, keep_default_na=False, usecols=places, nrows=nrows)
    return text[[names[place] for place in places]].set_axis(list(columns), axis=1)


_PADDED = re.compile(r"\s*0\d+\s*")


def zero_padded_columns(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str], rows: int = 10_000
) -> dict[str, str]:
    """The ``columns`` read as whole numbers whose text in a CSV file writes some with a
    leading zero (codes such as ``00126``), each with its first such value, from the first
    ``rows`` rows.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "t.csv").write_text("item,n\\n00126,3\\n09461,10\\n")
    ...     zero_padded_columns(Path(d, "t.csv"), read_table(Path(d, "t.csv")), ["item", "n"])
    {'item': '00126'}
    """
    whole = [
        c
        for c in columns
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        and not pd.api.types.is_bool_dtype(frame[c].dtype)
        and bool((frame[c].dropna() % 1 == 0).all())
    ]
    if not whole or Path(path).suffix.lower() in PARQUET_SUFFIXES:
        return {}
    text = text_columns(path, frame, whole, nrows=rows)
    found = {}
    for name in whole:
        padded = text[name][text[name].str.fullmatch(_PADDED)]
        if len(padded):
            found[name] = str(padded.iloc[0]).strip()
    return found


def missing_spellings(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str]
) -> dict[str, list[tuple[str, int]]]:
    """For each of ``columns`` of the CSV file at ``path`` (read as ``frame``) that reads
    text such as "None" or "NA" as missing: each such spelling and how many rows have it,
    the most frequent first (the text a server would send as written). None for a Parquet
    file.

    Args:
        path: The table's file.
        frame: The table as read by [read_table][deepctrl.cli.tables.read_table].
        columns: The columns to look at.

    Returns:
        Column name -> [(spelling, rows), ...], for the columns that have such text.
    """
    if Path(path).suffix.lower() in PARQUET_SUFFIXES:  # typed columns: nothing spelled
        return {}
    text = text_columns(path, frame, columns)
    found = {}
    for name in columns:
        written = text[name].set_axis(frame.index).str.strip()
        spelled = written[frame[name].isna() & (written != "")]
        if len(spelled):
            counts = spelled.value_counts(sort=False)  # ties: the order the file has them
            ranked = sorted(counts.items(), key=lambda item: -item[1])
            found[name] = [(str(text), int(rows)) for text, rows in ranked]
    return found


def note_missing_spellings(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str], advice: str
) -> None:
    """A note on standard error for each column of :func:`missing_spellings`: its spellings
    and their rows, read as missing, then ``advice``."""
    for name, spellings in missing_spellings(path, frame, columns).items():
        rows = sum(n for _, n in spellings)
        shown = ", ".join(f"{text!r} ({n})" for text, n in spellings[:5])
        more = f" and {len(spellings) - 5} other spellings" if len(spellings) > 5 else ""
        written = (
            f"written {spellings[0][0]!r}" if len(spellings) == 1 else f"written {shown}{more}"
        )
        print(
            f"note: {path}: column {name!r} has {rows} row(s) {written}, read as missing{advice}",
            file=sys.stderr,
        )


def _check_format(path: Path) -> None:
    """A file whose suffix names a table format that is not read (a spreadsheet, JSON) is
    an error saying to save it as CSV or Parquet."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in (*OPENERS, ".zip"):
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in UNREAD_FORMATS:
        raise ValueError(
            f"data file {path}: {suffixes[-1]} files are not read; save it as CSV or Parquet"
        )


def _parquet(path: Path) -> pd.DataFrame:
    """A Parquet file as a DataFrame, its column names in composed form (see :func:`nfc`),
    its decimal columns as float64 and the columns pandas wrote as its index (named ones)
    as columns; a column named twice, or a file pyarrow cannot read, is an error."""
    try:
        import pyarrow.parquet
    except ImportError:
        raise ValueError(f"reading {path} needs pyarrow: pip install 'deepctrl[parquet]'") from None
    try:
        schema = pyarrow.parquet.read_schema(path)
    except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
        raise ValueError(_not_parquet(path, exc)) from None
    decimals = [f.name for f in schema if pyarrow.types.is_decimal(f.type)]
    names = [nfc(name) for name in schema.names]
    twice = next((name for i, name in enumerate(names) if name in names[:i]), None)
    if twice is not None:
        raise ValueError(f"data file {path}: the file names column {twice!r} twice")
    try:
        frame = pd.read_parquet(path)
    except (ValueError, OSError) as exc:
        raise ValueError(_not_parquet(path, exc)) from None
    named = [name for name in frame.index.names if name is not None]
    if named:  # a column pandas wrote as the frame's index (set_index("store")) is a column
        frame = frame.reset_index(level=named)
    frame = frame.reset_index(drop=True)  # rows by position, as a CSV file's
    for name in decimals:  # money as databases write it: numbers, not Decimal objects
        frame[name] = frame[name].astype(np.float64)
    frame.columns = [nfc(str(c)) for c in frame.columns]
    return frame


def _not_parquet(path: Path, exc: Exception) -> str:
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"data file {path} is not a valid Parquet file: {first}"


def _parser_error(path: Path, exc: pd.errors.ParserError) -> str:
    """pandas' complaint about the CSV file ``path`` in words of its lines and values.

    >>> _parser_error(Path("t.csv"), pd.errors.ParserError(
    ...     "Error tokenizing data. C error: Expected 3 fields in line 52, saw 5"))
    'data file t.csv: line 52 has 5 values, the header names 3 columns'
    """
    found = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(exc))
    if found is None:
        return f"data file {path} is not a valid CSV file: {' '.join(str(exc).split())}"
    names, line, values = found.groups()
    return f"data file {path}: line {line} has {values} values, the header names {names} columns"


def read_table(
    path: str | Path,
    ranges: dict[str, tuple[float, float]] | None = None,
    dots: Mapping[str, str] | None = None,
    categories: Mapping[str, Sequence[Any]] | None = None,
) -> pd.DataFrame:
    """A CSV (comma, semicolon or tab separated) or Parquet file as a DataFrame. For a file
    a model scores: ``ranges``, its training values per number column (lowest, highest),
    and ``dots``, how its training file wrote each number column's dots (see
    :func:`read_table_dots`), settle how a semicolon file writes its numbers, as the model's
    own file did; the columns of ``categories`` (its training categories per column) are
    read as their text, each value matched alone to the training categories (see
    [category_values][deepctrl.cli.table_trained.category_values])."""
    return _read(path, ranges or {}, dots or {}, categories or {})[0]


def read_table_dots(path: str | Path) -> tuple[pd.DataFrame, dict[str, str]]:
    """[read_table][deepctrl.cli.tables.read_table] of a training file, and how a semicolon
    file wrote the dots of its columns (``thousands`` or ``decimal``; see
    [dots_written][deepctrl.cli.table_trained.dots_written]), for the model to read the
    files it scores alike; no dots for another file."""
    return _read(path, {}, {}, {})


def _read(
    path: str | Path,
    ranges: dict[str, tuple[float, float]],
    dots: Mapping[str, str],
    categories: Mapping[str, Sequence[Any]],
) -> tuple[pd.DataFrame, dict[str, str]]:
    """The table and its dots, for :func:`read_table` and :func:`read_table_dots`."""
    if not str(path):
        raise ValueError("the data file's name is empty; give the table's file")
    if str(path) == "-":
        raise ValueError(
            "data file -: tables are not read from standard input (they are read more than "
            "once); save the table to a file and give its name"
        )
    path = Path(path)
    if not path.exists():
        raise ValueError(f"data file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"data file {path} is not a file")
    _check_format(path)
    written: dict[str, str] = {}
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            frame = _parquet(path)
        else:
            where = layout(path)
            sep = where.sep
            header = _header(path, where)
            as_text = [name for name in header if nfc(name) in categories]
            table = _csv(path, where, dtype=dict.fromkeys(as_text, str))
            texts = [nfc(name) for name in as_text]
            frame = _empty_unnamed(table, path)
            known = set(ranges)  # a model's number columns
            raw, comma_decimals = (
                _raw_numbers(path, where, table, dots) if sep == ";" else (None, False)
            )
            numbers = frame.drop(columns=texts)  # a model's categories are matched by text
            dressed = undress(numbers, known)
            if sep == ";":
                numbers = decimal_commas(numbers, known)
            seen: dict[str, str] = {}
            numbers = thousands(numbers, sep, raw, comma_decimals, ranges, dots, seen)
            numbers = dressed_numbers(numbers, dressed, known)
            for name in texts:
                numbers[name] = category_values(frame[name], category_keys(categories[name]), sep)
            frame = numbers[list(frame.columns)] if texts else numbers
            if sep == ";":
                written = dots_written(table, seen, comma_decimals)
    except pd.errors.EmptyDataError:
        raise ValueError(f"data file {path} is empty") from None
    except pd.errors.ParserError as exc:
        raise ValueError(_parser_error(path, exc)) from None
    except UnicodeDecodeError:
        raise ValueError(_not_utf8(path)) from None
    except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile) as exc:
        why = getattr(exc, "strerror", None) or exc or type(exc).__name__
        raise ValueError(f"cannot read data file {path}: {why}") from None
    except ImportError as exc:
        raise ValueError(f"cannot read data file {path}: {exc}") from None
    if len(frame) == 0:
        raise ValueError(f"data file {path} has no data rows")
    frame.columns = [str(c) for c in frame.columns]
    check_flat(frame, f"data file {path}")
    return frame, {str(name): how for name, how in written.items()}


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
                    tip = (
                        "; use --drop-missing to drop those rows, or --categorical "
                        f"{shlex.quote(name)} if its values are categories"
                        if hint
                        else ""
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
            ):
                frame[name] = pd.to_numeric(frame[name])
        for name in targets:
            values = frame[name]
            if pd.api.types.is_float_dtype(values.dtype) and (values % 1 == 0).all():
                frame[name] = values.astype(np.int64)
    return frame
