"""Regular expressions run over a whole column of text at once, for the steps that read
the numbers a CSV file writes as text: by pyarrow (RE2) where it is installed, spelled so
that RE2 reads every value as Python's ``re`` does, and by ``re`` once per distinct value
otherwise; and the column's text as bytes, to tell at once what no value holds.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.tabular.number_text import CURRENCY_SIGNS

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


def arrow_array(text: pd.Series) -> Any:
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


class ColumnPattern:
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

        >>> ColumnPattern(r"(\\d),").sub(r"\\1", pd.Series(["1,5", None], dtype="string")).tolist()
        ['15', <NA>]
        """
        arrow = arrow_array(text)
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
        arrow = arrow_array(text)
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


def contains(text: pd.Series, part: str) -> np.ndarray:
    """Which values of a column of text hold ``part``; missing values do not."""
    return text.str.contains(part, regex=False).fillna(False).to_numpy(dtype=bool)


def text_bytes(text: pd.Series) -> bytes | None:
    """The values of a column of text as UTF-8, one after another (missing ones left out),
    from pyarrow's buffers; None without pyarrow."""
    arrow = arrow_array(text)
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


def holds(text: pd.Series, chars: Iterable[str]) -> bool:
    """Whether a value of a column of text holds one of ``chars`` (characters, or longer
    parts).

    >>> holds(pd.Series(["1", None, "2 €"], dtype="string"), "$€"), holds(pd.Series(["x"]), "%")
    (True, False)
    """
    data = text_bytes(text.astype("string"))
    if data is None:
        return any(contains(text.astype("string"), char).any() for char in chars)
    return any(char.encode() in data for char in chars)


def text_dtype(series: pd.Series) -> bool:
    """Whether a column holds text (object or string dtype)."""
    return pd.api.types.is_object_dtype(series) or pd.api.types.is_string_dtype(series)
