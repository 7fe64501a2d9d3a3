"""Reading the user's table: CSV (comma, semicolon or tab separated; in a semicolon file,
numbers may have a decimal comma; plain or compressed as ``.gz``, ``.bz2``, ``.xz`` or
``.zip``) or Parquet, with one clear line for every problem
(missing file, empty file, not text, a column named twice, text in a numeric column, with
the line number). Missing values are kept for the model to impute.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import sys
import warnings
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

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


def _decimal_commas(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns whose every value is a number written with a decimal comma (as
    semicolon-separated files from spreadsheets in many locales write them) as numbers.

    >>> _decimal_commas(pd.DataFrame({"p": ["1,5", "-2", None], "c": ["a", "1,5", "2"]})).p.tolist()
    [1.5, -2.0, nan]
    """
    for name in frame.columns:
        series = frame[name]
        if not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        present = series.dropna().astype(str)
        if (
            len(present)
            and present.str.contains(",", regex=False).any()
            and present.str.match(_DECIMAL_COMMA).all()
        ):
            frame[name] = pd.to_numeric(series.str.replace(",", ".", regex=False))
    return frame


_GROUPED = {  # separator of the file -> (thousands grouping, decimal mark) of its numbers
    ",": (",", "."),
    "\t": (",", "."),
    ";": (".", ","),
}


def _thousands(frame: pd.DataFrame, sep: str, raw: pd.DataFrame | None = None) -> pd.DataFrame:
    """Columns whose every value is a number, some written with thousands separators
    ("1,234.5" in a comma file, "1.234,5" in a semicolon file), as numbers, with a note.
    ``raw``, the file read as text, lets a column that pandas read as numbers be checked
    too: in a semicolon file pandas reads the grouped whole number "1.927" as 1.927.

    >>> _thousands(pd.DataFrame({"n": ["1,234", "56", None]}), ",").n.tolist()
    [1234.0, 56.0, nan]
    >>> german = pd.DataFrame({"sqft": [1.927, 850.0]})
    >>> _thousands(german, ";", pd.DataFrame({"sqft": ["1.927", "850"]})).sqft.tolist()
    [1927.0, 850.0]
    """
    group, mark = _GROUPED.get(sep, (",", "."))
    g, m = re.escape(group), re.escape(mark)
    grouped = re.compile(rf"^[-+]?\d{{1,3}}({g}\d{{3}})+({m}\d+)?$")
    plain = re.compile(rf"^[-+]?\d+({m}\d+)?$")
    for name in frame.columns:
        series = frame[name]
        if raw is not None and pd.api.types.is_numeric_dtype(series):
            series = raw[name]
        elif not (pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)):
            continue
        present = series.dropna().astype(str).str.strip()
        is_grouped = present.str.match(grouped)
        if len(present) and is_grouped.any() and (is_grouped | present.str.match(plain)).all():
            text = series.astype("string").str.strip().str.replace(group, "", regex=False)
            frame[name] = pd.to_numeric(text.str.replace(mark, ".", regex=False)).astype(float)
            print(
                f"note: read column {name!r} as numbers written with thousands separators "
                f"({present[is_grouped].iloc[0]!r})",
                file=sys.stderr,
            )
    return frame


MINUS_SIGN = "\u2212"
"""The typographic minus sign, which reports and word processors write for "-"."""


def _minus_signs(frame: pd.DataFrame) -> list[str]:
    """The text columns holding the typographic minus sign (U+2212, which reports and word
    processors write for "-") before a digit, with it written "-" there, so that the
    decimal-comma and thousands steps and :func:`_signed_numbers` read them.

    >>> frame = pd.DataFrame({"t": ["\u22121.5", "2", None], "c": ["\u2212", "a", "b"]})
    >>> _minus_signs(frame), frame.t.tolist()
    (['t'], ['-1.5', '2', nan])
    """
    changed = []
    for name in frame.columns:
        series = frame[name]
        if _text_dtype(series) and series.astype("string").str.contains(_MINUS_DIGIT).any():
            text = series.astype("string").str.replace(_MINUS_DIGIT, "-", regex=True)
            frame[name] = series.where(series.isna(), text.astype(object))
            changed.append(name)
    return changed


