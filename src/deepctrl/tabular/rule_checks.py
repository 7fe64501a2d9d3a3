"""The checks of table rules at fit, beyond those of resolving them: expressions that have
a value on every training row, rule columns that vary, thresholds that rows can cross, the
class a rule without one acts on; all of them without training for the command line
(`check_rules`); and the columns the rules raise."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from deepctrl.core.rules import Monotonic, Threshold
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.column_fitting import Column, numeric_values
from deepctrl.tabular.column_kinds import NUMERIC
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import Outputs, whole_label
from deepctrl.tabular.rule_leaves import leaves_and_weights
from deepctrl.tabular.table_rules import (
    Expression,
    ExpressionFn,
    NamedPenalty,
    default_perturbation,
    describe,
    located,
    resolve,
)

_PLAIN_NEGATIVE = {"0", "-1", "false", "no", "n", "negative", "neg"}
_PLAIN_POSITIVE = {"1", "true", "yes", "y", "positive", "pos"}


def _obvious_positive(labels: Sequence[Any]) -> bool:
    """Whether two labels say themselves which is the positive class (0/1, False/True,
    no/yes), so that a rule without a class plainly acts on the second."""
    low, high = (str(v).strip().lower().removesuffix(".0") for v in labels)
    return low in _PLAIN_NEGATIVE and high in _PLAIN_POSITIVE


def ruled_columns(rules: Any, columns: Sequence[Any]) -> set[str]:
    """The names of the columns that feature rules raise (a position names its column).

    >>> import deepctrl as dc
    >>> rules = [dc.Monotonic("day", "increasing"), dc.Monotonic(0, "increasing")]
    >>> sorted(ruled_columns(rules, ["x", "day"]))
    ['day', 'x']
    """
    names = [str(c) for c in columns]
    out = set()
    for rule in leaves_and_weights(rules)[0]:
        if isinstance(rule, Monotonic | Threshold):
            ref = rule.feature
            if isinstance(ref, int | np.integer) and not isinstance(ref, bool):
                if 0 <= ref < len(names):
                    out.add(names[int(ref)])
            else:
                out.add(str(ref))
    return out


def check_expressions(
    rules: Any,
    encoder: TableEncoder,
    outputs: Outputs,
    x: Tensor,
    y_model: Tensor | None,
    rows: np.ndarray,
) -> None:
    """At fit: an expression rule must be a finite number on every training row, its
    outputs taken at the rows' targets (regression; ``y_model`` in the model's units) or at
    even odds (classification, ``y_model`` None). ``log(price - 4)`` at a price of 3, or a
    division by a column that is zero somewhere, would otherwise put NaN into the rule loss
    and spoil training without a word. ``rows`` are the positions in the user's table of the
    rows of ``x``, for the message."""
    expressions = [r for r in leaves_and_weights(rules)[0] if isinstance(r, Expression)]
    if not expressions:
        return
    at = y_model if y_model is not None else torch.zeros(len(x), outputs.n_model_outputs)
    for rule in expressions:
        with torch.no_grad():
            value = NamedPenalty(ExpressionFn(rule), encoder, outputs)(x, at.to(x.dtype))
        bad = ~torch.isfinite(value.reshape(len(x), -1)).all(dim=1)
        if bad.any():
            row = int(rows[bad.numpy()].min())  # the first in the user's table
            raise RowValueError(
                f"rule {located(rule, 'expression')} is not a finite number on "
                f"{int(bad.sum())} of the {len(x)} rows given to fit (the first at ",
                row,
                "): a log, square root or division there has no value, or a value there is "
                "beyond float32's range (3.4e38); keep arguments in range (max(..., 0.01), say)",
            )


def check_rule_columns(
    rules: Any, encoder: TableEncoder, frame: pd.DataFrame | None = None
) -> None:
    """At fit: a feature rule on a column that is constant in the training rows, and a
    threshold outside the column's training values or that no row of ``frame`` (the
    training rows) can cross, are errors (the rule could be neither learned nor checked).
    A row is judged when its value lies below the threshold and its perturbation can carry
    it past (strictly): raised by at most one unit, a whole-number column never passes a
    whole-number threshold. Loading a model does not ask.

    >>> from deepctrl.core.rules import Threshold
    >>> rows = pd.DataFrame({"stops": [0, 1, 2, 3, 1]})
    >>> enc = TableEncoder.fit(rows, ["stops"])
    >>> try:
    ...     check_rule_columns([Threshold("stops", 2.0)], enc, rows)
    ... except ValueError as e:
    ...     print(str(e).split("; ")[1])
    for 'stops' of whole numbers, a threshold between two of them (1.5) is crossed from below
    """
    for rule in leaves_and_weights(rules)[0]:
        if isinstance(rule, Monotonic | Threshold):
            col = encoder.ordered(rule.feature, f"rule {located(rule, 'column')}")
            if col.low == col.high:
                raise ValueError(
                    f"rule {located(rule, 'column')}: column {col.name!r} is constant "
                    f"({col.low:g}) in the training rows, so the rule can be neither learned "
                    "nor checked"
                )
            if isinstance(rule, Threshold) and col.kind == NUMERIC:
                if not col.low < float(rule.threshold) < col.high:
                    raise ValueError(
                        f"rule {located(rule, 'threshold')}: the threshold "
                        f"{float(rule.threshold):g} is not inside the training values of "
                        f"{col.name!r} ({col.low:g} to {col.high:g}), so no row lies on both "
                        "sides of it to judge"
                    )
                if frame is not None:
                    _check_crossed(rule, col, frame[col.name])
            if frame is not None and col.kind == NUMERIC:
                _check_step_size(rule, col, frame[col.name])


def _check_crossed(rule: Threshold, col: Column, column: pd.Series) -> None:
    """The error for a threshold no value of ``column`` can be raised past."""
    values = _present_values(column)
    reach = (rule.given_perturbation or default_perturbation(col)).reach(values)
    a = float(rule.threshold)
    if reach is None or ((values < a) & (a < values + reach)).any():
        return
    whole = (
        f"; for {col.name!r} of whole numbers, a threshold between two of them "
        f"({math.floor(a) - 0.5:g}) is crossed from below"
        if col.integer and a.is_integer()
        else ""
    )
    raise ValueError(
        f"rule {located(rule, 'threshold')}: no training row can cross the threshold "
        f"{a:g}, since no value below it is raised past it (values move by at most "
        f"{_largest(reach):g} in the column's units){whole}; or give a larger perturbation"
    )


_WIDEST_STEP = 100.0
"""A given perturbation may move a column by at most this many times its training range."""


def _check_step_size(rule: Monotonic | Threshold, col: Column, column: pd.Series) -> None:
    """The error for a perturbation given by the user that moves the column far beyond its
    training values: the network would learn the rule only on inputs it never sees (and a
    huge step overflows the scaled inputs), silently giving a model that ignores it."""
    given = rule.given_perturbation
    reach = given.reach(_present_values(column)) if given is not None else None
    if reach is None or not _largest(reach) > _WIDEST_STEP * (col.high - col.low):
        return
    written = getattr(rule, "key_where", {})  # the line of the step, in a rules file
    key = next((k for k in ("additive", "relative") if k in written), "column")
    raise ValueError(
        f"rule {located(rule, key)}: its perturbation moves {col.name!r} by up to "
        f"{_largest(reach):.3g}, more than {_WIDEST_STEP:g} times the column's training range "
        f"({col.low:g} to {col.high:g}), so the rule would be learned far from every row; "
        f"give a step near the column's spread (a tenth of its standard deviation is "
        f"{0.1 * col.std:.3g})"
    )


def _present_values(column: pd.Series) -> Tensor:
    """A column's values that are not missing, as float64 (a copy: pandas may hand out a
    read-only view)."""
    values = torch.tensor(numeric_values(column))
    return values[~values.isnan()]


def _largest(reach: Tensor) -> float:
    return float(reach.max()) if len(reach) else 0.0


def check_rule_classes(rules: Any, outputs: Outputs) -> None:
    """Feature rules that name no class, in a classifier: an error when another rule names
    a class they do not act on (one of them almost surely means that class), and a warning
    naming the class they act on when the labels do not say it (``leave``/``stay``, or
    three classes).

    >>> import deepctrl as dc
    >>> fee = dc.Monotonic("fee", "increasing", output="leave")
    >>> tenure = dc.Monotonic("tenure", "decreasing")
    >>> check_rule_classes([fee, tenure], Outputs.classification(["leave", "stay"]))
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: rules monotonic(fee, increasing, on 'leave') and ... give every rule its class
    """
    if not outputs.labels:
        return
    feature_rules = [
        r for r in leaves_and_weights(rules)[0] if isinstance(r, Monotonic | Threshold)
    ]
    unnamed = [r for r in feature_rules if r.output is None]
    if not unnamed:
        return
    default = outputs.find(None)
    for rule in feature_rules:
        if rule.output is not None and outputs.find(rule.output) != default:
            raise ValueError(
                f"rules {located(rule, 'output')} and {located(unnamed[0])} act on different "
                "classes: "
                f"{outputs.describe(outputs.find(rule.output))} and "
                f"{outputs.describe(default)}, the default for a rule without a class; give "
                "every rule its class"
            )
    labels = outputs.labels
    if len(labels) == 2 and _obvious_positive(labels):
        return
    which = "second of 2" if len(labels) == 2 else f"first of {len(labels)}"
    quantity = (
        "; if the target is a quantity, a regressor (--task regression) fits it"
        if len(labels) > 2 and all(whole_label(v) for v in labels)
        else ""
    )
    names = ", ".join(describe(r) for r in unnamed)
    warnings.warn(
        f"{'rules' if len(unnamed) > 1 else 'rule'} {names} "
        f"{'name' if len(unnamed) > 1 else 'names'} no class, so "
        f"{'they act' if len(unnamed) > 1 else 'it acts'} on "
        f"{outputs.describe(default)}, the {which} classes in sorted order; name the class "
        "to choose another (output=LABEL, or --rule-class LABEL on the command line)" + quantity,
        UserWarning,
        stacklevel=outside_stacklevel(),
    )


def check_rules(rules: Any, frame: Any, outputs: Outputs) -> None:
    """Raise the error :func:`resolve` would raise at fit for ``rules`` on the table
    ``frame`` (a pandas DataFrame), without training and without warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        encoder = TableEncoder.fit(frame, ruled_columns(rules, frame.columns))
        resolve(rules, encoder, outputs)
        check_rule_columns(rules, encoder, frame)
        check_rule_classes(rules, outputs)


class RowValueError(ValueError):
    """A ValueError about a row of the user's table, at position ``row``, which the command
    line names by the line of its file instead.

    >>> error = RowValueError("bad value (", 4, ")")
    >>> str(error), error.at("line 6")
    ('bad value (row 4)', 'bad value (line 6)')
    """

    def __init__(self, before: str, row: int, after: str) -> None:
        self.before, self.row, self.after = before, row, after
        super().__init__(self.at(f"row {row}"))

    def at(self, where: str) -> str:
        """The message with the row named as ``where``."""
        return f"{self.before}{where}{self.after}"
