"""Numbers a CSV file writes with a currency sign or code, a percent sign, the typographic
minus sign, or spaces or apostrophes between thousands (dressed numbers), for
[read_table][deepctrl.cli.table_reading.read_table]: undressed before the decimal-comma
and thousands steps read them, then read as numbers with a note.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Collection
from typing import NamedTuple

import numpy as np
import pandas as pd

from deepctrl.cli.column_patterns import ColumnPattern, contains, holds, text_bytes, text_dtype
from deepctrl.cli.plain_numbers import numbers_or_nan, partly_numbers
from deepctrl.tabular.number_text import CURRENCY, CURRENCY_CODES, CURRENCY_SIGNS, GROUP_SPACES

MINUS_SIGN = "\u2212"
"""The typographic minus sign, which reports and word processors write for "-"."""
_MINUS_DIGIT = ColumnPattern(MINUS_SIGN + rf"(\s*(?:{CURRENCY})?\s*[\d.,])")


def _minus_signs(frame: pd.DataFrame) -> list[str]:
    """The text columns holding the typographic minus sign (U+2212, which reports and word
    processors write for "-") before a digit, with it written "-" there.

    >>> frame = pd.DataFrame({"t": ["\u22121.5", "2", None], "c": ["\u2212", "a", "b"]})
    >>> _minus_signs(frame), frame.t.tolist()[:2], frame.t.isna().tolist()
    (['t'], ['-1.5', '2'], [False, False, True])
    """
    changed = []
    for name in frame.columns:
        series = frame[name]
        if not text_dtype(series):
            continue
        text = series.astype("string")
        if not holds(text, MINUS_SIGN) or not _MINUS_DIGIT.search(text).any():
            continue
        written = _MINUS_DIGIT.sub(r"-\1", text)
        frame[name] = series.where(series.isna(), written.astype(object))
        changed.append(name)
    return changed


_SPACES = GROUP_SPACES.replace("'", "").replace("\u2019", "")
_APOSTROPHES = "'\u2019"
_GROUPED_DIGITS = ColumnPattern(rf"\d[{GROUP_SPACES}]\d{{3}}")
_SPACED_DIGITS = ColumnPattern(rf"\d[{_SPACES}]\d{{3}}")
_SIGNED = ColumnPattern(rf"{CURRENCY}|%|\d[{GROUP_SPACES}]\d{{3}}")
_NUMBER = rf"[1-9]\d{{0,2}}(?:[{GROUP_SPACES}]\d{{3}})+(?:[.,]\d+)?|[\d.,]*\d"
DRESSED = rf"\s*[-+]?\s*(?:{CURRENCY})?\s*[-+]?(?:{_NUMBER})\s*(?:{CURRENCY})?\s*%?\s*"
"""A number written with a currency sign or code before or after it, a percent sign after
it, or with spaces or apostrophes between thousands (a regular expression)."""
_DRESSED = ColumnPattern(DRESSED)
_SPACE = ColumnPattern(r"\s")
_MARKS = sorted(CURRENCY_CODES, key=len, reverse=True) + list(CURRENCY_SIGNS)


def _may_be_dressed(text: pd.Series, data: bytes | None) -> bool:
    """Whether a column of text, whose values are ``data`` (see :func:`text_bytes`), holds
    a currency or percent sign, a currency code, or digits grouped in thousands by spaces or
    apostrophes (most text columns hold none)."""
    if data is None:
        return holds(text, [*CURRENCY_SIGNS, "%", *CURRENCY_CODES]) or (
            holds(text, GROUP_SPACES) and bool(_GROUPED_DIGITS.search(text).any())
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
    :func:`text_bytes`; None: look in ``text``)."""
    return part.encode() in data if data is not None else bool(contains(text, part).any())


def _without_signs(series: pd.Series, known: bool = False) -> tuple[pd.Series, list[str]] | None:
    """A text column whose values are mostly numbers, some with a currency sign or code
    before or after them, a percent sign after them, or spaces or apostrophes between their
    thousands, with those left out, and what they were (for the note); None for any other
    column.

    >>> text, signs = _without_signs(pd.Series(["12%", "-$3.50", "4 €", "n/a", None]))
    >>> text.tolist()[:4], bool(pd.isna(text[4])), signs
    (['12', '-3.50', '4', 'n/a'], True, ['a currency sign ($, €)', 'a percent sign'])
    >>> text, signs = _without_signs(pd.Series(["R$ 7,00", "3\u202f954 EUR", "5'820.00"]))
    >>> text.tolist(), signs[0]
    (['7,00', '3954', '5820.00'], 'a currency sign (EUR, R$)')
    >>> signs[1:]
    ['spaces between thousands', 'apostrophes between thousands']
    """
    text = series.astype("string")
    data = text_bytes(text)
    if data is not None and not known and _digits(data) * 2 <= int(series.notna().sum()):
        return None  # each number holds a digit: most text columns end here
    if not _may_be_dressed(text, data):
        return None  # no sign at all
    matched = _DRESSED.fullmatch(text) & _strings(series)
    if not matched.any() or (not known and matched.sum() * 2 <= series.notna().sum()):
        return None
    numbers, undressed, currency = text[matched], text, []
    data = text_bytes(numbers)
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
        undressed = _without_signs(frame[name], name in known) if text_dtype(frame[name]) else None
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
        column = partly_numbers(text, numbers, name in known)
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
