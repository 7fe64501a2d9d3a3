"""Reading the user's table: CSV (comma, semicolon or tab separated; in a semicolon file,
numbers may have a decimal comma; numbers may have thousands separators, a currency sign or
a percent sign; plain or compressed as ``.gz``, ``.bz2``, ``.xz`` or ``.zip``) or Parquet,
with one clear line for every problem
(missing file, empty file, not text, a column named twice, text in a numeric column, with
the line number). Missing values are kept for the model to impute.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import shlex
import sys
import warnings
import zipfile
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import numpy as np
import pandas as pd

from deepctrl.tabular.encoding import (
    CATEGORICAL,
    category_key,
    check_flat,
    column_kind,
    date_text_rows,
    is_missing_text,
    shown,
)

PARQUET_SUFFIXES = (".parquet", ".pq")


_OPENERS: dict[str, Callable[..., Any]] = {  # each opens a compressed file by its suffix
    ".gz": gzip.open,
    ".bz2": bz2.open,
    ".xz": lzma.open,
}


def _open_binary(path: Path) -> IO[bytes]:
    """A plain or compressed (by its suffix) file, opened for reading its bytes."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        archive = zipfile.ZipFile(path)
        names = [n for n in archive.namelist() if not n.endswith("/")]
        if len(names) != 1:
            raise ValueError(f"data file {path} must hold one file, not {len(names)}")
        return archive.open(names[0])
    opener = _OPENERS.get(suffix)
    return path.open("rb") if opener is None else opener(path, "rb")


def _first_line(path: Path) -> bytes:
    with _open_binary(path) as f:
        return f.readline()


def _not_utf8(path: Path) -> str:
    """Why ``path`` is not UTF-8 text, naming the first line that is not.

    >>> import tempfile
    >>> bad = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = bad.write_bytes("city\\nBonn\\nK\u00f6ln\\n".encode("latin-1"))
    >>> _not_utf8(bad).split(";")[0].endswith("line 3 has byte 0xf6 (not UTF-8)")
    True
    """
    with _open_binary(path) as f:
        start = f.read(8)
    why = _utf16(path, start) or _compressed(path, start)
    if why:
        return why
    with _open_binary(path) as f:
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


def _compressed(path: Path, start: bytes) -> str | None:
    """Why ``path``, whose first bytes are ``start``, is not UTF-8 when it is a compressed
    file its suffix does not name, else None.

    >>> _compressed(Path("shop.csv"), b"\\x1f\\x8b\\x08\\x00")
    'data file shop.csv is gzip-compressed; name it shop.csv.gz to have it read'
    """
    for magic, (kind, suffix) in _MAGIC.items():
        if start.startswith(magic):
            return (
                f"data file {path} is {kind}-compressed; name it {path.name}{suffix} to have "
                "it read"
            )
    return None


def _separator(path: Path) -> str:
    """The separator the header line uses most, outside quoted names ("Preis, EUR" in a
    semicolon file); a comma when none or on a tie."""
    head = re.sub(r'"(?:[^"]|"")*"', "", _first_line(path).decode("utf-8", errors="replace"))
    counts = {sep: head.count(sep) for sep in (",", ";", "\t")}
    best = max(counts, key=lambda sep: (counts[sep], sep == ","))
    return best if counts[best] else ","


def _check_header(path: Path, sep: str) -> None:
    """A column name given twice is an error (pandas would rename the second)."""
    header = (
        pd.read_csv(  # names as written: "nan" and "None" are names, not missing
            path, sep=sep, header=None, nrows=1, dtype=str, keep_default_na=False
        )
        .iloc[0]
        .tolist()
    )
    seen: set[str] = set()
    for name in header:
        if name in seen:
            raise ValueError(f"data file {path}: the header names column {name!r} twice")
        seen.add(name)


_DECIMAL_COMMA = r"^\s*[-+]?\d*,\d+\s*$|^\s*[-+]?\d+\s*$"