_MINUS_DIGIT = re.compile(MINUS_SIGN + r"(?=[\d.,])")


def _signed_numbers(frame: pd.DataFrame, signed: list[str]) -> pd.DataFrame:
    """The ``signed`` columns (see :func:`_minus_signs`) whose every value is a number, as
    numbers, with a note; the others stay text."""
    for name in signed:
        series = frame[name]
        if _text_dtype(series):
            numbers = pd.to_numeric(series.astype("string").str.strip(), errors="coerce")
            if numbers.notna().sum() < series.notna().sum():
                continue
            frame[name] = numbers.astype(float)
        print(
            f"note: read column {name!r} as numbers written with the minus sign {MINUS_SIGN} "
            "(U+2212)",
            file=sys.stderr,
        )
    return frame


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


def read_table(path: str | Path) -> pd.DataFrame:
    """A CSV (comma, semicolon or tab separated) or Parquet file as a DataFrame."""
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
            signed = _minus_signs(frame)
            raw = None
            if sep == ";":
                frame = _decimal_commas(frame)
                raw = _csv(path, sep, dtype=str)[frame.columns]
            frame = _signed_numbers(_thousands(frame, sep, raw), signed)
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
        ):
            print(
                f"note: {path}: left out column {name!r}, which holds a different value in "
                f"every row (an identifier); --id-column {name} says so and silences this note",
                file=sys.stderr,
            )
            left_out[name] = IDENTIFIER
        else:
            _note_kept(series, name, path, present)
    return left_out


def _note_kept(series: pd.Series, name: str, path: Path, present: int) -> None:
    """Notes on a column the model keeps but may not want: one value in every row (nothing
    to learn from), or a different whole number in every row (a customer number?)."""
    distinct = series.nunique(dropna=True)
    if distinct == 1 and present >= 2:
        print(
            f"note: {path}: column {name!r} holds one value in every row "
            f"({shown(series.dropna().iloc[0])}), from which the model learns nothing",
            file=sys.stderr,
        )
    elif (
        present >= IDENTIFIER_ROWS
        and pd.api.types.is_integer_dtype(series.dtype)
        and distinct == present
    ):
        print(
            f"note: {path}: column {name!r} holds a different whole number in every row; if "
            f"it identifies rows, --id-column {name} leaves it out (the model reads it as a "
            "number)",
            file=sys.stderr,
        )


def _infinite_rows(series: pd.Series, name: str, path: Path, drop: bool, hint: bool) -> np.ndarray:
    """The rows of a number column holding an infinity ("inf" in a CSV file), to drop with
    ``drop``; without it, an error naming the first."""
    if pd.api.types.is_bool_dtype(series.dtype) or not pd.api.types.is_numeric_dtype(series.dtype):
        return np.zeros(len(series), dtype=bool)
    infinite = np.isinf(series.to_numpy(dtype=np.float64, na_value=np.nan))
    if infinite.any() and not drop:
        rows = np.flatnonzero(infinite)
        csv = path.suffix.lower() not in PARQUET_SUFFIXES
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
                        f"{name} if its values are categories"
                        if hint
                        else ""
                    )
                    first = series.iloc[rows[0]]
                    comma = re.match(r"^\s*[-+]?\d+,\d+\s*$", str(first))
                    if comma and csv and _separator(path) != ";":
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
                and _numbers_or_nan(frame[name]).notna().all()
            ):
                frame[name] = pd.to_numeric(frame[name])
        for name in targets:
            values = frame[name]
            if pd.api.types.is_float_dtype(values.dtype) and (values % 1 == 0).all():
                frame[name] = values.astype(np.int64)
    return frame
