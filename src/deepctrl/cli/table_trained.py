"""Reading a file to score as the model's training file was read, for
[read_table][deepctrl.cli.table_reading.read_table]: how the training file wrote the dots of each
number column (a fact of the file, kept in the model), and a category column's values
matched to the training categories by their text, each row alone.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.decimal_and_thousands import DECIMAL, THOUSANDS
from deepctrl.cli.number_signs import DRESSED, MINUS_SIGN
from deepctrl.tabular.cell_values import category_key
from deepctrl.tabular.column_fitting import Column
from deepctrl.tabular.column_kinds import CATEGORICAL
from deepctrl.tabular.number_text import CURRENCY


def dots_written(
    table: pd.DataFrame, seen: Mapping[str, str], comma_decimals: bool
) -> dict[str, str]:
    """How a semicolon file wrote the dots of each of its columns, as a model keeps it for
    the files it scores: as the thousands step read them (``seen``); as decimal points in a
    column pandas read (``table``) with a fraction; between thousands where the file writes
    its decimals with commas (``comma_decimals``); nothing for a column that tells nothing.

    >>> table = pd.DataFrame({"a": [1.5, 2.0], "b": [1, 2], "c": ["x", "y"]})
    >>> dots_written(table, {"c": THOUSANDS}, False), dots_written(table, {}, True)
    ({'a': 'decimal', 'c': 'thousands'}, {'a': 'decimal', 'b': 'thousands', 'c': 'thousands'})
    """
    found = {}
    for name in table.columns:
        series = table[name]
        if name in seen:
            found[name] = seen[name]
        elif pd.api.types.is_float_dtype(series.dtype) and _fraction(series):
            found[name] = DECIMAL
        elif comma_decimals:
            found[name] = THOUSANDS
    return found


def _fraction(series: pd.Series) -> bool:
    """Whether a column of floats holds a finite value that is not whole."""
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    values = values[np.isfinite(values)]
    return bool((values != np.round(values)).any())


def category_keys(categories: Sequence[Any]) -> set[str | None]:
    """The texts by which a model finds its training ``categories`` of a column (see
    [Column.spellings][deepctrl.tabular.column_fitting.Column.spellings]).

    >>> sorted(category_keys(["S", 36.5, 5.0]))
    ['36.5', '5', '5.0', 'S']
    """
    column = Column("", CATEGORICAL, 0, categories=list(categories))
    return {text for texts in column.spellings() for text in texts}


def category_values(written: pd.Series, keys: set[str | None], sep: str) -> pd.Series:
    """A category column of a file to score, read as text (``written``; missing where
    pandas reads a value as missing), each value matched alone to the training categories'
    ``keys`` (see :func:`category_keys`): a value whose text is one keeps it; another is
    read as a number the way a training file's numbers are (a currency or percent sign
    left out, a decimal comma or thousands separators of a file separated by ``sep``) and
    finds the category that number is, if any; else it stays the text it is (a category
    the model has not seen). A whole number written with leading zeros (``0001``) is a
    code, not a number: it finds only a category written the same, never ``1``.

    >>> keys = category_keys(["S", "36,5", 5.0, "1", None])
    >>> written = pd.Series(["36,5", "$5", "5.0", "XL", "0001", " 01", None])
    >>> category_values(written, keys, ";").tolist()
    ['36,5', '5', '5.0', 'XL', '0001', ' 01', None]
    """
    codes, distinct = pd.factorize(written, use_na_sentinel=True)
    values = np.array([*distinct, None], dtype=object)
    own = [category_key(text) for text in distinct]
    other = [
        i
        for i, key in enumerate(own)
        if key is not None and key not in keys and not _ZERO_PADDED.fullmatch(key)
    ]
    values[[i for i, key in enumerate(own) if key is None]] = None
    texts = pd.Series(values[other], dtype=object)
    found = dict.fromkeys(other, False)
    for numbers in (_numbers(texts), _numbers(_undressed(texts, sep))):
        for i, number in zip(other, numbers, strict=True):
            key = None if number is None else category_key(number)
            if not found[i] and key is not None and key in keys:
                values[i], found[i] = key, True
    return pd.Series(values[codes], index=written.index, name=written.name, dtype=object)


_ZERO_PADDED = re.compile(r"\s*[-+]?0\d+\s*")
"""A whole number written with leading zeros: a code such as 007, not the number 7."""
_BARE = rf"{CURRENCY}|[\s%'\u2019]"
_GROUPED = {  # separator of the file -> a number grouped in thousands, its separator
    ";": (r"[-+]?[1-9]\d{0,2}(?:\.\d{3})+(?:,\d+)?", "."),
    ",": (r"[-+]?[1-9]\d{0,2}(?:,\d{3})+(?:\.\d+)?", ","),
}


def _numbers(texts: pd.Series) -> list[Any]:
    """Each of ``texts`` as pandas reads a number, None where it reads none."""
    numbers = pd.to_numeric(texts, errors="coerce")
    return [None if pd.isna(n) else n for n in numbers]


def _undressed(texts: pd.Series, sep: str) -> pd.Series:
    """``texts`` written as plain numbers where they are numbers of a file separated by
    ``sep``, as its training file's were read: with a currency, percent or minus sign, a
    decimal comma (in a semicolon file) or thousands separators; the others missing.

    >>> _undressed(pd.Series(["−$1.200,5", "36,5", "1.200", "x", "R$ 1 200"]), ";").tolist()
    ['-1200.5', '36.5', '1200', nan, '1200']
    """
    bare = texts.str.replace(MINUS_SIGN, "-", regex=False)
    dressed = bare.str.fullmatch(DRESSED).fillna(False).astype(bool)
    bare = bare.where(dressed).str.replace(_BARE, "", regex=True)
    grouped, group = _GROUPED.get(sep, _GROUPED[","])
    is_grouped = bare.str.fullmatch(grouped).fillna(False).astype(bool)
    bare = bare.where(~is_grouped, bare.str.replace(group, "", regex=False))
    return bare.str.replace(",", ".", regex=False) if sep == ";" else bare