def _decimal_commas(frame: pd.DataFrame, known: Collection[str] = ()) -> pd.DataFrame:
    """Text columns of numbers written with a decimal comma (as semicolon-separated files
    from spreadsheets in many locales write them) as numbers; values of such a column that
    are no numbers ("Summe") stay text when most are numbers (or any, in the ``known``
    number columns of a model), for :func:`clean_columns` to name.

    >>> frame = pd.DataFrame({"p": ["1,5", "-2", None], "c": ["a", "1,5", "2"]})
    >>> _decimal_commas(frame).p.tolist()
    [1.5, -2.0, nan]
    >>> _decimal_commas(pd.DataFrame({"p": ["2,5", "3,75", "Summe"]})).p.tolist()
    [2.5, 3.75, 'Summe']
    """
    for name in frame.columns:
        series = frame[name]
        if not _text_dtype(series):
            continue
        text = series.astype("string")
        comma = text.str.contains(",", regex=False).fillna(False).astype(bool)
        if not comma.any():
            continue  # no comma: nothing to read here (most text columns end here)
        is_number = text.str.match(_DECIMAL_COMMA).fillna(False).astype(bool)
        if not (is_number & comma).any():
            continue
        numbers = pd.to_numeric(
            text.where(is_number).str.strip().str.replace(",", ".", regex=False), errors="coerce"
        )
        column = _partly_numbers(series, numbers, name in known)
        if column is not None:
            frame[name] = column
    return frame


_GROUPED = {  # separator of the file -> (thousands grouping, decimal mark) of its numbers
    ",": (",", "."),
    "\t": (",", "."),
    ";": (".", ","),
}


def _thousands(
    frame: pd.DataFrame,
    sep: str,
    raw: pd.DataFrame | None = None,
    comma_decimals: bool = False,
    ranges: dict[str, tuple[float, float]] | None = None,
) -> pd.DataFrame:
    """Columns of numbers, some written with thousands separators ("1,234.5" in a comma
    file, "1.234,5" in a semicolon file), as numbers, with a note; values of such a column
    that are no numbers ("unknown", a "Total" row) stay text when most are numbers, for
    :func:`clean_columns` to name. A number whose first group is 0 ("0,436") is not
    grouped. ``raw``, the file read as text, lets a column that pandas read as numbers be
    checked too: in a semicolon file pandas reads the grouped whole number "1.927" as 1.927,
    yet a column written like it may hold three decimals (see :func:`_dots_group`, which
    ``comma_decimals``, whether the file writes decimals with commas, and ``ranges``, a
    model's training range per column, help decide).

    >>> _thousands(pd.DataFrame({"n": ["1,234", "56", None, "Total"]}), ",").n.tolist()
    [1234.0, 56.0, nan, 'Total']
    >>> german = pd.DataFrame({"sqft": [1.927, 850.0]})
    >>> raw = pd.DataFrame({"sqft": ["1.927", "850"]})
    >>> _thousands(german, ";", raw, comma_decimals=True).sqft.tolist()
    [1927.0, 850.0]
    """
    ranges = ranges or {}
    group, mark = _GROUPED.get(sep, (",", "."))
    g, m = re.escape(group), re.escape(mark)
    grouped = re.compile(rf"[-+]?[1-9]\d{{0,2}}({g}\d{{3}})+({m}\d+)?")
    plain = re.compile(rf"[-+]?\d+({m}\d+)?")
    for name in frame.columns:
        series = frame[name]
        read = raw is not None and pd.api.types.is_numeric_dtype(series)  # by pandas
        if not (read or _text_dtype(series)):
            continue
        if not read and pd.api.types.infer_dtype(series, skipna=True) != "string":
            continue  # numbers among text, read already (decimal commas)
        text = (raw[name] if raw is not None and read else series).astype("string").str.strip()
        if mark == "," and text.str.fullmatch(r"[-+]?\d*\.(\d{1,2}|\d{4,})").fillna(False).any():
            continue  # "1.25" beside "2.125": the column's dots are decimal points
        is_grouped = text.str.fullmatch(grouped).fillna(False).astype(bool)
        is_number = is_grouped | text.str.fullmatch(plain).fillna(False).astype(bool)
        present = int(text.notna().sum())
        # pandas read all; else most, or any in a model's number column
        needed = present if read else 1 if name in ranges else present // 2 + 1
        if not is_grouped.any() or is_number.sum() < needed:
            continue
        if mark == "," and not _dots_group(text[is_number], comma_decimals, ranges.get(name)):
            _note_decimals(name, text[is_grouped].iloc[0])
            continue
        numbers = text.where(is_number).str.replace(group, "", regex=False)
        numbers = pd.to_numeric(numbers.str.replace(mark, ".", regex=False)).astype(float)
        frame[name] = _partly_numbers(series, numbers, name in ranges)
        print(
            f"note: read column {name!r} as numbers written with thousands separators "
            f"({text[is_grouped].iloc[0]!r})",
            file=sys.stderr,
        )
    return frame


