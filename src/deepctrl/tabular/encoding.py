"""Tables to model inputs for the estimators: numeric columns standardized, categorical
columns (text, category, bool) one-hot. The encoder remembers every column, so rules can
name columns and model files can rebuild the preprocessing.

>>> import pandas as pd
>>> frame = pd.DataFrame({"price": [1.0, 2.0, 3.0], "color": ["red", "blue", "red"]})
>>> enc = TableEncoder.fit(frame)
>>> enc.encoded_names()
['price', 'color=blue', 'color=red']
>>> [round(float(v), 3) for v in enc.transform(frame)[:, 0]]
[-1.225, 0.0, 1.225]
"""

from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd

NUMERIC, CATEGORICAL = "numeric", "categorical"
Category = str | int | float | bool


@dataclass
class Column:
    """One input column: its kind, scaling and range (numeric) or categories (categorical),
    and where its encoding starts in the model input."""

    name: str
    kind: str
    start: int
    mean: float = 0.0
    std: float = 1.0
    low: float = 0.0
    high: float = 0.0
    categories: list[Category] = field(default_factory=list)

    @property
    def width(self) -> int:
        return 1 if self.kind == NUMERIC else len(self.categories)

    def to_raw(self, value: Any) -> Any:
        """Standardized value(s) of a numeric column back in the column's units."""
        return value * self.std + self.mean

    def to_encoded(self, value: float) -> float:
        """A value in the column's units as the model sees it (standardized)."""
        return (float(value) - self.mean) / self.std


def _kind(series: pd.Series) -> str:
    dtype = series.dtype
    if pd.api.types.is_bool_dtype(dtype) or isinstance(dtype, pd.CategoricalDtype):
        return CATEGORICAL
    if pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_complex_dtype(dtype):
        return NUMERIC
    if pd.api.types.is_object_dtype(dtype) or pd.api.types.is_string_dtype(dtype):
        return CATEGORICAL
    raise ValueError(f"column {series.name!r} has unsupported type {dtype}; "
                     "use numbers, text, categories or booleans")


def _plain(value: Any) -> Category:
    """A category as a plain JSON-friendly Python value."""
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, str | int | float | bool):
        raise ValueError(f"category {value!r} is neither text, a number nor a boolean")
    return value


def numeric_values(series: pd.Series) -> np.ndarray:
    """The values of a numeric column as float64, with NaN and infinities named as errors."""
    name, n = series.name, len(series)
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    missing = int(np.isnan(values).sum())
    if missing:
        raise ValueError(f"column {name!r} has NaN (missing) values in {missing} of {n} rows")
    infinite = int(np.isinf(values).sum())
    if infinite:
        raise ValueError(f"column {name!r} has inf (infinite) values in {infinite} of {n} rows")
    return values


def _category_values(series: pd.Series) -> list[Any]:
    missing = int(series.isna().sum())
    if missing:
        raise ValueError(f"column {series.name!r} has NaN (missing) values in {missing} of "
                         f"{len(series)} rows")
    return series.tolist()


def _sort_key(value: Category) -> tuple[str, str]:
    return (type(value).__name__, str(value))


