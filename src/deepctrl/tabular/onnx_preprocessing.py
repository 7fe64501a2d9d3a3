"""The table encoder's preprocessing written with ONNX operators: from the columns, as the
ONNX file takes them, to the encoded rows the networks read (standardized numbers,
one-hot categories, dates as days and the phases of their year, week and day)."""

from __future__ import annotations

from typing import Any

import numpy as np

from deepctrl.tabular.column_fitting import Column
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE
from deepctrl.tabular.date_columns import DATE_PARTS
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.onnx_inputs import category_text, input_type

NS_PER_DAY = 86_400 * 10**9
NAT = np.iinfo(np.int64).min
FLOAT, DOUBLE = 1, 11
"""ONNX element types (`onnx.TensorProto.FLOAT` and `DOUBLE`) for Cast nodes."""
LEAP_DAYS_BEFORE_1970 = 1969 // 4 - 1969 // 100 + 1969 // 400


class _Nodes:
    """A growing list of ONNX nodes and constants with fresh names."""

    def __init__(self) -> None:
        from onnx import helper, numpy_helper

        self.helper, self.numpy_helper = helper, numpy_helper
        self.nodes: list[Any] = []
        self.constants: list[Any] = []
        self._count = 0

    def fresh(self, kind: str) -> str:
        self._count += 1
        return f"_pre/{kind}/{self._count}"

    def const(self, value: Any) -> str:
        """A constant (a numpy value; its dtype is the constant's type)."""
        name = self.fresh("const")
        self.constants.append(self.numpy_helper.from_array(np.asarray(value), name))
        return name

    def op(self, op_type: str, *inputs: str, **attrs: Any) -> str:
        """The output of a new `op_type` node on `inputs`."""
        out = self.fresh(op_type)
        self.nodes.append(self.helper.make_node(op_type, list(inputs), [out], **attrs))
        return out


def _column(g: _Nodes, value: str) -> str:
    """(rows,) -> (rows, 1)."""
    return g.op("Unsqueeze", value, g.const(np.array([1], dtype=np.int64)))


def _standardized(g: _Nodes, days_or_value: str, missing: str, c: Column) -> str:
    """(value - mean) / std as float32, 0 (the training mean) where missing."""
    scaled = g.op(
        "Div", g.op("Sub", days_or_value, g.const(np.float64(c.mean))), g.const(np.float64(c.std))
    )
    kept = g.op("Where", missing, g.const(np.float64(0.0)), scaled)
    return g.op("Cast", kept, to=FLOAT)


def _year_start(g: _Nodes, year: str) -> str:
    """Days from 1970-01-01 to 1 January of `year` (double, whole numbers), by the
    Gregorian leap-year count."""
    before = g.op("Sub", year, g.const(np.float64(1.0)))

    def leap_days(y: str) -> str:
        def count(n: float) -> str:
            return g.op("Floor", g.op("Div", y, g.const(np.float64(n))))

        return g.op("Add", g.op("Sub", count(4.0), count(100.0)), count(400.0))

    since = g.op("Mul", g.op("Sub", year, g.const(np.float64(1970.0))), g.const(np.float64(365.0)))
    return g.op(
        "Sub", g.op("Add", since, leap_days(before)), g.const(np.float64(LEAP_DAYS_BEFORE_1970))
    )


def _phase(g: _Nodes, t: str, part: str) -> str:
    """The fraction of the current year, week (from Monday) or day at `t` days since
    1970-01-01."""
    if part == "day":
        return g.op("Sub", t, g.op("Floor", t))
    if part == "week":  # 1970-01-01 was a Thursday, three days after a Monday
        u = g.op("Add", t, g.const(np.float64(3.0)))
        weeks = g.op("Floor", g.op("Div", u, g.const(np.float64(7.0))))
        return g.op(
            "Div",
            g.op("Sub", u, g.op("Mul", weeks, g.const(np.float64(7.0)))),
            g.const(np.float64(7.0)),
        )
    guess = g.op(
        "Add",
        g.op("Floor", g.op("Div", t, g.const(np.float64(DATE_PARTS["year"])))),
        g.const(np.float64(1970.0)),
    )
    one = g.const(np.float64(1.0))
    later = g.op(
        "Cast", g.op("GreaterOrEqual", t, _year_start(g, g.op("Add", guess, one))), to=DOUBLE
    )
    earlier = g.op("Cast", g.op("Less", t, _year_start(g, guess)), to=DOUBLE)
    year = g.op("Sub", g.op("Add", guess, later), earlier)
    return g.op(
        "Div", g.op("Sub", t, _year_start(g, year)), g.const(np.float64(DATE_PARTS["year"]))
    )