def _dots_group(
    numbers: pd.Series, comma_decimals: bool, trained: tuple[float, float] | None
) -> bool:
    """Whether the dots of a semicolon file's column of numbers separate thousands. A value
    with two of them (1.003.500) says so, and so does a file that writes its decimals with
    commas; otherwise "1.927" may as well be a decimal point before three digits, as
    programs write numbers (pandas reads it so), unless a model's training values of the
    column (``trained``: lowest, highest) take it as thousands, as a file without a decimal
    comma to tell, a single row to predict say, must be read as the model was.

    >>> _dots_group(pd.Series(["10.482", "29.631"]), False, None)
    False
    >>> _dots_group(pd.Series(["1.927", "850"]), True, None)
    True
    >>> _dots_group(pd.Series(["1.200"]), False, (850.0, 2100.0))
    True
    """
    if comma_decimals or numbers.str.fullmatch(r"[-+]?\d{1,3}(\.\d{3}){2,}(,\d+)?").any():
        return True
    if trained is None:
        return False
    low, high = trained
    grouped = pd.to_numeric(numbers.str.replace(".", "", regex=False), errors="coerce")
    median = float(grouped.median())
    return low / 2 <= median <= 2 * high and not low / 2 <= median / 1000 <= 2 * high


def _note_decimals(name: str, first: str) -> None:
    """The note for a column :func:`_dots_group` leaves with decimal points."""
    print(
        f"note: read column {name!r} with decimal points ({first!r} as {float(first)}, not "
        f"{first.replace('.', '')}): dots separate thousands in a semicolon file that writes "
        "its decimals with commas, or where a value has two (1.003.500)",
        file=sys.stderr,
    )


def _partly_numbers(text: pd.Series, numbers: pd.Series, known: bool = False) -> pd.Series | None:
    """``text`` with ``numbers`` (NaN where a value reads as none) in place of the values
    they read, the others kept (for :func:`clean_columns` to name): floats when every
    value reads, None when no more than half do (none, in a column ``known`` to hold
    numbers: a model's).

    >>> text = pd.Series(["1", "x", None, "3"], dtype=object)
    >>> _partly_numbers(text, pd.Series([1.0, None, None, 3.0])).tolist()
    [1.0, 'x', None, 3.0]
    """
    read = numbers.notna().to_numpy()
    present = int(text.notna().sum())
    if not read.any() or (not known and read.sum() * 2 <= present):
        return None
    if read.sum() == present:
        return numbers.astype(float)
    return text.astype(object).where(~read, numbers.astype(object))


MINUS_SIGN = "\u2212"
"""The typographic minus sign, which reports and word processors write for "-"."""
CURRENCY_SIGNS = "$€£¥"
"""The currency signs a number may be written with, before or after it ("$3.50", "4 €")."""


def _minus_signs(frame: pd.DataFrame) -> list[str]:
    """The text columns holding the typographic minus sign (U+2212, which reports and word
    processors write for "-") before a digit, with it written "-" there.

    >>> frame = pd.DataFrame({"t": ["\u22121.5", "2", None], "c": ["\u2212", "a", "b"]})
    >>> _minus_signs(frame), frame.t.tolist()
    (['t'], ['-1.5', '2', nan])
    """
    changed = []
    for name in frame.columns:
        series = frame[name]
        if not _text_dtype(series):
            continue
        distinct = pd.Series(series.dropna().unique(), dtype="string")  # each read once
        if distinct.str.contains(_MINUS_DIGIT).any():
            text = series.astype("string").str.replace(_MINUS_DIGIT, "-", regex=True)
            frame[name] = series.where(series.isna(), text.astype(object))
            changed.append(name)
    return changed


