"""Date columns: read as datetime64 (a time zone converted to UTC, or kept at the
wall-clock time it shows), and encoded as days from an origin and the sine and cosine of
cyclic parts (the time of year, the weekday, the time of day)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.column_kinds import ARROW_TEXT, ISO_DATE, text_codes
from deepctrl.tabular.table_messages import shown

DAY = np.timedelta64(1, "D")
DATES = (np.datetime64("1677-09-22"), np.datetime64("2262-04-11"))
"""The dates a model reads: those of 64-bit nanoseconds, whole days inside."""
DATE_PARTS = {"year": 365.2425, "week": 7.0, "day": 1.0}
"""Cyclic date parts and their period in days."""


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
    dated = present & text.str.match(ISO_DATE).fillna(False).to_numpy(dtype=bool)
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
    beyond = re.search(
        r"Out of bounds nanosecond timestamp: (.+?)(?:, at position \d+|$)", str(exc)
    )
    if beyond is not None:  # pandas before 3 reads dates in nanoseconds only
        rows = np.flatnonzero(series.map(lambda v: str(v).strip() == beyond[1]).to_numpy())
        if len(rows):
            return _outside(series, int(rows[0]))
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
            if local:  # pyarrow's strings replace three times faster than objects (given
                # the pattern as text: a compiled one sends pandas before 2.3 to objects)
                text = text.astype(ARROW_TEXT).str.replace(_ZONE.pattern, "", regex=True)
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
        raise ValueError(_outside(series, int(outside[0])))
    return native.astype("datetime64[ns]")


def _outside(series: pd.Series, row: int) -> str:
    """The error for a date beyond the range the model reads dates in, at ``row``."""
    return (
        f"column {series.name!r} holds a date outside {DATES[0]} - {DATES[1]}, the range "
        f"the model reads dates in: {shown(series.iloc[row])} (row {row}); leave such dates "
        "empty to mark them missing"
    )


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


def days_from(dates: np.ndarray, origin: str) -> np.ndarray:
    """Days (float, NaN where missing) from ``origin`` to each date."""
    out = (dates - np.datetime64(origin, "ns")) / DAY
    return np.where(np.isnat(dates), np.nan, out)


def cyclic_part(days: np.ndarray, dates: np.ndarray, part: str) -> np.ndarray:
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
