"""Reading the user's table: CSV (comma, semicolon or tab separated, told by the first
lines or a ``sep=`` line; in a semicolon file, numbers may have a decimal comma; numbers may
have thousands separators, a currency sign or code or a percent sign; plain or compressed as
``.gz``, ``.bz2``, ``.xz`` or ``.zip``) or Parquet,
with one clear line for every problem
(missing file, empty file, not text, a column named twice). Missing values are kept for the
model to impute; :mod:`deepctrl.cli.table_cleaning` checks the columns read.
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

from deepctrl.cli.decimal_and_thousands import (
    THOUSANDS,
    decimal_commas,
    may_be_grouped,
    thousands,
    writes_decimal_commas,
)
from deepctrl.cli.number_signs import dressed_numbers, undress
from deepctrl.cli.table_layout import (
    OPENERS,
    Layout,
    first_long_line,
    layout,
    nfc,
    open_binary,
    workbook,
)
from deepctrl.cli.table_trained import category_keys, category_values, dots_written
from deepctrl.tabular.cell_values import check_flat

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
    >>> _utf16(Path("t.csv.gz"), "x,y".encode("utf-16")).split("; ")[1]
    'save it as UTF-8: gzip -dc t.csv.gz | iconv -f utf-16 -t utf-8 > t-utf8.csv'
    """
    if not start.startswith((b"\xff\xfe", b"\xfe\xff")):
        return None
    unpack = _UNPACK.get(path.suffix.lower())
    plain = path.with_suffix("") if unpack else path
    converted = shlex.quote(str(plain.with_name(f"{Path(plain.stem).stem}-utf8.csv")))
    source = shlex.quote(str(path))
    command = (
        f"{unpack} {source} | iconv -f utf-16 -t utf-8 > {converted}"
        if unpack
        else f"iconv -f utf-16 -t utf-8 {source} > {converted}"
    )
    return (
        f'data file {path} is UTF-16 text (as spreadsheets save "Unicode Text"); save it as '
        f"UTF-8: {command}"
    )


_UNPACK = {".gz": "gzip -dc", ".bz2": "bzip2 -dc", ".xz": "xz -dc", ".zip": "unzip -p"}
"""The command that writes a compressed file's text to standard output, by its suffix."""


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
            long = first_long_line(path, where)
            if long is not None:
                raise ValueError(_long_line(path, *long)) from None
            raise ValueError(
                f"data file {path}: some rows have more values than the header has column "
                "names; name every column in the header"
            ) from None


def _raw_numbers(
    path: Path, where: Layout, table: pd.DataFrame, dots: Mapping[str, str]
) -> tuple[pd.DataFrame | None, bool]:
    """What only the text of a semicolon file ``path``, read by pandas as ``table``, tells:
    its columns of numbers that
    :func:`may_be_grouped <deepctrl.cli.decimal_and_thousands.may_be_grouped>` as written,
    or that a model's training file grouped in thousands (``dots``) (None when there are
    none), and whether it writes decimal commas. Only those columns and the
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
        frame: The table as read by [read_table][deepctrl.cli.table_reading.read_table].
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
    return _long_line(path, int(line), int(values), int(names))


def _long_line(path: Path, line: int, values: int, names: int) -> str:
    """The error for a line with more values than the header names columns."""
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
    """[read_table][deepctrl.cli.table_reading.read_table] of a training file, and how a semicolon
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