_MINUS_DIGIT = re.compile(MINUS_SIGN + rf"(?=\s*[{re.escape(CURRENCY_SIGNS)}]?\s*[\d.,])")
_SIGNS = re.escape(CURRENCY_SIGNS)
_DRESSED = re.compile(
    rf"^\s*(?P<sign>[-+]?)\s*(?P<before>[{_SIGNS}]?)\s*(?P<number>[-+]?[\d.,]*\d)"
    rf"\s*(?P<after>[{_SIGNS}]?)\s*(?P<percent>%?)\s*$"
)


def _without_signs(series: pd.Series, known: bool = False) -> tuple[pd.Series, list[str]] | None:
    """A text column whose values are mostly numbers, some with a currency sign before or
    after them or a percent sign after them, with those signs left out, and what they were
    (for the note); None for any other column.

    >>> text, signs = _without_signs(pd.Series(["12%", "-$3.50", "4 €", "n/a", None]))
    >>> text.tolist(), signs
    (['12', '-3.50', '4', 'n/a', nan], ['a currency sign ($, €)', 'a percent sign'])
    """
    distinct = pd.Series(series.dropna().unique(), dtype="string")  # each read once
    if not distinct.str.contains(f"[{_SIGNS}%]").any():
        return None  # no sign at all: most columns end here
    parts = distinct.str.extract(_DRESSED)
    currency = sorted((set(parts["before"].dropna()) | set(parts["after"].dropna())) - {""})
    percent = bool((parts["percent"] == "%").any())
    if not (currency or percent):
        return None
    read = parts["number"].notna()
    numbers = parts["sign"][read] + parts["number"][read]
    undressed = dict(zip(distinct[read], numbers, strict=True))
    is_read = series.isin(list(undressed))
    if not is_read.any() or (not known and is_read.sum() * 2 <= series.notna().sum()):
        return None
    signs = [f"a currency sign ({', '.join(currency)})"] if currency else []
    text = series.where(~is_read, series.map(undressed))
    return text, signs + (["a percent sign"] if percent else [])


class _Dressed(NamedTuple):
    """A text column whose numbers :func:`_undress` undressed: its text as the file wrote
    it, and what its numbers were written with, for the note."""

    text: pd.Series
    signs: list[str]


def _undress(frame: pd.DataFrame, known: Collection[str] = ()) -> dict[str, _Dressed]:
    """The text columns whose numbers are dressed, undressed in ``frame`` so that the
    decimal-comma and thousands steps and :func:`_dressed_numbers` read them: the
    typographic minus sign written "-" (see :func:`_minus_signs`), and currency and percent
    signs left out where most values are numbers (see :func:`_without_signs`).

    >>> frame = pd.DataFrame({"p": ["$3.50", "4 €"], "t": ["\u22121", "a"], "c": ["a", "b"]})
    >>> sorted(_undress(frame)), frame.p.tolist(), frame.t.tolist()
    (['p', 't'], ['3.50', '4'], ['-1', 'a'])
    """
    original = {name: frame[name] for name in frame.columns}  # columns are replaced, not changed
    minus = [f"the minus sign {MINUS_SIGN} (U+2212)"]
    dressed = {name: _Dressed(original[name], minus) for name in _minus_signs(frame)}
    for name in frame.columns:
        undressed = _without_signs(frame[name], name in known) if _text_dtype(frame[name]) else None
        if undressed is not None:
            signs = dressed[name].signs if name in dressed else []
            dressed[name] = _Dressed(original[name], signs + undressed[1])
            frame[name] = undressed[0]
    return dressed