def _encode_column(g: _Nodes, c: Column) -> list[str]:
    """The (rows, width) float32 pieces of one column's encoding, in the encoder's order."""
    if c.kind == CATEGORICAL:
        texts = [category_text(v) for v in c.categories]
        if len(set(texts)) != len(texts):
            raise ValueError(
                f"column {c.name!r}: two categories read the same as text, which "
                "the ONNX file's string input cannot tell apart"
            )
        spellings = c.spellings()
        if all(len(ts) == 1 for ts in spellings) and not c.untrained:
            equal = g.op("Equal", _column(g, c.name), g.const(np.array(texts, dtype=object)))
            return [g.op("Cast", equal, to=FLOAT)]
        # "true" finds True, "Köln" with a separate accent mark finds "Köln": the matches of
        # a category's spellings, summed; a category no training row held matches nothing
        untrained = set(c.untrained)
        spelled = [(i, t or "") for i, ts in enumerate(spellings) if i not in untrained for t in ts]
        names = np.array([t for _, t in spelled], dtype=object)
        to_category = np.zeros((len(spelled), len(texts)), dtype=np.float32)
        to_category[np.arange(len(spelled)), [i for i, _ in spelled]] = 1.0
        matches = g.op("Cast", g.op("Equal", _column(g, c.name), g.const(names)), to=FLOAT)
        return [g.op("MatMul", matches, g.const(to_category))]
    if c.kind == DATE:
        missing = g.op("Equal", c.name, g.const(np.int64(NAT)))
        origin = np.datetime64(c.origin, "ns").astype(np.int64)
        per_day = g.const(np.float64(NS_PER_DAY))
        since_origin = g.op("Sub", c.name, g.const(np.int64(origin)))
        days = g.op("Div", g.op("Cast", since_origin, to=DOUBLE), per_day)
        t = g.op("Div", g.op("Cast", c.name, to=DOUBLE), per_day)
    else:
        days = t = g.op("Cast", c.name, to=DOUBLE)
        missing = g.op("IsNaN", days)
    pieces = [_standardized(g, days, missing, c)]
    for part in c.parts:
        angle = g.op("Mul", _phase(g, t, part), g.const(np.float64(2 * np.pi)))
        for trig in ("Sin", "Cos"):
            kept = g.op("Where", missing, g.const(np.float64(0.0)), g.op(trig, angle))
            pieces.append(g.op("Cast", kept, to=FLOAT))
    if c.indicator:
        pieces.append(g.op("Cast", missing, to=FLOAT))
    return [_column(g, p) for p in pieces]


def preprocessing_graph(
    encoder: TableEncoder,
    opsets: list[Any] | None = None,
    ir_version: int = 10,
    output: str = "encoded",
) -> Any:
    """An ONNX ModelProto from the columns (inputs by name) to `output`, the model input
    that `encoder.transform` computes, float32 (rows, `encoder.n_encoded`)."""
    from onnx import TensorProto, helper

    g = _Nodes()
    pieces = [p for c in encoder.columns for p in _encode_column(g, c)]
    g.nodes.append(helper.make_node("Concat", pieces, [output], axis=1))
    inputs = [
        helper.make_tensor_value_info(c.name, input_type(c), ["rows"]) for c in encoder.columns
    ]
    encoded = helper.make_tensor_value_info(output, TensorProto.FLOAT, ["rows", encoder.n_encoded])
    model = helper.make_model(
        helper.make_graph(g.nodes, "preprocessing", inputs, [encoded], g.constants),
        opset_imports=opsets or [helper.make_opsetid("", 20)],
    )
    model.ir_version = ir_version
    return model