class TableEncoder:
    """The fitted preprocessing of a table: column order, scaling and categories."""

    def __init__(self, columns: list[Column]) -> None:
        self.columns = columns
        self._by_name = {c.name: c for c in columns}

    @classmethod
    def fit(cls, frame: pd.DataFrame) -> TableEncoder:
        """Learn the preprocessing of ``frame`` (its column names must be unique)."""
        names = [str(c) for c in frame.columns]
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"column names must be unique; repeated: {dup}")
        columns, start = [], 0
        for name, (_, series) in zip(names, frame.items(), strict=True):
            series = series.rename(name)
            kind = _kind(series)
            if kind == NUMERIC:
                values = numeric_values(series)
                std = float(values.std())
                col = Column(name, kind, start, float(values.mean()),
                             std if std > 1e-12 * max(1.0, abs(values.mean())) else 1.0,
                             float(values.min()), float(values.max()))
            else:
                labels = _category_values(series)
                if isinstance(series.dtype, pd.CategoricalDtype):
                    cats = [_plain(v) for v in series.dtype.categories]
                else:
                    try:
                        cats = sorted({_plain(v) for v in labels}, key=_sort_key)
                    except TypeError:
                        raise ValueError(f"column {name!r} holds values that are neither "
                                         "text nor numbers") from None
                if len(cats) > 50 and len(cats) > 0.5 * len(labels):
                    warnings.warn(f"column {name!r} has {len(cats)} distinct values in "
                                  f"{len(labels)} rows, one input each; drop it if it is an "
                                  "identifier", UserWarning, stacklevel=3)
                col = Column(name, kind, start, categories=cats)
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
        """One name per model input: the column, or ``column=category`` for one-hot parts."""
        out: list[str] = []
        for c in self.columns:
            out += [c.name] if c.kind == NUMERIC else [f"{c.name}={v}" for v in c.categories]
        return out

    def column(self, ref: str | int) -> Column:
        """The column named ``ref``, or at position ``ref`` when it is an integer."""
        if isinstance(ref, bool | np.bool_):
            raise ValueError(f"a column is named by text or position, got {ref!r}")
        if isinstance(ref, int | np.integer):
            if not 0 <= int(ref) < len(self.columns):
                raise ValueError(f"column position {ref} is out of range: the table has "
                                 f"{len(self.columns)} columns")
            return self.columns[int(ref)]
        if ref not in self._by_name:
            shown = ", ".join(self.names[:20]) + (", ..." if len(self.names) > 20 else "")
            raise ValueError(f"unknown column {ref!r}; the table has: {shown}")
        return self._by_name[ref]

    def numeric(self, ref: str | int, purpose: str) -> Column:
        """Like :meth:`column`, but the column must be numeric (``purpose`` names the user)."""
        col = self.column(ref)
        if col.kind != NUMERIC:
            raise ValueError(f"{purpose} needs a numeric column, but {col.name!r} is categorical")
        return col

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        """The model input for ``frame`` (float32, one row per row). Unknown categories
        encode as all zeros, with a warning."""
        missing = [c.name for c in self.columns if c.name not in frame.columns]
        if missing:
            raise ValueError(f"the data lacks column(s) the model needs: {', '.join(missing)}")
        out = np.zeros((len(frame), self.n_encoded), dtype=np.float32)
        for c in self.columns:
            series = frame[c.name]
            if c.kind == NUMERIC:
                if _kind(series) != NUMERIC:
                    raise ValueError(f"column {c.name!r} must be numeric, got type {series.dtype}")
                out[:, c.start] = (numeric_values(series) - c.mean) / c.std
                continue
            index = {v: i for i, v in enumerate(c.categories)}
            try:
                codes = np.array([index.get(_plain(v), -1) for v in _category_values(series)],
                                 dtype=np.int64)
            except TypeError:
                raise ValueError(f"column {c.name!r} holds values that are neither text nor "
                                 "numbers") from None
            known = codes >= 0
            if not known.all():
                warnings.warn(f"column {c.name!r}: {int((~known).sum())} rows have a category "
                              "not seen in training; they are encoded as all zeros",
                              UserWarning, stacklevel=3)
            out[np.flatnonzero(known), c.start + codes[known]] = 1.0
        return out

    def config(self) -> dict[str, Any]:
        return {"columns": [asdict(c) for c in self.columns]}

    @classmethod
    def from_config(cls, cfg: dict[str, Any]) -> TableEncoder:
        columns = [Column(**c) for c in cfg["columns"]]
        start = 0
        for c in columns:
            if c.kind not in (NUMERIC, CATEGORICAL) or c.start != start or not c.std > 0:
                raise ValueError(f"invalid preprocessing for column {c.name!r}")
            start += c.width
        return cls(columns)
