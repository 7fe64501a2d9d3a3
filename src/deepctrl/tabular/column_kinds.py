"""What a table column holds: numbers, categories or dates, told from its type and, for
text, from its values (dates in ISO 8601 form); and why text that looks like dates or
numbers is read as categories."""

from __future__ import annotations

import datetime
import importlib.util
import re
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.tabular.cell_values import Category, is_missing_text
from deepctrl.tabular.number_text import number_hint

NUMERIC, CATEGORICAL, DATE = "numeric", "categorical", "date"
ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)


_OTHER_DATE = re.compile(
    r"^(?:(?P<y1>\d{4})(?P<s1>[/.-])(?P<a1>\d{1,2})(?P=s1)(?P<b1>\d{1,2})"
    r"|(?P<a2>\d{1,2})(?P<s2>[/.-])(?P<b2>\d{1,2})(?P=s2)(?P<y2>\d{2}|\d{4}))"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?$"
)


_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?"
    r"|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_NAMED_MONTH_DATE = re.compile(
    rf"^(?:(?:\w+,?\s+)?{_MONTH}[\s-]+\d{{1,2}}(?:st|nd|rd|th)?,?[\s-]+\d{{4}}"
    rf"|\d{{1,2}}(?:st|nd|rd|th)?[\s-]+{_MONTH}[\s,-]+\d{{2}}(?:\d{{2}})?)"
    r"(?:,?\s+\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?)?$",
    re.IGNORECASE,
)


def _other_date(text: str) -> bool:
    """Whether ``text`` is a date written another way than ISO 8601: year first or last,
    one separator twice, a day and a month that can be one (``05/24/2023``,
    ``24.05.23``; not a version number such as ``1.2.3`` or ``4.25.7``), or with the
    month's English name (``May 21, 2024``, ``21-May-2024``, ``Tue, Jan 2 2024``).

    >>> [_other_date(t) for t in ("05/24/2023", "2023/5/24", "24.05.23", "1.2.3", "4.25.7")]
    [True, True, True, False, False]
    >>> [_other_date(t) for t in ("May 21, 2024", "21-May-2024", "3rd Sept 2024", "May 21")]
    [True, True, True, False]
    """
    if _NAMED_MONTH_DATE.match(text):
        return True
    match = _OTHER_DATE.match(text)
    if match is None:
        return False
    a, b = (int(match["a1"] or match["a2"]), int(match["b1"] or match["b2"]))
    return 1 <= min(a, b) <= 12 and 1 <= max(a, b) <= 31


def _date_hint(name: str, values: Sequence[Category]) -> str | None:
    """Why a text column that is mostly dates is read as categories, or None.

    >>> _date_hint("day", ["05/24/2023", "05/25/2023", "06/01/2023"])  # doctest: +ELLIPSIS
    "column 'day' looks like dates, but 3 of its 3 distinct values ... (such as '05/24/2023'), ..."
    >>> _date_hint("city", ["Bonn", "Köln"]) is None
    True
    """
    text = [v.strip() for v in values if isinstance(v, str)]
    other = [v for v in text if not ISO_DATE.match(v)]
    dated = len(text) - len(other) + sum(_other_date(v) for v in other)
    if not other or len(text) < 3 or dated < 0.8 * len(text):
        return None
    return (
        f"column {name!r} looks like dates, but {len(other)} of its {len(text)} distinct "
        f"values {'is' if len(other) == 1 else 'are'} not ISO 8601 dates (such as "
        f"{other[0]!r}), so it is read as categories; write dates as YYYY-MM-DD, and leave "
        "unknown ones empty, to use it as dates"
    )


def reading_hint(name: str, values: Sequence[Category]) -> str | None:
    """Why a text column of distinct ``values`` that look like dates or numbers (written in
    a form not read as such, or with a unit) is read as categories, and what to do, or None.

    >>> reading_hint("weight", ["20 kg", "35 kg", "7.5 kg"]).split(", so")[0]
    "column 'weight' looks like numbers with a unit ('20 kg')"
    >>> reading_hint("city", ["Bonn", "Köln", "Ulm"]) is None
    True
    """
    return _date_hint(name, values) or number_hint(name, values)