def _dressed_numbers(
    frame: pd.DataFrame, dressed: dict[str, _Dressed], known: Collection[str] = ()
) -> pd.DataFrame:
    """The ``dressed`` columns (see :func:`_undress`), once the decimal-comma and thousands
    steps have read them, as numbers where most of their values are, with a note, their
    other values as the text they were; a column of other values stays the text it was."""
    for name, (text, signs) in dressed.items():
        numbers = _numbers_or_nan(frame[name])
        column = _partly_numbers(text, numbers, name in known)
        frame[name] = text if column is None else column
        if column is not None:
            print(
                f"note: read column {name!r} as numbers written with {' and '.join(signs)}"
                + _example(text, numbers),
                file=sys.stderr,
            )
    return frame


def _example(text: pd.Series, numbers: pd.Series) -> str:
    """The first value of ``text`` with a currency or percent sign and the number it was
    read as, for a note, or "" when there is none.

    >>> _example(pd.Series(["1", "12%"]), pd.Series([1.0, 12.0]))
    ": '12%' read as 12"
    """
    signed = text.astype("string").str.contains(f"[{_SIGNS}%]").fillna(False).to_numpy(bool)
    signed &= numbers.notna().to_numpy()
    if not signed.any():
        return ""
    row = int(signed.argmax())
    number = float(numbers.iloc[row])
    return f": {text.iloc[row]!r} read as {int(number) if number.is_integer() else number}"


def _text_dtype(series: pd.Series) -> bool:
    """Whether a column holds text (object or string dtype)."""
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)


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


def _csv(path: Path, sep: str, **options: Any) -> pd.DataFrame:
    """``pd.read_csv`` that never takes the first column for an index: a row with one field
    more than the header (a separator at the end of data lines) would shift every column
    one place; a trailing empty field is dropped and a non-empty one is an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", pd.errors.ParserWarning)
        try:
            return pd.read_csv(path, sep=sep, index_col=False, **options)
        except pd.errors.ParserWarning:
            raise ValueError(
                f"data file {path}: some rows have more values than the header has column "
                "names; name every column in the header"
            ) from None


def text_columns(path: str | Path, frame: pd.DataFrame, columns: Sequence[str]) -> pd.DataFrame:
    """``columns`` of the table at ``path`` as the text written in a CSV file (leading zeros,
    "NA" and whole numbers kept as they are, an empty field as ""), for ids written back
    beside predictions; a Parquet file's columns as ``frame`` holds them.

    Args:
        path: The table's file.
        frame: The table as read by [read_table][deepctrl.cli.tables.read_table].
        columns: The columns to read as text.

    Returns:
        The columns, one row per row of ``frame``.
    """
    path = Path(path)
    if path.suffix.lower() in PARQUET_SUFFIXES or not columns:
        return frame[list(columns)]
    text = _csv(path, _separator(path), dtype=str, keep_default_na=False, usecols=list(columns))
    return text[list(columns)]


def read_table(
    path: str | Path, ranges: dict[str, tuple[float, float]] | None = None
) -> pd.DataFrame:
    """A CSV (comma, semicolon or tab separated) or Parquet file as a DataFrame; ``ranges``,
    a model's training values per column (lowest, highest), settle how a semicolon file
    without decimal commas writes its numbers, as the model's own file did."""
    path = Path(path)
    if not path.exists():
        raise ValueError(f"data file {path} does not exist")
    if not path.is_file():
        raise ValueError(f"data file {path} is not a file")
    try:
        if path.suffix.lower() in PARQUET_SUFFIXES:
            try:
                import pyarrow  # noqa: F401
            except ImportError:
                raise ValueError(
                    f"reading {path} needs pyarrow: pip install 'deepctrl[parquet]'"
                ) from None
            try:
                frame = pd.read_parquet(path)
            except (ValueError, OSError) as exc:  # pyarrow's ArrowInvalid is a ValueError
                first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                raise ValueError(f"data file {path} is not a valid Parquet file: {first}") from None
        else:
            sep = _separator(path)
            _check_header(path, sep)
            frame = _empty_unnamed(_csv(path, sep), path)
            known = set(ranges or {})  # a model's number columns
            dressed = _undress(frame, known)
            raw = None
            comma_decimals = False
            if sep == ";":
                frame = _decimal_commas(frame, known)
                raw = _csv(path, sep, dtype=str)[frame.columns]
                comma_decimals = bool(
                    raw.apply(lambda c: c.str.contains(r"\d,\d", na=False).any()).any()
                )
            frame = _thousands(frame, sep, raw, comma_decimals, ranges)
            frame = _dressed_numbers(frame, dressed, known)
    except pd.errors.EmptyDataError:
        raise ValueError(f"data file {path} is empty") from None
    except pd.errors.ParserError as exc:
        raise ValueError(f"data file {path} is not a valid CSV file: {exc}") from None
    except UnicodeDecodeError:
        raise ValueError(_not_utf8(path)) from None
    except (OSError, EOFError, lzma.LZMAError, zipfile.BadZipFile) as exc:
        raise ValueError(f"cannot read data file {path}: {exc or type(exc).__name__}") from None
    except ImportError as exc:
        raise ValueError(f"cannot read data file {path}: {exc}") from None
    if len(frame) == 0:
        raise ValueError(f"data file {path} has no data rows")
    frame.columns = [str(c) for c in frame.columns]
    check_flat(frame, f"data file {path}")
    return frame


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


