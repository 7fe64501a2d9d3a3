"""Tables to model inputs for the estimators.

* numeric columns are standardized; missing values (NaN) take the training mean and, where
  the training rows had any, an indicator input (1 where the value was missing);
* categorical columns (text, category, bool) are one-hot; a missing value (NaN, None, empty
  text) is a category of its own;
* date columns (datetime64, or text in ISO 8601 form such as ``2024-05-31`` or
  ``2024-05-31 14:00``) become a few numeric inputs: the days since the first training
  date (standardized) and, where they vary in training, the time of year (for a span of a
  year or more), the weekday and the time of day as sine/cosine pairs; missing dates are
  imputed like numbers. A date after the training range is simply a larger number. Dates
  with a time zone are read at the wall-clock time they show.

The encoder remembers every column, so rules can name columns and model files can rebuild
the preprocessing.

>>> import pandas as pd
>>> frame = pd.DataFrame({"price": [1.0, 2.0, 3.0, None], "color": ["red", "blue", "red", ""]})
>>> enc = TableEncoder.fit(frame)
>>> enc.encoded_names()
['price', 'price (missing)', 'color=(missing)', 'color=blue', 'color=red']
>>> enc.transform(frame)[:, :2].astype(float).round(3).tolist()
[[-1.225, 0.0], [0.0, 0.0], [1.225, 0.0], [0.0, 1.0]]
"""

from __future__ import annotations

import datetime
import importlib.util
import re
import shlex
import unicodedata
import warnings
from collections.abc import Collection, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.number_text import number_hint

NUMERIC, CATEGORICAL, DATE = "numeric", "categorical", "date"
Category = str | int | float | bool | None
MISSING_NAME = "(missing)"
DAY = np.timedelta64(1, "D")
DATES = (np.datetime64("1677-09-22"), np.datetime64("2262-04-11"))
"""The dates a model reads: those of 64-bit nanoseconds, whole days inside."""
DATE_PARTS = {"year": 365.2425, "week": 7.0, "day": 1.0}
"""Cyclic date parts and their period in days."""
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?"
    r"(Z|[+-]\d{2}:?\d{2})?$"
)


@dataclass
class Column:
    """One input column: its kind, scaling and range (numeric, date), categories
    (categorical), how many training values were missing, and where its encoding starts in
    the model input (the value first, then cyclic date parts, then the missing indicator)."""

    name: str
    kind: str
    start: int
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 0.0
    categories: list[Category] = field(default_factory=list)
    integer: bool = False
    missing: int = 0
    indicator: bool = False
    origin: str = ""
    parts: list[str] = field(default_factory=list)
    zoned: bool = False
    """A date column whose training values carried a time zone."""
    clock: str = "utc"
    """How dates with a time zone are read: ``"local"``, at the wall-clock time they show
    (every date column fitted since), or ``"utc"``, converted to UTC (model files from
    before, and columns whose training dates were all in UTC: `Z` or `+00:00`)."""

    @property
    def local(self) -> bool:
        """Whether zoned dates are read at their wall-clock time, not in UTC."""
        return self.clock == "local"

    @property
    def width(self) -> int:
        if self.kind == CATEGORICAL:
            return len(self.categories)
        return 1 + 2 * len(self.parts) + int(self.indicator)

    @property
    def ordered(self) -> bool:
        """Whether a rule can raise this column (numeric or date)."""
        return self.kind in (NUMERIC, DATE)

    @property
    def boolean(self) -> bool:
        """A categorical column whose training categories are booleans."""
        known = [v for v in self.categories if v is not None]
        return self.kind == CATEGORICAL and bool(known) and all(isinstance(v, bool) for v in known)

    def spellings(self) -> list[tuple[str | None, ...]]:
        """Each category's texts that find it: its :func:`category_key`, the same text with
        its accents as separate marks (Unicode NFD) where that differs, and for a boolean
        also the lower and upper case ("true", "TRUE" beside "True").

        >>> Column("promo", CATEGORICAL, 0, categories=[None, False, True]).spellings()
        [(None,), ('False', 'false', 'FALSE'), ('True', 'true', 'TRUE')]
        >>> Column("city", CATEGORICAL, 0, categories=["K\u00f6ln"]).spellings() == [
        ...     ("K\u00f6ln", "Ko\u0308ln")
        ... ]
        True
        """
        keys = [category_key(v) for v in self.categories]
        if self.boolean:
            return [(k,) if k is None else (k, k.lower(), k.upper()) for k in keys]
        return [
            (k,) if k is None else tuple(dict.fromkeys((k, unicodedata.normalize("NFD", k))))
            for k in keys
        ]

    def to_encoded(self, value: float) -> float:
        """A value in the column's units (days since ``origin`` for a date) as the model
        sees it (standardized)."""
        return (float(value) - self.mean) / self.std

    def encoded_names(self) -> list[str]:
        if self.kind == CATEGORICAL:
            return [f"{self.name}={MISSING_NAME if v is None else v}" for v in self.categories]
        names = [self.name if self.kind == NUMERIC else f"{self.name} (days)"]
        for part in self.parts:
            names += [f"{self.name} ({part} sin)", f"{self.name} ({part} cos)"]
        return names + ([f"{self.name} (missing)"] if self.indicator else [])


