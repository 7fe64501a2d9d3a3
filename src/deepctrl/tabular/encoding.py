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

import unicodedata
import warnings
from collections.abc import Collection, Sequence
from dataclasses import asdict, fields
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.cell_values import Category, category_key, is_missing_text, plain_codes
from deepctrl.tabular.column_fitting import (
    Column,
    first_odd,
    fit_column,
    numeric_input,
    numeric_values,
    warn_far_dates,
)
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE, NUMERIC, column_kind
from deepctrl.tabular.date_columns import DATE_PARTS, cyclic_part, date_values, days_from, has_zone
from deepctrl.tabular.table_messages import listed, rows_have


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
            col = fit_column(name, series.rename(name), start, trend=name in trends)
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
                    raise ValueError(f"column {c.name!r} must be {c.kind}, {first_odd(series)}")
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
                values = days_from(dates, c.origin)
                warn_far_dates(c, values, dates)
                for j, part in enumerate(c.parts):
                    out[:, c.start + 1 + 2 * j : c.start + 3 + 2 * j] = cyclic_part(
                        values, dates, part
                    )
            missing = np.isnan(values)
            if missing.any() and not c.indicator:
                warnings.warn(
                    f"column {c.name!r}: {rows_have(int(missing.sum()))} a missing value, which "
                    "training had none of; they take the training mean",
                    UserWarning,
                    stacklevel=outside_stacklevel(),
                )
            if c.kind == NUMERIC:
                out[:, c.start] = numeric_input(c, values, series.index[take])
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
        codes, distinct = plain_codes(series)

        def find(v: Category) -> int:
            i = index.get(v)  # True finds 1 in a dict: a boolean only finds a boolean
            if i is not None and isinstance(v, bool) == isinstance(c.categories[i], bool):
                return i
            return by_text.get(category_key(v), -1)

        untrained = set(c.untrained)  # declared, held by no training row: as if unseen
        found = [-1 if (i := find(v)) in untrained else i for v in distinct]
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