def _numbers_or_nan(series: pd.Series) -> pd.Series:
    """``pd.to_numeric(series, errors="coerce")``, read once per distinct value (a column
    of a few categories over a million rows takes milliseconds, not seconds).

    >>> _numbers_or_nan(pd.Series(["1.5", "x", None, "1.5"], dtype=object)).tolist()
    [1.5, nan, nan, 1.5]
    """
    codes, distinct = pd.factorize(series, use_na_sentinel=True)
    numbers = pd.to_numeric(pd.Series(distinct, dtype=object), errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan
    )
    values = np.where(codes >= 0, numbers[np.maximum(codes, 0)] if len(numbers) else np.nan, np.nan)
    return pd.Series(values, index=series.index, name=series.name)


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


def _lines(rows: np.ndarray, csv: bool) -> str:
    """'line 5' / 'row 4' of the first bad row (CSV line numbers count the header)."""
    first = int(rows[0])
    return f"line {first + 2}" if csv else f"row {first}"


IDENTIFIER_ROWS = 50
"""From this many rows, a text column with a different value in every row is an identifier."""
IDENTIFIER = "an identifier column, left out"
EMPTY = "an empty column, left out"
"""What a rule naming a column :func:`left_out_columns` left out is told."""


def left_out_columns(
    frame: pd.DataFrame, features: Sequence[str], path: Path, categorical: Sequence[str] = ()
) -> dict[str, str]:
    """The ``features`` a model does without, and why, with a note for each: columns with
    no value at all (nothing to learn from), and text columns that hold a different value in
    every row (an order number, a customer id: one-hot, each would be one input per row that
    no new row matches, and slow to train), unless named in ``categorical``.

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
            and not _mostly(_numbers_or_nan(series).notna().to_numpy(), series.isna().to_numpy())
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
    distinct = series.nunique(dropna=True)
    if distinct == 1 and present == len(series) and present >= 2:
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
        and distinct == present
    ):
        print(
            f"note: {path}: column {name!r} holds a different whole number in every row; if "
            f"it identifies rows, --id-column {shlex.quote(name)} leaves it out (the model "
            "reads it as a number)",
            file=sys.stderr,
        )


def _compact_dates(series: pd.Series) -> bool:
    """Whether every value of a number column is a whole number that is a date written
    YYYYMMDD, from 1900 to 2100.

    >>> _compact_dates(pd.Series([20240531, 19991231, None]))
    True
    >>> _compact_dates(pd.Series([20240531, 20240231])), _compact_dates(pd.Series([1.5]))
    (False, False)
    """
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series):
        return False
    values = pd.Series(series.dropna().unique())
    if not len(values) or not values.between(19000101, 21001231).all() or (values % 1).any():
        return False
    text = values.astype(np.int64).astype(str)
    return bool(pd.to_datetime(text, format="%Y%m%d", errors="coerce").notna().all())


def _infinite_rows(
    series: pd.Series, name: str, path: Path, csv: bool, drop: bool, hint: bool
) -> np.ndarray:
    """The rows of a number column holding an infinity ("inf" in a CSV file), to drop with
    ``drop``; without it, an error naming the first."""
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        return np.zeros(len(series), dtype=bool)
    infinite = np.isinf(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if infinite.any() and not drop:
        rows = np.flatnonzero(infinite)
        raise ValueError(
            f"{path}: column {name!r} has an infinite value in {len(rows)} of {len(series)} "
            f"rows ({_lines(rows, csv)}: {float(series.iloc[rows[0]])}); leave unknown values empty"
            + ("; use --drop-missing to drop those rows" if hint else "")
        )
    return infinite


def clean_columns(
    frame: pd.DataFrame,
    columns: Sequence[str],
    path: Path,
    drop: bool,
    hint: bool = True,
    targets: Sequence[str] = (),
    categorical: Sequence[str] = (),
    dates: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Check ``columns`` for text in mostly-numeric columns and for values that are not
    dates in date columns (an error naming the first such line, or with ``drop`` those rows
    are dropped); ``categorical`` columns hold categories, numbers and text alike, and are
    not checked. The date columns are ``dates`` (a model's, whose other columns are then
    numbers or categories), or when None the text columns whose values are mostly ISO 8601
    dates (and a number column is one whose values are mostly numbers). Missing values
    stay (the model imputes them), unless ``drop`` is set; rows whose ``targets`` are
    missing are always dropped, saying how many, and a target of whole numbers stays whole
    once they are."""
    csv = path.suffix.lower() not in PARQUET_SUFFIXES
    frame = frame.copy(deep=False)  # columns are replaced, never written into
    bad = np.zeros(len(frame), dtype=bool)
    for name in columns:
        series = frame[name]
        missing = series.isna().to_numpy()
        read_as_dates = False
        if name not in categorical and _has_date_text(series, dates is None or name in dates):
            dated, other = date_text_rows(series)
            read_as_dates = dates is not None or _mostly(dated, missing)
            if read_as_dates and other.any():
                rows = np.flatnonzero(other)
                if not drop:
                    raise ValueError(
                        f"{path}: column {name!r} holds dates, but a value that is not an "
                        f"ISO 8601 date in {len(rows)} of {len(frame)} rows "
                        f"({_lines(rows, csv)}: {series.iloc[rows[0]]!r}); write dates as "
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
            as_number = _numbers_or_nan(series)
            text = as_number.isna().to_numpy() & ~missing
            # a model's number column holds numbers only; in a new table, most values must
            # be numbers for the column to count as one
            known = dates is not None and name not in targets
            if (
                (~missing).sum()
                and (known or as_number.notna().sum() >= 0.5 * (~missing).sum())
                and text.any()
            ):
                rows = np.flatnonzero(text)
                if not drop:
                    tip = (
                        "; use --drop-missing to drop those rows, or --categorical "
                        f"{shlex.quote(name)} if its values are categories"
                        if hint
                        else ""
                    )
                    first = series.iloc[rows[0]]
                    if _decimal_comma(first) and csv and _separator(path) != ";":
                        tip += (
                            "; a decimal comma is read in a semicolon-separated file (or "
                            f"write {str(first).strip().replace(',', '.')})"
                        )
                    raise ValueError(
                        f"{path}: column {name!r} has text in {len(rows)} of "
                        f"{len(frame)} rows ({_lines(rows, csv)}: {first!r}){tip}"
                    )
                frame[name] = as_number
                bad |= text
        bad |= _infinite_rows(frame[name], name, path, csv, drop, hint)
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
                and _numbers_or_nan(frame[name]).notna().all()
            ):
                frame[name] = pd.to_numeric(frame[name])
        for name in targets:
            values = frame[name]
            if pd.api.types.is_float_dtype(values.dtype) and (values % 1 == 0).all():
                frame[name] = values.astype(np.int64)
    return frame