def is_missing_text(value: Any) -> bool:
    """Whether a table value means "no value": None, NaN, NA, NaT, or text of spaces only.

    >>> [is_missing_text(v) for v in (None, float("nan"), "  ", "a", 0)]
    [True, True, True, False, False]
    """
    return (
        value is None
        or (isinstance(value, str) and value.strip() == "")
        or (isinstance(value, float) and bool(np.isnan(value)))
        or value is pd.NA
        or value is pd.NaT
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
    other = [v for v in text if not _ISO_DATE.match(v)]
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
        isinstance(value, str) and bool(_ISO_DATE.match(value.strip()))
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
        if present.empty or not _ISO_DATE.match(present.iloc[0]):
            return False
        return bool(present.str.match(_ISO_DATE.pattern).all())
    seen = False
    for v in values:
        if is_missing_text(v):
            continue
        if not _is_date(v):
            return False
        seen = True
    return seen


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
    text = series.astype(_ARROW_TEXT).str.strip()
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


def _plain(value: Any) -> Category:
    """A category as a plain JSON-friendly Python value (None for a missing value); text
    with its accents composed (Unicode NFC), so that ``Köln`` written with a separate
    accent mark (as macOS may write it) is the same category as ``Köln`` typed in one.

    >>> _plain("Ko\u0308ln") == "K\u00f6ln", _plain(np.int64(3)), _plain("")
    (True, 3, None)
    """
    if is_missing_text(value):
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if not isinstance(value, str | int | float | bool):
        raise ValueError(f"category {value!r} is neither text, a number nor a boolean")
    return value


def _plain_all(values: Any, column: Any) -> list[Category]:
    """:func:`_plain` of every value, an error naming the column.

    >>> _plain_all([pd.Interval(0, 1)], "age band")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: column 'age band': category Interval(0, 1, ...) is neither text, ...
    """
    try:
        return [_plain(v) for v in values]
    except ValueError as exc:
        raise ValueError(f"column {column!r}: {exc}") from None


def _booleans_as_text(series: pd.Series) -> pd.Series:
    """A mixed column with its booleans as their text: True equals 1 in Python, so the
    boolean True and the number 1 of one column would otherwise be one category.

    >>> _booleans_as_text(pd.Series([True, 1, "a"], dtype=object)).tolist()
    ['True', 1, 'a']
    """
    flags = series.map(lambda v: isinstance(v, bool | np.bool_))
    if not flags.any():
        return series
    return series.where(~flags, series.map(str))


def _plain_codes(series: pd.Series) -> tuple[np.ndarray, list[Category]]:
    """Each row's index into the column's distinct values, and those values as plain
    categories (None where missing); :func:`_plain` runs once per distinct value."""
    if pd.api.types.infer_dtype(series, skipna=True).startswith("mixed"):
        series = _booleans_as_text(series)
    try:
        # on the column itself: text columns give no Python string per row
        codes, distinct = pd.factorize(series, use_na_sentinel=False)
    except TypeError:
        raise ValueError(
            f"column {series.name!r} holds values that are neither text nor numbers"
        ) from None
    return np.asarray(codes, dtype=np.int64), _plain_all(distinct, series.name)


NESTED = (list, tuple, dict, set, np.ndarray)
"""Cell values a table column cannot hold: each column is one input (or one category)."""


def check_flat(frame: pd.DataFrame, where: str = "X") -> None:
    """A `ValueError` naming the first column whose cells are lists, arrays or records
    (Parquet list and struct columns): a model takes one value per cell.

    >>> check_flat(pd.DataFrame({"tags": [[1, 2], [3]]}))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: X: column 'tags' holds lists, not single values; spread them over columns ...
    """
    for name in frame.columns:
        column = frame[name]
        if column.dtype != object:
            continue
        first = column.dropna().head(1)
        if len(first) and isinstance(first.iloc[0], NESTED):
            kind = {dict: "records", np.ndarray: "lists"}.get(type(first.iloc[0]), "lists")
            raise ValueError(
                f"{where}: column {str(name)!r} holds {kind}, not single values; spread them "
                "over columns of their own or leave the column out"
            )


def shown(value: Any) -> str:
    """``repr`` of a value from a table, numpy scalars shown as Python ones.

    >>> shown(np.str_("late")), shown(np.int64(3))
    ("'late'", '3')
    """
    return repr(value.item() if isinstance(value, np.generic) else value)


def _why_unknown(name: str, names: Sequence[str]) -> str:
    """A hint for a column name the table lacks: a column that is the name but for spaces
    around it, or for how its accents are written (composed or not, which looks the same),
    the names a transformer gave it (``num__price`` from a ColumnTransformer), or a table
    that came without names.

    >>> _why_unknown("price", ["num__price", "cat__shop"])
    "; a transformer renamed it: write 'num__price'"
    >>> _why_unknown("price", ["x0", "x1"])[:46]
    '; the table came without column names (an arra'
    >>> _why_unknown("quality", ["price", "quality "])
    "; column 'quality ' has spaces around its name"
    >>> _why_unknown(" quality", ["price", "quality"])
    "; the name ' quality' has spaces around it, where the table writes 'quality'"
    """
    for other in names:
        if other != name and other.strip() == name.strip() and other == other.strip():
            return f"; the name {name!r} has spaces around it, where the table writes {other!r}"
        if other != name and other.strip() == name.strip():
            return f"; column {other!r} has spaces around its name"
        if other != name and unicodedata.normalize("NFC", other) == unicodedata.normalize(
            "NFC", name
        ):
            return (
                f"; column {other!r} is this name with its accents written otherwise (as "
                "separate marks, as macOS may write names, or the other way): write both as "
                "unicodedata.normalize('NFC', name)"
            )
    renamed = [n for n in names if n.endswith(f"__{name}")]
    if renamed:
        return f"; a transformer renamed it: write {renamed[0]!r}"
    if names and all(n == f"x{i}" for i, n in enumerate(names)):
        return (
            "; the table came without column names (an array, or a transformer or "
            "meta-estimator that dropped them): keep them with "
            "set_output(transform='pandas') on the pipeline, or name the column by position"
        )
    return ""


def listed(names: Sequence[Any], limit: int = 20) -> str:
    """Names for a message: the first ``limit``, then how many there are in all.

    >>> listed(["a", "b"]), listed([f"x{i}" for i in range(300)], limit=3)
    ('a, b', 'x0, x1, x2, ... (300 in all)')
    """
    shown = ", ".join(str(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def rows_have(n: int) -> str:
    """``"1 row has"`` or ``"n rows have"``, for messages.

    >>> rows_have(1), rows_have(3)
    ('1 row has', '3 rows have')
    """
    return "1 row has" if n == 1 else f"{n} rows have"


def category_key(value: Any) -> str | None:
    """A table value as category text (None when missing), whole numbers without a decimal
    point: the spelling by which a value read another way (the text "10" from a CSV, the
    number 10 or 10.0 from a frame, "True" beside the boolean True) still finds its
    training category.

    >>> category_key(10.0), category_key("10"), category_key(np.bool_(True)), category_key(" ")
    ('10', '10', 'True', None)
    """
    plain = _plain(value)
    if plain is None:
        return None
    if isinstance(plain, float) and plain.is_integer():
        return str(int(plain))
    return str(plain)


def numeric_values(series: pd.Series) -> np.ndarray:
    """The values of a numeric column as float64 (NaN where missing); infinities are errors."""
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = int(np.isinf(values).sum())
    if infinite:
        raise ValueError(
            f"column {series.name!r} has inf (infinite) values in {infinite} of {len(series)} rows"
        )
    return values


def date_text_rows(series: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Which rows of a text column hold an ISO 8601 date, and which hold a value that is
    present but not a date (a mistyped date, "soon"; in that case not an ISO date either).

    >>> dated, other = date_text_rows(pd.Series(["2024-01-02", "soon", None, "2024-02-30"]))
    >>> dated.tolist(), other.tolist()
    ([True, False, False, True], [False, True, False, True])
    """
    codes, distinct = pd.factorize(series, use_na_sentinel=False)  # each value read once
    text = pd.Series([None if is_missing_text(v) else str(v).strip() for v in distinct])
    present = text.notna().to_numpy()
    dated = present & text.str.match(_ISO_DATE).fillna(False).to_numpy(dtype=bool)
    other = present & ~dated
    try:
        parsed = pd.to_datetime(text[dated], format="ISO8601", utc=True, errors="coerce")
        other[np.flatnonzero(dated)[parsed.isna().to_numpy()]] = True
    except (ValueError, TypeError, OverflowError):
        pass
    return dated[codes], other[codes]


def _not_dates(series: pd.Series, exc: Exception) -> str:
    """The error for a date column with a value that is not a date: the first such value
    and its row when one value is to blame.

    >>> _not_dates(pd.Series(["2024-01-02", "soon"], name="day"), ValueError("x"))
    "column 'day' holds a value that is not an ISO 8601 date: 'soon' (row 1)"
    """
    bad = np.flatnonzero(date_text_rows(series)[1])
    if len(bad):
        return (
            f"column {series.name!r} holds a value that is not an ISO 8601 date: "
            f"{shown(series.iloc[bad[0]])} (row {bad[0]})"
        )
    return f"column {series.name!r} holds values that are not dates: {str(exc).splitlines()[0]}"


def date_values(series: pd.Series, local: bool = False) -> np.ndarray:
    """A date column as datetime64[ns] (NaT where missing). Dates with a time zone are
    converted to UTC, or with `local` kept at the wall-clock time they show.

    >>> zoned = pd.Series(["2024-03-25T00:00+01:00", "2024-04-01T00:00+02:00"])
    >>> date_values(zoned).astype(str).tolist()
    ['2024-03-24T23:00:00.000000000', '2024-03-31T22:00:00.000000000']
    >>> date_values(zoned, local=True).astype(str).tolist()
    ['2024-03-25T00:00:00.000000000', '2024-04-01T00:00:00.000000000']
    """
    codes = None
    series = _pandas_zoned(series)
    try:
        if pd.api.types.is_datetime64_any_dtype(series.dtype):
            zoned = isinstance(series.dtype, pd.DatetimeTZDtype)
            parsed = pd.to_datetime(series, utc=zoned and not local)
            if zoned and local:
                parsed = parsed.dt.tz_localize(None)
        else:  # text is parsed once per distinct value
            codes, values = text_codes(series) or (None, series.tolist())
            text = pd.Series(
                [None if is_missing_text(v) else str(v).strip() for v in values], dtype=object
            )
            if local:  # pyarrow's strings replace three times faster than objects
                text = text.astype(_ARROW_TEXT).str.replace(_ZONE, "", regex=True)
            parsed = pd.to_datetime(text, format="ISO8601", utc=True)
    except (ValueError, TypeError, OverflowError) as exc:
        raise ValueError(_not_dates(series, exc)) from None
    if isinstance(parsed.dtype, pd.DatetimeTZDtype):
        parsed = parsed.dt.tz_convert("UTC").dt.tz_localize(None)
    native = parsed.to_numpy()
    if codes is not None:
        native = native[codes]
    outside = np.flatnonzero(~np.isnat(native) & ((native < DATES[0]) | (native > DATES[1])))
    if len(outside):
        raise ValueError(
            f"column {series.name!r} holds a date outside {DATES[0]} - {DATES[1]}, the "
            f"range the model reads dates in: {shown(series.iloc[outside[0]])} (row "
            f"{outside[0]}); leave such dates empty to mark them missing"
        )
    return native.astype("datetime64[ns]")


def _pandas_zoned(series: pd.Series) -> pd.Series:
    """A column of pyarrow times with a zone (``timestamp[us, tz=...][pyarrow]``, as
    ``dtype_backend="pyarrow"`` reads them) as pandas' zoned times, which keep the zone;
    any other column as it is.

    >>> import pyarrow as pa
    >>> arrow = pd.Series([0], dtype=pd.ArrowDtype(pa.timestamp("s", tz="Asia/Kolkata")))
    >>> str(_pandas_zoned(arrow).dtype)
    'datetime64[s, Asia/Kolkata]'
    """
    arrow: Any = getattr(series.dtype, "pyarrow_dtype", None)
    if isinstance(series.dtype, pd.ArrowDtype) and getattr(arrow, "tz", None):
        return series.astype(pd.DatetimeTZDtype(arrow.unit, arrow.tz))
    return series


_ZONE = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$")
_ARROW_TEXT = "string[pyarrow]" if importlib.util.find_spec("pyarrow") else "string"
"""The text type zones are cut from: pyarrow's where it is installed."""


def has_zone(series: pd.Series) -> bool:
    """Whether a date column's values carry a time zone (a zoned dtype, or ISO text ending in
    ``Z`` or an offset such as ``+02:00``).

    >>> has_zone(pd.Series(["2024-05-31T14:00+02:00", None])), has_zone(pd.Series(["2024-05-31"]))
    (True, False)
    """
    if isinstance(_pandas_zoned(series).dtype, pd.DatetimeTZDtype):
        return True
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return False
    coded = text_codes(series)  # text: each distinct value once
    values = series.dropna() if coded is None else pd.Series(coded[1], dtype=object).dropna()
    texts = values.map(lambda v: isinstance(v, str))
    others = values[~texts]  # Timestamps of several zones (pandas leaves them as objects)
    if others.map(lambda v: getattr(v, "tzinfo", None) is not None).any():
        return True
    text = values[texts].astype(str).str.strip()
    return bool(text.str.contains(_ZONE).any())


def _days(dates: np.ndarray, origin: str) -> np.ndarray:
    """Days (float, NaN where missing) from ``origin`` to each date."""
    out = (dates - np.datetime64(origin, "ns")) / DAY
    return np.where(np.isnat(dates), np.nan, out)


def _cyclic(days: np.ndarray, dates: np.ndarray, part: str) -> np.ndarray:
    """(rows, 2) sine and cosine of a date part (0 for missing dates)."""
    if part == "year":
        phase = (dates - dates.astype("datetime64[Y]")) / DAY / DATE_PARTS["year"]
    elif part == "week":  # 1970-01-01 was a Thursday: shift so Monday is 0
        phase = (
            (dates.astype("datetime64[D]").astype(np.int64) + 3) % 7
            + (dates - dates.astype("datetime64[D]")) / DAY
        ) / 7.0
    else:
        phase = (dates - dates.astype("datetime64[D]")) / DAY
    angle = 2 * np.pi * np.where(np.isnan(days), 0.0, phase)
    return np.where(np.isnan(days)[:, None], 0.0, np.column_stack([np.sin(angle), np.cos(angle)]))


def _sort_key(value: Category) -> tuple[int, str, str]:
    return (value is not None, type(value).__name__, str(value))


def _one_per_spelling(name: str, categories: list[Category]) -> list[Category]:
    """``categories`` with one per :func:`category_key`: a column holding 3 and "3" (as
    pandas' ``read_csv`` may type a large file's chunks) has one category 3, which both
    find; a warning says so.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     _one_per_spelling("code", [1, 3, "3", "x"])
    [1, 3, 'x']
    >>> print(seen[0].message)  # doctest: +NORMALIZE_WHITESPACE
    column 'code' holds 1 category both as a number and as text (such as 3 and '3'), read as
    one: give the column one type (pandas' read_csv types a large file's chunks apart unless
    given low_memory=False)
    """
    kept: dict[str | None, Category] = {}
    twice = []
    for value in categories:
        key = category_key(value)
        if key in kept:
            twice.append((kept[key], value))
        else:
            kept[key] = value
    if twice:
        first, other = twice[0]
        warnings.warn(
            f"column {name!r} holds {len(twice)} categor{'y' if len(twice) == 1 else 'ies'} "
            f"both as a number and as text (such as {first!r} and {other!r}), read as one: "
            "give the column one type (pandas' read_csv types a large file's chunks apart "
            "unless given low_memory=False)",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    return list(kept.values())


def _scaled(name: str, kind: str, start: int, values: np.ndarray) -> Column:
    """A numeric (or date) column's scaling and range from its non-missing values."""
    present = values[~np.isnan(values)]
    if present.size == 0:
        raise ValueError(f"column {name!r} has no values, only missing ones")
    unit = float(np.abs(present).max()) or 1.0
    with np.errstate(over="ignore"):
        mean, std = float(present.mean()), float(present.std())
    if not np.isfinite(std):  # squares beyond float64 (values near 1e155 and up): in units
        mean, std = float((present / unit).mean()) * unit, float((present / unit).std()) * unit
    missing = int(values.size - present.size)
    if kind == NUMERIC:
        _warn_dwarfed(name, present, std)
    return Column(
        name,
        kind,
        start,
        mean,
        std if std > 1e-12 * unit else 1.0,
        float(present.min()),
        float(present.max()),
        integer=bool(np.all(present == np.round(present))),
        missing=missing,
        indicator=missing > 0,
    )


DWARFED = 1e-4
"""When the middle 98 % of a column's training values span less than this many standard
deviations, a few values dwarf the others, which then encode almost alike."""
FAR_WIDTHS = 1.0
"""A value beyond its column's training range by more than this many times the range's
width is far outside it."""


def _warn_dwarfed(name: str, present: np.ndarray, std: float) -> None:
    """A warning when a few values of a number column lie so far from the others that
    those encode almost alike (one typo of 1e30 among prices of 2 to 8)."""
    low, middle, high = np.percentile(present, [1, 50, 99])
    if 0 < high - low < DWARFED * std:
        worst = present[int(np.abs(present - middle).argmax())]
        warnings.warn(
            f"column {name!r}: its value {worst:g} dwarfs its other values ({low:.3g} to "
            f"{high:.3g} for 98 % of them), which then encode almost alike, so the model can "
            "hardly use the column; correct or remove that value",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )


def _numeric_input(c: Column, values: np.ndarray, index: pd.Index) -> np.ndarray:
    """A number column's values scaled as in training (missing ones 0); an error naming
    the first value too large for float32 once scaled, and one warning when values lie
    far outside the training range (beyond it by more than its width)."""
    with np.errstate(over="ignore", invalid="ignore"):
        scaled = np.where(np.isnan(values), 0.0, (values - c.mean) / c.std)
    huge = np.isfinite(values) & (np.abs(scaled) > np.finfo(np.float32).max)
    if huge.any():
        first = int(np.flatnonzero(huge)[0])
        raise ValueError(
            f"column {c.name!r}: the value {values[first]:g} (row {index[first]}) is too "
            f"large for the model once scaled (training values {c.low:g} to {c.high:g})"
        )
    width = max(c.high - c.low, c.std)
    with np.errstate(invalid="ignore"):
        far = np.isfinite(values) & (
            (values < c.low - FAR_WIDTHS * width) | (values > c.high + FAR_WIDTHS * width)
        )
    if far.any():
        worst = values[far][np.argmax(np.abs(values[far] - (c.low + c.high) / 2))]
        warnings.warn(
            f"column {c.name!r}: {rows_have(int(far.sum()))} a value beyond the training "
            f"range ({c.low:g} to {c.high:g}) by more than its width (up to {worst:g}); "
            "the model extrapolates there",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    return scaled


def _warn_far_dates(c: Column, days: np.ndarray, dates: np.ndarray) -> None:
    """One warning when dates lie far outside the training dates (beyond them by more than
    their span; a year typed 2204 for 2024, or microseconds read as nanoseconds)."""
    width = max(c.high - c.low, c.std)
    with np.errstate(invalid="ignore"):
        far = (days < c.low - FAR_WIDTHS * width) | (days > c.high + FAR_WIDTHS * width)
    if not far.any():
        return
    centre = (c.low + c.high) / 2
    worst = dates[far][np.argmax(np.abs(days[far] - centre))]
    first, last = (
        str(np.datetime64(c.origin, "ns") + np.timedelta64(round(d * 86400), "s"))[:10]
        for d in (c.low, c.high)
    )
    warnings.warn(
        f"column {c.name!r}: {rows_have(int(far.sum()))} a date beyond the training dates "
        f"({first} to {last}) by more than their span (up to {str(worst)[:10]}); the model "
        "extrapolates there",
        UserWarning,
        stacklevel=outside_stacklevel(),
    )


def _first_odd(series: pd.Series) -> str:
    """Where a column that should hold numbers does not: its first value that is not one.

    >>> _first_odd(pd.Series([1.5, "abc", None]))
    "but row 1 holds 'abc'"
    """
    present = series.notna().to_numpy()
    numbers = pd.to_numeric(series, errors="coerce").notna().to_numpy()
    odd = np.flatnonzero(present & ~numbers)
    if not len(odd):
        return f"got type {series.dtype}"
    return f"but row {int(odd[0])} holds {shown(series.iloc[odd[0]])}"


def _fit_column(name: str, series: pd.Series, start: int, trend: bool = False) -> Column:
    kind = column_kind(series)
    if kind == NUMERIC:
        return _scaled(name, kind, start, numeric_values(series))
    if kind == DATE:
        dates = date_values(series, local=True)
        if np.isnat(dates).all():
            raise ValueError(f"column {name!r} has no dates, only missing values")
        origin = str(dates[~np.isnat(dates)].min())
        days = _days(dates, origin)
        col = _scaled(name, kind, start, days)
        col.origin, col.integer, col.zoned = origin, False, has_zone(series)
        # dates all in UTC ("Z") mean UTC clock times: new ones with an offset are converted
        in_utc = col.zoned and np.array_equal(dates, date_values(series), equal_nan=True)
        col.clock = "utc" if in_utc else "local"
        present = dates[~np.isnat(dates)]
        span = float(np.nanmax(days) - np.nanmin(days))
        time = present - present.astype("datetime64[D]")
        weekdays = (present.astype("datetime64[D]").astype(np.int64) + 3) % 7
        col.parts = [
            part
            for part, varies in (
                ("year", span >= 365 and not trend),
                ("week", len(np.unique(weekdays)) > 1),
                ("day", len(np.unique(time)) > 1),
            )
            if varies
        ]
        return col
    codes, distinct = _plain_codes(series)
    if all(v is None for v in distinct) and not isinstance(series.dtype, pd.CategoricalDtype):
        raise ValueError(f"column {name!r} has no values, only missing ones")
    counts = np.bincount(codes, minlength=len(distinct))
    missing = int(sum(k for k, v in zip(counts, distinct, strict=True) if v is None))
    if isinstance(series.dtype, pd.CategoricalDtype):
        declared = _plain_all(series.dtype.categories, series.name)
        cats = ([None] if missing else []) + list(dict.fromkeys(declared))
    else:
        try:
            cats = _one_per_spelling(name, sorted(set(distinct), key=_sort_key))
        except TypeError:
            raise ValueError(
                f"column {name!r} holds values that are neither text nor numbers"
            ) from None
    hint = reading_hint(name, cats)
    if hint is not None:
        warnings.warn(hint, UserWarning, stacklevel=outside_stacklevel())
    elif len(cats) > 50 and len(cats) > 0.5 * len(series):
        warnings.warn(
            f"column {name!r} has {len(cats)} distinct values in {len(series)} "
            "rows, one input each, which slows training and leaves new values unseen; drop "
            "it if it is an identifier (on the command line: --id-column "
            f"{shlex.quote(name)})",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    return Column(name, kind, start, categories=cats, missing=missing)


class TableEncoder:
    """The fitted preprocessing of a table: column order, scaling, categories, dates and
    missing values."""

    def __init__(self, columns: list[Column]) -> None:
        self.columns = columns
        self._by_name = {c.name: c for c in columns}
        self.dots: dict[str, str] = {}
        """How the semicolon CSV file the command line fitted on wrote each number column's
        dots ("thousands" or "decimal"), for it to read the files it scores alike; kept in
        the model file, and read by nothing else."""

    @classmethod
    def fit(cls, frame: pd.DataFrame, trends: Collection[str] = ()) -> TableEncoder:
        """Learn the preprocessing of ``frame`` (its column names must be unique).

        A date column named in ``trends`` (one a rule raises: "rises over time") gets no
        time-of-year inputs: over the year or two a table often spans, they could carry the
        trend the rule constrains past it, since the rule moves the days alone.
        """
        names = [str(c) for c in frame.columns]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"column names must be unique; repeated: {dup}")
        columns, start = [], 0
        for name, (_, series) in zip(names, frame.items(), strict=True):
            col = _fit_column(name, series.rename(name), start, trend=name in trends)
            columns.append(col)
            start += col.width
        return cls(columns)

    @property
    def n_encoded(self) -> int:
        return sum(c.width for c in self.columns)

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def encoded_names(self) -> list[str]:
        """One name per model input: ``price``, ``price (missing)``, ``color=red``,
        ``day (days)``, ``day (week sin)``, ..."""
        return [name for c in self.columns for name in c.encoded_names()]

    def column(self, ref: str | int) -> Column:
        """The column named ``ref``, or at position ``ref`` when it is an integer.

        Column names are text (a frame's labels 1, 2 become "1", "2"), so an integer that
        is also another column's name is refused as ambiguous:

        >>> enc = TableEncoder.fit(pd.DataFrame({"1": [1.0, 2.0], "2": [3.0, 4.0]}))
        >>> enc.column("1").name, enc.column(0).name
        ('1', '1')
        >>> enc.column(1)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: column 1 is ambiguous: position 1 is column '2', and a column is named '1'...
        """
        if isinstance(ref, bool | np.bool_):
            raise ValueError(f"a column is named by text or position, got {ref!r}")
        if isinstance(ref, int | np.integer):
            ref, label = int(ref), str(int(ref))
            if not 0 <= ref < len(self.columns):
                named = (
                    f"; a column is named {label!r}: write it as text"
                    if label in self._by_name
                    else ""
                )
                raise ValueError(
                    f"column position {ref} is out of range: the table has "
                    f"{len(self.columns)} columns{named}"
                )
            col = self.columns[ref]
            if label in self._by_name and col.name != label:
                raise ValueError(
                    f"column {ref} is ambiguous: position {ref} is column {col.name!r}, and a "
                    f"column is named {label!r}; write the name as text ({label!r}) to mean "
                    "that column"
                )
            return col
        if ref not in self._by_name:
            raise ValueError(
                f"unknown column {ref!r}; the table has: {listed([repr(n) for n in self.names])}"
                + _why_unknown(ref, self.names)
            )
        return self._by_name[ref]

    def ordered(self, ref: str | int, purpose: str) -> Column:
        """Like :meth:`column`, but a column a rule can raise: numeric or a date; errors
        start with ``purpose``."""
        try:
            col = self.column(ref)
        except ValueError as exc:
            raise ValueError(f"{purpose}: {exc}") from None
        if not col.ordered:
            values = [c for c in col.categories if c is not None]
            if {str(v) for v in values} <= {"True", "False"}:
                why = " (True/False values; write them as 1/0 for a rule to raise them)"
            else:
                shown = ", ".join(repr(v) for v in values[:3])
                why = f" (values such as {shown})" if values else ""
            raise ValueError(
                f"{purpose} needs a numeric or date column, but {col.name!r} is categorical{why}"
            )
        return col

    def transform(self, frame: pd.DataFrame, rows: np.ndarray | None = None) -> np.ndarray:
        """The model input for ``frame`` (float32, one row per row). Missing values are
        imputed; unknown categories encode as all zeros, with a warning.

        With ``rows`` (positions), only those rows, in that order: the same as
        ``transform(frame)[rows]`` without holding the whole encoded table.
        """
        absent = [c.name for c in self.columns if c.name not in frame.columns]
        if absent:
            raise ValueError(f"the data lacks column(s) the model needs: {listed(absent)}")
        take: slice | np.ndarray = slice(None) if rows is None else np.asarray(rows)
        out = np.zeros(
            (len(frame) if rows is None else len(rows), self.n_encoded), dtype=np.float32
        )
        for c in self.columns:
            series = frame[c.name]
            if c.kind == CATEGORICAL:
                self._one_hot(c, series, take, out)
                continue
            kind = column_kind(series)
            if kind != c.kind and not (c.kind == DATE and kind == CATEGORICAL):
                if not series.map(is_missing_text).all():
                    raise ValueError(f"column {c.name!r} must be {c.kind}, {_first_odd(series)}")
                # no value at all (one row of a request, say): missing, of the column's kind
                series = pd.Series(
                    np.nan if c.kind == NUMERIC else pd.NaT,
                    index=series.index,
                    dtype=np.float64 if c.kind == NUMERIC else "datetime64[ns]",
                )
            if c.kind == NUMERIC:
                values = numeric_values(series)[take]
            else:
                if not c.local and c.zoned and series.notna().any() and not has_zone(series):
                    warnings.warn(
                        f"column {c.name!r}: these dates have no time zone, so they are read "
                        "as UTC, while the training dates had zones; give them their zone "
                        "when the time of day matters",
                        UserWarning,
                        stacklevel=outside_stacklevel(),
                    )
                dates = date_values(series, local=c.local)[take]
                values = _days(dates, c.origin)
                _warn_far_dates(c, values, dates)
                for j, part in enumerate(c.parts):
                    out[:, c.start + 1 + 2 * j : c.start + 3 + 2 * j] = _cyclic(values, dates, part)
            missing = np.isnan(values)
            if missing.any() and not c.indicator:
                warnings.warn(
                    f"column {c.name!r}: {rows_have(int(missing.sum()))} a missing value, which "
                    "training had none of; they take the training mean",
                    UserWarning,
                    stacklevel=outside_stacklevel(),
                )
            if c.kind == NUMERIC:
                out[:, c.start] = _numeric_input(c, values, series.index[take])
            else:
                out[:, c.start] = np.where(missing, 0.0, (values - c.mean) / c.std)
            if c.indicator:
                out[:, c.start + c.width - 1] = missing
        return out

    @staticmethod
    def _one_hot(c: Column, series: pd.Series, take: slice | np.ndarray, out: np.ndarray) -> None:
        index = {v: i for i, v in enumerate(c.categories)}
        by_text: dict[str | None, int] = {}
        for i, texts in enumerate(c.spellings()):
            for text in texts:
                by_text.setdefault(text, i)
        codes, distinct = _plain_codes(series)

        def find(v: Category) -> int:
            i = index.get(v)  # True finds 1 in a dict: a boolean only finds a boolean
            if i is not None and isinstance(v, bool) == isinstance(c.categories[i], bool):
                return i
            return by_text.get(category_key(v), -1)

        found = [find(v) for v in distinct]
        row_codes = codes[take]
        codes = np.array(found, dtype=np.int64)[row_codes]
        known = codes >= 0
        if not known.all():
            unknown = sorted({int(k) for k in row_codes[~known]})
            missing = sum(int((row_codes == k).sum()) for k in unknown if distinct[k] is None)
            unseen = [distinct[k] for k in unknown if distinct[k] is not None]
            parts = []
            if unseen:
                n_unseen = int((~known).sum()) - missing
                parts.append(
                    f"{rows_have(n_unseen)} a category not seen in training (such as {unseen[0]!r})"
                )
            if missing:
                parts.append(f"{rows_have(missing)} a missing value, which training had none of")
            warnings.warn(
                f"column {c.name!r}: {'; '.join(parts)}; they are encoded as all zeros",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        out[np.flatnonzero(known), c.start + codes[known]] = 1.0

    def imputed(self) -> dict[str, int]:
        """Training values that were missing, per column that had any."""
        return {c.name: c.missing for c in self.columns if c.missing}

    def config(self) -> dict[str, Any]:
        written = getattr(self, "dots", {})  # an encoder pickled before it had dots has none
        dots = {"dots": dict(written)} if written else {}
        return {"columns": [asdict(c) for c in self.columns], **dots}

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> TableEncoder:
        known = {f.name for f in fields(Column)}
        columns = [Column(**{k: v for k, v in c.items() if k in known}) for c in cfg["columns"]]
        start = 0
        for c in columns:
            if (
                c.kind not in (NUMERIC, CATEGORICAL, DATE)
                or c.start != start
                or not c.std > 0
                or (c.kind == DATE and not c.origin)
                or not set(c.parts) <= set(DATE_PARTS)
            ):
                raise ValueError(f"invalid preprocessing for column {c.name!r}")
            start += c.width
        encoder = cls(columns)
        dots = cfg.get("dots", {})
        if not isinstance(dots, dict) or not set(dots.values()) <= {"thousands", "decimal"}:
            raise ValueError(f"invalid preprocessing dots {dots!r}")
        encoder.dots = {str(name): str(how) for name, how in dots.items()}
        return encoder