DISTINCT_SAMPLE = 10_000
"""How many first rows tell whether a text column repeats its values enough for them to
be read once per distinct value (when more than nine in ten of these differ, it does not)."""


def text_codes(series: pd.Series) -> tuple[np.ndarray, Any] | None:
    """A column of text (missing values allowed) as codes into its distinct values, for
    work done once per distinct value; None for a column holding other objects (Timestamps
    of several zones, which compare equal when they name one instant, are not merged), or
    whose first rows are mostly distinct (times to the second), where the codes cost more
    than they save.

    >>> codes, distinct = text_codes(pd.Series(["b", "a", "b", None]))
    >>> codes.tolist(), list(distinct[:2])
    ([0, 1, 0, 2], ['b', 'a'])
    >>> text_codes(pd.Series([datetime.date(2024, 5, 31)])) is None
    True
    """
    if pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return None
    head = series.iloc[:DISTINCT_SAMPLE]
    if len(series) > DISTINCT_SAMPLE and head.nunique(dropna=False) > 0.9 * DISTINCT_SAMPLE:
        return None
    return pd.factorize(series, use_na_sentinel=False)


def _is_date(value: Any) -> bool:
    return isinstance(value, datetime.date) or (
        isinstance(value, str) and bool(ISO_DATE.match(value.strip()))
    )


def _looks_like_dates(series: pd.Series) -> bool:
    """Whether every present value is a date: text in ISO 8601 date form, or a Python date
    or datetime (as a Parquet date column reads). A text column is rejected after a look
    at its first present value; a text column of repeated values is read once per distinct
    value.

    >>> _looks_like_dates(pd.Series([datetime.date(2024, 5, 31), None, "2024-06-01"]))
    True
    """
    coded = text_codes(series)
    values = series.tolist() if coded is None else coded[1]
    text = stripped_text(values)
    if text is not None:  # text only: judged at once, after a look at its first value
        present = text.dropna()
        if present.empty or not ISO_DATE.match(present.iloc[0]):
            return False
        return bool(present.str.match(ISO_DATE.pattern).all())
    seen = False
    for v in values:
        if is_missing_text(v):
            continue
        if not _is_date(v):
            return False
        seen = True
    return seen


ARROW_TEXT = "string[pyarrow]" if importlib.util.find_spec("pyarrow") else "string"
"""The text type zones are cut from: pyarrow's where it is installed."""


def stripped_text(values: Any) -> pd.Series | None:
    """Values that are all text (or missing) with the spaces around them stripped and
    empty text missing, in pyarrow's strings when pyarrow is installed (whose string
    functions run at once rather than value by value); None when some value is not text.

    >>> stripped_text([" 2024-05-31", "  ", None, "b "]).astype(object).fillna("-").tolist()
    ['2024-05-31', '-', '-', 'b']
    >>> stripped_text(["a", 1]) is None
    True
    """
    series = pd.Series(values, dtype=object)
    if pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        return None
    text = series.astype(ARROW_TEXT).str.strip()
    return text.mask(text == "")


def column_kind(series: pd.Series) -> str:
    """numeric, categorical or date, from the column's type (text in ISO 8601 date form is a
    date)."""
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return CATEGORICAL
    if hasattr(getattr(dtype, "pyarrow_dtype", None), "index_type"):  # pyarrow's categories
        return CATEGORICAL
    if pd.api.types.is_datetime64_any_dtype(dtype):
        return DATE
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return NUMERIC
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return DATE if _looks_like_dates(series) else CATEGORICAL
    period = (
        f" (a period: X[{series.name!r}].dt.to_timestamp() makes dates of it)"
        if isinstance(dtype, pd.PeriodDtype)
        else ""
    )
    raise ValueError(
        f"column {series.name!r} has unsupported type {dtype}; "
        f"use numbers, dates, text, categories or booleans{period}"
    )
