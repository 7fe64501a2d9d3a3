"""Reading the numbers a CSV file writes as text: decimal commas, thousands separators
(spaces and apostrophes too), currency signs and codes, percent signs and the typographic
minus sign, for
[read_table][deepctrl.cli.table_reading.read_table].

Each step runs its regular expressions over a whole column at once: by pyarrow (RE2) where
it is installed, spelled so that RE2 reads every value as Python's ``re`` does, and by
``re`` once per distinct value otherwise.
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import Any, NamedTuple

import numpy as np
import pandas as pd

from deepctrl.tabular.number_text import CURRENCY, CURRENCY_CODES, CURRENCY_SIGNS, GROUP_SPACES

_RE2_SPACE = (
    r"\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}"
    r"\x{205f}\x{3000}"
)
"""The characters Python's ``re`` reads as ``\\s`` in text, as an RE2 character class's body."""
_OTHER_DIGIT = r"[^\P{Nd}0-9]"
"""A digit other than 0-9 (which Python's ``re`` reads as ``\\d``), in RE2."""


def _re2(pattern: str) -> str:
    """A Python regular expression for RE2, with ``\\d`` as 0-9 and ``\\s`` as the spaces
    ``re`` reads (which RE2 reads alike in values without other digits).

    >>> _re2(r"[-+]?[\\d.,]*\\d")
    '[-+]?[0-9.,]*[0-9]'
    """
    out = []
    in_class = False
    i = 0
    while i < len(pattern):
        pair = pattern[i : i + 2]
        if pair in (r"\d", r"\s"):
            body = "0-9" if pair == r"\d" else _RE2_SPACE
            out.append(body if in_class else f"[{body}]")
        elif pattern[i] == "\\":
            out.append(pair)
        else:
            in_class = (in_class or pattern[i] == "[") and pattern[i] != "]"
            out.append(pattern[i])
        i += len(pair) if pair[0] == "\\" else 1
    return "".join(out)


def _arrow(text: pd.Series) -> Any:
    """A column of text (string dtype) as a pyarrow array, None without pyarrow."""
    try:
        import pyarrow as pa
    except ImportError:
        return None
    return pa.array(text.array)


def _each_distinct(text: pd.Series, read: Callable[[str], Any], dtype: Any) -> np.ndarray:
    """``read`` of each value of ``text`` (text without missing values), called once per
    distinct value."""
    codes, distinct = pd.factorize(text)
    return np.array([read(value) for value in distinct], dtype=dtype)[codes]


class _Pattern:
    """A regular expression run over a column of text (string dtype) as ``re`` runs it on
    each value; missing values do not match."""

    def __init__(self, pattern: str) -> None:
        self.compiled = re.compile(pattern)
        self.re2 = _re2(pattern)
        self.digits = r"\d" in pattern

    def fullmatch(self, text: pd.Series) -> np.ndarray:
        """Which values match as a whole."""
        return self._rows(text, f"^(?:{self.re2})\\z", self.compiled.fullmatch)

    def search(self, text: pd.Series) -> np.ndarray:
        """Which values hold a match."""
        return self._rows(text, self.re2, self.compiled.search)

    def sub(self, repl: str, text: pd.Series) -> pd.Series:
        """``text`` with each match replaced by ``repl`` (``\\1`` names a group).

        >>> _Pattern(r"(\\d),").sub(r"\\1", pd.Series(["1,5", None], dtype="string")).tolist()
        ['15', <NA>]
        """
        arrow = _arrow(text)
        if arrow is None:
            values = text.to_numpy(dtype=object, na_value=None)
            odd = text.notna().to_numpy()
        else:
            import pyarrow.compute as pc

            done = pc.replace_substring_regex(arrow, self.re2, repl)
            odd = self._other_digits(arrow)
            if not odd.any():
                return pd.Series(pd.array(done, dtype=text.dtype), index=text.index)
            values = np.array(done.to_numpy(zero_copy_only=False), dtype=object)
        values[odd] = _each_distinct(text[odd], lambda v: self.compiled.sub(repl, v), object)
        return pd.Series(values, index=text.index, dtype=text.dtype)

    def _rows(self, text: pd.Series, re2: str, python: Callable[[str], Any]) -> np.ndarray:
        """Which values ``re2`` finds (by pyarrow), or ``python`` (by ``re``)."""
        arrow = _arrow(text)
        if arrow is None:
            hits = np.zeros(len(text), dtype=bool)
            odd = text.notna().to_numpy()
        else:
            import pyarrow.compute as pc

            found = pc.fill_null(pc.match_substring_regex(arrow, re2), False)
            hits = np.array(found.to_numpy(zero_copy_only=False), dtype=bool)
            odd = self._other_digits(arrow)
        if odd.any():
            hits[odd] = _each_distinct(text[odd], lambda v: python(v) is not None, bool)
        return hits

    def _other_digits(self, arrow: Any) -> np.ndarray:
        """The values RE2 would read otherwise than ``re``: those with a digit other than
        0-9, when the pattern reads digits."""
        import pyarrow.compute as pc

        if not self.digits or _ascii_but_signs(arrow):
            return np.zeros(len(arrow), dtype=bool)
        odd = pc.fill_null(pc.match_substring_regex(arrow, _OTHER_DIGIT), False)
        return np.array(odd.to_numpy(zero_copy_only=False), dtype=bool)


_NO_DIGITS = [
    char.encode()
    for char in f"{CURRENCY_SIGNS}łč\u2212\u00a0\u202f\u2009\u2019"
    if not char.isascii()
]
"""Characters beyond ASCII that numbers are written with, none a digit."""


def _ascii_but_signs(arrow: Any) -> bool:
    """Whether a pyarrow array of text holds no characters beyond ASCII but the signs and
    spaces numbers are written with (so no digit other than 0-9): its bytes beyond ASCII
    are all theirs (in UTF-8 no character's bytes are found inside another's)."""
    data = _arrow_bytes(arrow)
    if data is None:
        return False
    beyond = int(np.count_nonzero(np.frombuffer(data, dtype=np.uint8) >= 0x80))
    return not beyond or beyond == sum(data.count(char) * len(char) for char in _NO_DIGITS)


def _contains(text: pd.Series, part: str) -> np.ndarray:
    """Which values of a column of text hold ``part``; missing values do not."""
    return text.str.contains(part, regex=False).fillna(False).to_numpy(dtype=bool)


def _text_bytes(text: pd.Series) -> bytes | None:
    """The values of a column of text as UTF-8, one after another (missing ones left out),
    from pyarrow's buffers; None without pyarrow."""
    arrow = _arrow(text)
    return None if arrow is None else _arrow_bytes(arrow)


def _arrow_bytes(arrow: Any) -> bytes | None:
    """The values of a pyarrow array of text as UTF-8, one after another (missing ones left
    out); None for an array of another kind."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pc.drop_null(arrow)
    parts = []
    for chunk in values.chunks if isinstance(values, pa.ChunkedArray) else [values]:
        if not (pa.types.is_string(chunk.type) or pa.types.is_large_string(chunk.type)):
            return None
        if not len(chunk):
            continue
        _, offsets, data = chunk.buffers()
        width = np.int64 if pa.types.is_large_string(chunk.type) else np.int32
        bounds = np.frombuffer(offsets, dtype=width)[[chunk.offset, chunk.offset + len(chunk)]]
        if data is not None:
            parts.append(memoryview(data)[bounds[0] : bounds[1]].tobytes())
    return b"".join(parts)


def _holds(text: pd.Series, chars: Iterable[str]) -> bool:
    """Whether a value of a column of text holds one of ``chars`` (characters, or longer
    parts).

    >>> _holds(pd.Series(["1", None, "2 €"], dtype="string"), "$€"), _holds(pd.Series(["x"]), "%")
    (True, False)
    """
    data = _text_bytes(text.astype("string"))
    if data is None:
        return any(_contains(text.astype("string"), char).any() for char in chars)
    return any(char.encode() in data for char in chars)


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
    arrow = _arrow(text)
    if arrow is None or arrow.null_count == len(arrow):
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    if shaped:
        data = _text_bytes(text)
        plain = data is not None and bool(_PLAIN_BYTES[np.frombuffer(data, np.uint8)].all())
    else:
        plain = bool(pc.all(pc.match_substring_regex(arrow, _PLAIN_NUMBER)).as_py())
    if not plain or pc.max(pc.binary_length(arrow)).as_py() > 15:
        return None
    values = np.array(pc.cast(arrow, pa.float64()).to_numpy(zero_copy_only=False))
    if not pc.any(pc.match_substring(arrow, ".")).as_py():
        values[values == 0] = 0.0
    return values


def _numbers(text: pd.Series, errors: str = "raise", shaped: bool = False) -> pd.Series:
    """``pd.to_numeric(text, errors=errors)`` of a column of text, as floats (see
    :func:`_parsed`, which ``shaped`` is passed to).

    >>> _numbers(pd.Series(["-0", "12", None], dtype="string")).tolist()
    [0.0, 12.0, nan]
    >>> _numbers(pd.Series(["-0", "1.5", "x"], dtype="string"), errors="coerce").tolist()
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


_DECIMAL_COMMA = _Pattern(r"\s*[-+]?\d*,\d+\s*|\s*[-+]?\d+\s*")
_DOT_GROUPED = _Pattern(r"\s*[-+]?[1-9]\d{0,2}(\.\d{3})+(,\d+)?\s*")
_DIGIT_COMMA = _Pattern(r"\d,\d")


def writes_decimal_commas(text: pd.Series) -> bool:
    """Whether a column of text holds a decimal comma (a digit, a comma, a digit)."""
    return _holds(text, ",") and bool(_DIGIT_COMMA.search(text.astype("string")).any())


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
    """
    for name in frame.columns:
        series = frame[name]
        if not _text_dtype(series):
            continue
        text = series.astype("string")
        if not _holds(text, ","):
            continue  # no comma: nothing to read here (most text columns end here)
        is_number = _DECIMAL_COMMA.fullmatch(text)
        if not (is_number & _contains(text, ",")).any():
            continue
        if _DOT_GROUPED.fullmatch(text).any():
            continue  # "1.850,46" beside "926,59": thousands() reads the column
        numbers = text.where(is_number).str.strip().str.replace(",", ".", regex=False)
        numbers = _numbers(numbers, "coerce", shaped=True)
        column = _partly_numbers(series, numbers, name in known)
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
_POINT_DECIMALS = _Pattern(r"[-+]?\d*\.(\d{1,2}|\d{4,})")


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

    >>> thousands(pd.DataFrame({"n": ["1,234", "56", None, "Total"]}), ",").n.tolist()
    [1234.0, 56.0, nan, 'Total']
    >>> german = pd.DataFrame({"sqft": [1.927, 850.0]})
    >>> raw = pd.DataFrame({"sqft": ["1.927", "850"]})
    >>> thousands(german, ";", raw, comma_decimals=True).sqft.tolist()
    [1927.0, 850.0]
    """
    ranges, dots, seen = ranges or {}, dots or {}, {} if seen is None else seen
    group, mark = _GROUPED.get(sep, (",", "."))
    g, m = re.escape(group), re.escape(mark)
    number = _Pattern(rf"[-+]?[1-9]\d{{0,2}}({g}\d{{3}})+({m}\d+)?|[-+]?\d+({m}\d+)?")
    for name in frame.columns:
        series = frame[name]
        # read by pandas, and may be grouped (the others are not: see may_be_grouped)
        read = raw is not None and name in raw.columns and pd.api.types.is_numeric_dtype(series)
        if not (read or _text_dtype(series)):
            continue
        if not read and pd.api.types.infer_dtype(series, skipna=True) != "string":
            continue  # numbers among text, read already (decimal commas)
        text = (raw[name] if raw is not None and read else series).astype("string")
        if not _holds(text, group):
            continue  # no value grouped (most columns end here)
        has_group = _contains(text, group)
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
        numbers = _numbers(numbers.str.replace(mark, ".", regex=False), shaped=True)
        frame[name] = _partly_numbers(series, numbers, name in ranges)
        if mark == ",":
            seen[name] = THOUSANDS
        print(
            f"note: read column {name!r} as numbers written with thousands separators ({first!r})",
            file=sys.stderr,
        )
    return frame


_DOTS_GROUP = _Pattern(r"[-+]?\d{1,3}(\.\d{3}){2,}(,\d+)?")


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


def _partly_numbers(text: pd.Series, numbers: pd.Series, known: bool = False) -> pd.Series | None:
    """``text`` with ``numbers`` (NaN where a value reads as none) in place of the values
    they read, the others kept (for :func:`clean_columns
    <deepctrl.cli.table_cleaning.clean_columns>` to name): floats when every value reads, None when
    no more than half do (none, in a column ``known`` to hold numbers: a model's).

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
_MINUS_DIGIT = _Pattern(MINUS_SIGN + rf"(\s*(?:{CURRENCY})?\s*[\d.,])")


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
        text = series.astype("string")
        if not _holds(text, MINUS_SIGN) or not _MINUS_DIGIT.search(text).any():
            continue
        written = _MINUS_DIGIT.sub(r"-\1", text)
        frame[name] = series.where(series.isna(), written.astype(object))
        changed.append(name)
    return changed


_SPACES = GROUP_SPACES.replace("'", "").replace("\u2019", "")
_APOSTROPHES = "'\u2019"
_GROUPED_DIGITS = _Pattern(rf"\d[{GROUP_SPACES}]\d{{3}}")
_SPACED_DIGITS = _Pattern(rf"\d[{_SPACES}]\d{{3}}")
_SIGNED = _Pattern(rf"{CURRENCY}|%|\d[{GROUP_SPACES}]\d{{3}}")
_NUMBER = rf"[1-9]\d{{0,2}}(?:[{GROUP_SPACES}]\d{{3}})+(?:[.,]\d+)?|[\d.,]*\d"
DRESSED = rf"\s*[-+]?\s*(?:{CURRENCY})?\s*[-+]?(?:{_NUMBER})\s*(?:{CURRENCY})?\s*%?\s*"
"""A number written with a currency sign or code before or after it, a percent sign after
it, or with spaces or apostrophes between thousands (a regular expression)."""
_DRESSED = _Pattern(DRESSED)
_SPACE = _Pattern(r"\s")
_MARKS = sorted(CURRENCY_CODES, key=len, reverse=True) + list(CURRENCY_SIGNS)


def _may_be_dressed(text: pd.Series, data: bytes | None) -> bool:
    """Whether a column of text, whose values are ``data`` (see :func:`_text_bytes`), holds
    a currency or percent sign, a currency code, or digits grouped in thousands by spaces or
    apostrophes (most text columns hold none)."""
    if data is None:
        return _holds(text, [*CURRENCY_SIGNS, "%", *CURRENCY_CODES]) or (
            _holds(text, GROUP_SPACES) and bool(_GROUPED_DIGITS.search(text).any())
        )
    return any(part.encode() in data for part in [*CURRENCY_SIGNS, "%", *CURRENCY_CODES]) or (
        any(char.encode() in data for char in GROUP_SPACES)
        and bool(_GROUPED_DIGITS.search(text).any())
    )


def _digits(data: bytes) -> int:
    """How many of the bytes ``data`` are the digits 0-9."""
    values = np.frombuffer(data, dtype=np.uint8)
    return int(np.count_nonzero((values >= 0x30) & (values <= 0x39)))


def _in(data: bytes | None, text: pd.Series, part: str) -> bool:
    """Whether ``part`` is in a value of ``text``, whose values are ``data`` (see
    :func:`_text_bytes`; None: look in ``text``)."""
    return part.encode() in data if data is not None else bool(_contains(text, part).any())


def _without_signs(series: pd.Series, known: bool = False) -> tuple[pd.Series, list[str]] | None:
    """A text column whose values are mostly numbers, some with a currency sign or code
    before or after them, a percent sign after them, or spaces or apostrophes between their
    thousands, with those left out, and what they were (for the note); None for any other
    column.

    >>> text, signs = _without_signs(pd.Series(["12%", "-$3.50", "4 €", "n/a", None]))
    >>> text.tolist(), signs
    (['12', '-3.50', '4', 'n/a', nan], ['a currency sign ($, €)', 'a percent sign'])
    >>> text, signs = _without_signs(pd.Series(["R$ 7,00", "3\u202f954 EUR", "5'820.00"]))
    >>> text.tolist(), signs[0]
    (['7,00', '3954', '5820.00'], 'a currency sign (EUR, R$)')
    >>> signs[1:]
    ['spaces between thousands', 'apostrophes between thousands']
    """
    text = series.astype("string")
    data = _text_bytes(text)
    if data is not None and not known and _digits(data) * 2 <= int(series.notna().sum()):
        return None  # each number holds a digit: most text columns end here
    if not _may_be_dressed(text, data):
        return None  # no sign at all
    matched = _DRESSED.fullmatch(text) & _strings(series)
    if not matched.any() or (not known and matched.sum() * 2 <= series.notna().sum()):
        return None
    numbers, undressed, currency = text[matched], text, []
    data = _text_bytes(numbers)
    for mark in _MARKS:  # the longer first: "R$" before "$"
        if _in(data, numbers, mark):
            currency.append(mark)
            numbers = numbers.str.replace(mark, "", regex=False)
            data = None if data is None else data.replace(mark.encode(), b"")
            undressed = undressed.str.replace(mark, "", regex=False)
    signs = [f"a currency sign ({', '.join(sorted(currency))})"] if currency else []
    if _in(data, numbers, "%"):
        signs.append("a percent sign")
        undressed = undressed.str.replace("%", "", regex=False)
    spaced = any(_in(data, numbers, char) for char in _SPACES)
    if spaced and _SPACED_DIGITS.search(numbers).any():
        signs.append("spaces between thousands")
    if any(_in(data, numbers, char) for char in _APOSTROPHES):
        signs.append("apostrophes between thousands")
        for apostrophe in _APOSTROPHES:
            undressed = undressed.str.replace(apostrophe, "", regex=False)
    if not signs:
        return None
    if _in(data, numbers, " "):
        undressed = undressed.str.replace(" ", "", regex=False)
    if _SPACE.search(undressed[matched]).any():
        undressed = _SPACE.sub("", undressed)  # spaces other than " " (no-break ones)
    return series.where(~matched, undressed), signs


def _strings(series: pd.Series) -> np.ndarray:
    """Which values of a text column are text (not missing, nor numbers among text)."""
    if isinstance(series.dtype, pd.StringDtype):
        return series.notna().to_numpy()
    return np.array([isinstance(value, str) for value in series], dtype=bool)


class _Dressed(NamedTuple):
    """A text column whose numbers :func:`undress` undressed: its text as the file wrote
    it, and what its numbers were written with, for the note."""

    text: pd.Series
    signs: list[str]


def undress(frame: pd.DataFrame, known: Collection[str] = ()) -> dict[str, _Dressed]:
    """The text columns whose numbers are dressed, undressed in ``frame`` so that the
    decimal-comma and thousands steps and :func:`dressed_numbers` read them: the
    typographic minus sign written "-" (see :func:`_minus_signs`), and currency and percent
    signs left out where most values are numbers (see :func:`_without_signs`).

    >>> frame = pd.DataFrame({"p": ["$3.50", "4 €"], "t": ["\u22121", "a"], "c": ["a", "b"]})
    >>> sorted(undress(frame)), frame.p.tolist(), frame.t.tolist()
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


def dressed_numbers(
    frame: pd.DataFrame, dressed: dict[str, _Dressed], known: Collection[str] = ()
) -> pd.DataFrame:
    """The ``dressed`` columns (see :func:`undress`), once the decimal-comma and thousands
    steps have read them, as numbers where most of their values are, with a note, their
    other values as the text they were; a column of other values stays the text it was."""
    for name, (text, signs) in dressed.items():
        numbers = numbers_or_nan(frame[name])
        column = _partly_numbers(text, numbers, name in known)
        frame[name] = text if column is None else column
        if column is not None:
            grouped = any("between thousands" in sign for sign in signs)
            print(
                f"note: read column {name!r} as numbers written with {' and '.join(signs)}"
                + _example(text, numbers)
                + (
                    f"; if they are codes (921 345 678), give --categorical {shlex.quote(name)}"
                    if grouped
                    else ""
                ),
                file=sys.stderr,
            )
    return frame


def _example(text: pd.Series, numbers: pd.Series) -> str:
    """The first value of ``text`` with a currency or percent sign, a currency code or
    grouping spaces or apostrophes, and the number it was read as, for a note, or "" when
    there is none.

    >>> _example(pd.Series(["1", "12%"]), pd.Series([1.0, 12.0]))
    ": '12%' read as 12"
    """
    read = numbers.notna().to_numpy()
    for start, stop in ((0, 1000), (1000, len(text))):  # the first rows tell, most often
        signed = _SIGNED.search(text.iloc[start:stop].astype("string")) & read[start:stop]
        if signed.any():
            break
    else:
        return ""
    row = start + int(signed.argmax())
    number = float(numbers.iloc[row])
    return f": {text.iloc[row]!r} read as {int(number) if number.is_integer() else number}"


def _text_dtype(series: pd.Series) -> bool:
    """Whether a column holds text (object or string dtype)."""
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
