"""The ONNX file's inputs: how each of the table's columns enters it (its ONNX type, and
its values for given rows) and how `deepctrl export` names those types."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from deepctrl.tabular.cell_values import category_key
from deepctrl.tabular.column_fitting import Column, numeric_values
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE, NUMERIC
from deepctrl.tabular.date_columns import date_values
from deepctrl.tabular.encoding import TableEncoder


def category_text(value: Any) -> str:
    """A category as the ONNX file's string input spells it: its text, whole numbers
    without a decimal point ('' for a missing value), as `predict` matches categories."""
    return category_key(value) or ""


FLOAT32_REACH = 16.0
"""How many of its standard deviations from 0 a numeric column's training values may lie
for its ONNX input to be float32 (which rounds them by up to 2^-24 of their size, here
under 1e-6 of a standard deviation); farther, the input is float64.

>>> from deepctrl.tabular.column_fitting import Column
>>> [_wide_numbers(Column("c", "numeric", 0, std=0.02, low=40.6, high=40.8)),
...  _wide_numbers(Column("c", "numeric", 0, std=15.0, low=18.0, high=90.0))]
[True, False]
"""


def _wide_numbers(c: Column) -> bool:
    """Whether a numeric column's ONNX input is float64 (see :data:`FLOAT32_REACH`)."""
    return c.kind == NUMERIC and max(abs(c.low), abs(c.high)) > FLOAT32_REACH * c.std


def onnx_feed(encoder: TableEncoder, frame: pd.DataFrame, alpha: Any) -> dict[str, np.ndarray]:
    """The inputs of the ONNX file for the rows of `frame` at rule strength `alpha`
    (one number, or one per row)."""
    feed: dict[str, np.ndarray] = {}
    for c in encoder.columns:
        if c.name not in frame.columns:
            raise ValueError(f"the data lacks column {c.name!r}, which the model needs")
        series = frame[c.name]
        if c.kind == CATEGORICAL:
            feed[c.name] = np.array([category_text(v) for v in series.tolist()], dtype=object)
        elif c.kind == DATE:
            feed[c.name] = date_values(series, local=c.local).astype(np.int64)
        else:
            values = numeric_values(series)
            feed[c.name] = values if _wide_numbers(c) else values.astype(np.float32)
    feed["alpha"] = np.broadcast_to(np.asarray(alpha, dtype=np.float32), (len(frame),)).copy()
    return feed


def input_type_name(c: Column) -> str:
    """How a column's ONNX input is typed, as `deepctrl export` prints it."""
    if c.kind == NUMERIC:
        return "float64" if _wide_numbers(c) else "float32"
    if c.boolean:
        return 'string "True"/"False" (or true/TRUE, false/FALSE)'
    if c.kind == DATE:
        return "int64 ns of the wall-clock time" if c.local else "int64 ns, UTC"
    return "string"


def input_type(c: Column) -> int:
    from onnx import TensorProto

    if _wide_numbers(c):
        return TensorProto.DOUBLE
    return {CATEGORICAL: TensorProto.STRING, DATE: TensorProto.INT64}.get(c.kind, TensorProto.FLOAT)
