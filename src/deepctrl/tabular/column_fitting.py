"""The encoder's columns: `Column`, one fitted input column, and how it is fitted from a
training column (kind, scaling, categories, date parts); and, at transform, a number
column's scaled values and the warnings for values far outside the training ones."""

from __future__ import annotations

import shlex
import unicodedata
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.cell_values import (
    Category,
    category_key,
    float_text,
    plain_all,
    plain_codes,
)
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE, NUMERIC, column_kind, reading_hint
from deepctrl.tabular.date_columns import date_values, days_from, has_zone
from deepctrl.tabular.table_messages import rows_have, shown
from deepctrl.tabular.value_bulk import value_bulk

MISSING_NAME = "(missing)"


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
    untrained: list[int] = field(default_factory=list)
    """Positions in ``categories`` of those the column's type declares but no row given to
    fit holds: their inputs never trained, so they are encoded as all zeros, as a category
    the model never saw (model files from before have none)."""
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
        its accents as separate marks (Unicode NFD) where that differs, for a boolean
        also the lower and upper case ("true", "TRUE" beside "True"), and for a number the
        text Python and pandas write for it as a float ("20.0" beside "20").

        >>> Column("promo", CATEGORICAL, 0, categories=[None, False, True]).spellings()
        [(None,), ('False', 'false', 'FALSE'), ('True', 'true', 'TRUE')]
        >>> Column("grade", CATEGORICAL, 0, categories=[20.0, 30.5, 4]).spellings()
        [('20', '20.0'), ('30.5',), ('4', '4.0')]
        >>> Column("grade", CATEGORICAL, 0, categories=[20, "20.0"]).spellings()
        [('20',), ('20.0',)]
        >>> Column("city", CATEGORICAL, 0, categories=["K\u00f6ln"]).spellings() == [
        ...     ("K\u00f6ln", "Ko\u0308ln")
        ... ]
        True
        """
        keys = [category_key(v) for v in self.categories]
        if self.boolean:
            return [(k,) if k is None else (k, k.lower(), k.upper()) for k in keys]
        taken = set(keys)  # a text category "20.0" beside the number 20 keeps its text
        return [
            (k,)
            if k is None
            else tuple(
                dict.fromkeys(
                    (
                        k,
                        unicodedata.normalize("NFD", k),
                        *(t for t in float_text(v) if t not in taken),
                    )
                )
            )
            for k, v in zip(keys, self.categories, strict=True)
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


def numeric_values(series: pd.Series) -> np.ndarray:
    """The values of a numeric column as float64 (NaN where missing); infinities are errors."""
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    infinite = int(np.isinf(values).sum())
    if infinite:
        raise ValueError(
            f"column {series.name!r} has inf (infinite) values in {infinite} of {len(series)} rows"
        )
    return values


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
"""When a column's training values but the farthest 2 % (at least one) span less than this
many standard deviations, a few values dwarf the others, which then encode almost alike."""
FAR_WIDTHS = 1.0
"""A value beyond its column's training range by more than this many times the range's
width is far outside it."""


def _warn_dwarfed(name: str, present: np.ndarray, std: float) -> None:
    """A warning when a few values of a number column lie so far from the others that
    those encode almost alike (one typo of 1e30 among prices of 2 to 8)."""
    low, high, worst, k = value_bulk(present)
    if 0 < high - low < DWARFED * std:
        warnings.warn(
            f"column {name!r}: its value {worst:g} dwarfs its other values ({low:.3g} to "
            f"{high:.3g} for all but {k} of them), which then encode almost alike, so the "
            "model can hardly use the column; correct or remove that value",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )


def numeric_input(c: Column, values: np.ndarray, index: pd.Index) -> np.ndarray:
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


def warn_far_dates(c: Column, days: np.ndarray, dates: np.ndarray) -> None:
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


def first_odd(series: pd.Series) -> str:
    """Where a column that should hold numbers does not: its first value that is not one.

    >>> first_odd(pd.Series([1.5, "abc", None]))
    "but row 1 holds 'abc'"
    """
    present = series.notna().to_numpy()
    numbers = pd.to_numeric(series, errors="coerce").notna().to_numpy()
    odd = np.flatnonzero(present & ~numbers)
    if not len(odd):
        return f"got type {series.dtype}"
    return f"but row {int(odd[0])} holds {shown(series.iloc[odd[0]])}"


def fit_column(name: str, series: pd.Series, start: int, trend: bool = False) -> Column:
    kind = column_kind(series)
    if kind == NUMERIC:
        return _scaled(name, kind, start, numeric_values(series))
    if kind == DATE:
        dates = date_values(series, local=True)
        if np.isnat(dates).all():
            raise ValueError(f"column {name!r} has no dates, only missing values")
        origin = str(dates[~np.isnat(dates)].min())
        days = days_from(dates, origin)
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
    codes, distinct = plain_codes(series)
    if all(v is None for v in distinct) and not isinstance(series.dtype, pd.CategoricalDtype):
        raise ValueError(f"column {name!r} has no values, only missing ones")
    counts = np.bincount(codes, minlength=len(distinct))
    missing = int(sum(k for k, v in zip(counts, distinct, strict=True) if v is None))
    untrained: list[int] = []
    if isinstance(series.dtype, pd.CategoricalDtype):
        declared = plain_all(series.dtype.categories, series.name)
        cats = ([None] if missing else []) + list(dict.fromkeys(declared))
        held = set(distinct)
        untrained = [i for i, v in enumerate(cats) if v is not None and v not in held]
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
    return Column(name, kind, start, categories=cats, missing=missing, untrained=untrained)
