"""Rules that name table columns, as the estimators take them, and their translation to
rules on the encoded model input.

* ``Monotonic("price", "decreasing")`` and ``Threshold("ap_hi", 129.5)``: the column is
  found in the table, the perturbation applies in the column's own units (before scaling;
  days for a date column) and the threshold is given in those units too (thresholds on
  date columns are not supported). Without a perturbation one is chosen from the column
  (:func:`default_perturbation`). ``output`` names the class (a label; an integer is the
  label of that value when the labels are whole numbers, ``2`` naming ``2`` or ``2.0``,
  and the index in ``classes_`` otherwise) or the target column; by default a rule acts
  on the first output: in a binary classifier the probability of ``classes_[1]``.
* ``Penalty(fn)``: ``fn(columns, outputs)`` gets two dicts of tensors in the table's units:
  every numeric column by name, and every output by name (regression: the target names;
  classification: ``proba_<class>``, the class probabilities).
* ``Expression("charges <= 400 * bmi")``: the same as text, so it can be saved and written
  in a rules file.

>>> import pandas as pd, deepctrl as dc
>>> from deepctrl.tabular.encoding import TableEncoder
>>> enc = TableEncoder.fit(pd.DataFrame({"size": [1.0, 3.0], "price": [10.5, 30.25]}))
>>> rule = resolve([dc.Monotonic("price", "decreasing")], enc, Outputs.regression(["y"]))
>>> rule.feature, rule.perturbation.config()["inner"]
(1, {'kind': 'relative', 'u': 0.1})
"""

from __future__ import annotations

import copy
import warnings
from typing import Any

import numpy as np
from torch import Tensor

from deepctrl.core.rules import (
    Additive,
    AllOf,
    Monotonic,
    Penalty,
    Perturbation,
    Relative,
    Rule,
    Standardized,
    Threshold,
)
from deepctrl.core.rules.expression import parse
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.column_fitting import Column
from deepctrl.tabular.column_kinds import DATE, NUMERIC
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.rule_leaves import ExpressionPenalty, leaves_and_weights, relative_weights
from deepctrl.tabular.table_messages import listed


class Expression(Penalty):
    """A penalty rule written as a comparison of named columns and outputs, in the table's
    units: ``Expression("charges <= 400 * bmi")`` holds when charges - 400 bmi <= 0.

    Allowed: numbers, names (in backticks when they hold spaces), + - * / **, and abs, exp,
    log, sqrt, relu, min(a, b), max(a, b). ``tau`` loosens the rule: it holds when the
    residual is <= tau.

    >>> Expression("y >= 0").config()
    {'kind': 'expression', 'expression': 'y >= 0', 'tau': 0.0}
    """

    def __init__(self, expression: str, tau: float = 0.0) -> None:
        self.comparison = parse(expression)
        super().__init__(self._unresolved, tau=tau, strict=self.comparison.strict)
        self.expression = expression

    def _unresolved(self, x: Tensor, y_hat: Tensor) -> Tensor:
        raise ValueError(
            f"Expression({self.expression!r}) names columns: use it in "
            "DeepCTRLRegressor or DeepCTRLClassifier"
        )

    def config(self) -> dict[str, Any]:
        return {"kind": "expression", "expression": self.expression, "tau": self.tau}

    def __reduce__(self) -> tuple[type, tuple[str, float]]:
        return (Expression, (self.expression, self.tau))


class NamedPenalty:
    """``fn(columns, outputs)`` on named raw-unit tensors, called as ``fn(x, y_hat)`` on the
    encoded input and the model's outputs."""

    def __init__(self, fn: Any, encoder: TableEncoder, outputs: Outputs) -> None:
        self.fn, self.outputs = fn, outputs
        self.inputs = [
            (c.name, c.start, c.mean, c.std, c.integer)
            for c in encoder.columns
            if c.kind == NUMERIC
        ]

    def __call__(self, x: Tensor, y_hat: Tensor) -> Tensor:
        columns = {}
        for name, i, mean, std, integer in self.inputs:
            value = x[:, i] * std + mean
            # whole numbers come back whole: 0 stops is 0, not -3e-8 after float32 scaling,
            # so a penalty that holds with equality there is judged to hold
            columns[name] = value.round() if integer else value
        return self.fn(columns, self.outputs.raw(y_hat))


class ExpressionFn:
    def __init__(self, rule: Expression) -> None:
        self.rule, self.comparison = rule, rule.comparison

    def __reduce__(self) -> tuple[type, tuple[Expression]]:
        return (ExpressionFn, (self.rule,))

    def __call__(self, columns: dict[str, Tensor], outputs: dict[str, Tensor]) -> Tensor:
        return self.comparison.residual({**columns, **outputs})


def describe(rule: Rule, where: bool = False, key: str | None = None) -> str:
    """A short human description, e.g. ``monotonic(price, decreasing)``; with ``where``,
    also where the rule was written when it came from a file or option (its ``where``
    attribute), as error messages say it: the line of its ``key`` (``column``,
    ``expression``...) when the rule knows it (its ``key_where`` attribute), else the
    rule's first line."""
    source = None
    if where:
        source = getattr(rule, "key_where", {}).get(key) or getattr(rule, "where", None)
    where_text = f" ({source})" if source else ""
    if isinstance(rule, Expression):
        return f"penalty({rule.expression}){where_text}"
    on = (
        f", on {rule.output!r}"
        if isinstance(rule, Monotonic | Threshold) and rule.output is not None
        else ""
    )
    if isinstance(rule, Threshold):
        return f"threshold({rule.feature} > {rule.threshold:g}, {rule.direction}{on}){where_text}"
    if isinstance(rule, Monotonic):
        return f"monotonic({rule.feature}, {rule.direction}{on}){where_text}"
    return type(rule).__name__.lower() + where_text


def located(rule: Rule, key: str | None = None) -> str:
    """:func:`describe` with where the rule (or its ``key``) was written, for errors."""
    return describe(rule, where=True, key=key)


def default_perturbation(col: Column) -> Perturbation:
    """The perturbation of a rule that gives none, in the column's units: relative (up to
    10 %, the paper's) for a column whose values are all positive and not whole numbers;
    otherwise (values that include 0 or negatives, counts, dates) additive, up to a tenth
    of the column's standard deviation, and for whole numbers (counts, flags) at least up
    to the next one: a rule trained on steps of a tenth of a stop could hold from 0.0 to
    0.1 stops and fall from 0 stops to 1.

    >>> from deepctrl.tabular.column_fitting import Column
    >>> default_perturbation(Column("n", "numeric", 0, std=2.0, low=0.0, high=9.0)).config()
    {'kind': 'additive', 'scale': 0.2}
    >>> default_perturbation(Column("n", "numeric", 0, std=2.0, high=9.0, integer=True)).config()
    {'kind': 'additive', 'scale': 1.0}
    """
    if col.kind == NUMERIC and col.low > 0 and not col.integer:
        return Relative(0.1)
    if col.kind == NUMERIC and col.integer:
        return Additive(max(0.1 * col.std, 1.0))
    return Additive(0.1 * col.std)


def _feature_key(rule: Monotonic | Threshold, col: Column, outputs: Outputs) -> tuple[int, bool]:
    """The output index a rule acts on and whether its direction flips (a rule on
    ``classes_[0]`` of a binary classifier acts on 1 - P(classes_[1]))."""
    try:
        index = outputs.find(rule.output)
    except ValueError as exc:
        raise ValueError(f"rule {located(rule, 'output')}: {exc}") from None
    if outputs.kind == "binary":
        return 0, index == 0
    return index, False


def _resolve_feature_rule(
    rule: Monotonic | Threshold, encoder: TableEncoder, outputs: Outputs, strict: bool = True
) -> tuple[Rule, tuple[str, int, str]]:
    """The rule on the encoded input, and (column, output, direction) it constrains; the
    advice on its perturbation is given when ``strict`` (at fit, not again at loading)."""
    col = encoder.ordered(rule.feature, f"rule {located(rule, 'column')}")
    index, flip = _feature_key(rule, col, outputs)
    direction = (
        rule.direction
        if not flip
        else ("decreasing" if rule.direction == "increasing" else "increasing")
    )
    given = rule.given_perturbation
    pert = given if given is not None else default_perturbation(col)
    if strict and isinstance(pert, Relative) and col.low <= 0 <= col.high:
        fallback = default_perturbation(col)
        assert isinstance(fallback, Additive)  # a column that reaches 0 gets an additive one
        step = f"{fallback.scale:.3g}"
        whole = " (whole numbers step at least to the next one)" if col.integer else ""
        warnings.warn(
            f"rule {located(rule, 'column')}: column {col.name!r} takes values around 0, where "
            f"a relative perturbation barely moves it; consider an additive one of {step}"
            f"{' days' if col.kind == DATE else ''}, the default for this column{whole}: "
            f"leave the perturbation out (or perturbation=dc.rules.Additive({step}); in a "
            f"rules file, additive = {step})",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    out = rule.with_feature(col.start, Standardized(pert, col.mean, col.std))
    out = out.with_output(index, direction)
    if col.indicator:  # a missing value has no value to raise: not counted as judged
        out.missing_input = col.start + col.width - 1
    if isinstance(out, Threshold):
        if col.kind == DATE:
            raise ValueError(
                f"rule {located(rule, 'threshold')}: a threshold on the date column "
                f"{col.name!r} is not supported; a monotonic rule is"
            )
        out.threshold = col.to_encoded(out.threshold)
    return out, (col.name, index, direction)


def _check_pairs(
    keys: list[tuple[Rule, tuple[str, int, str]]], outputs: Outputs, strict: bool = True
) -> None:
    """Rules that cannot hold together are errors: two monotone rules on one column and
    output (the same direction twice, or opposite ones), a threshold against a monotone
    rule or another threshold at the same value, and monotone rules that have every class's
    probability move the same way with one column (they sum to 1)."""
    seen: dict[tuple[str, int], tuple[Rule, str]] = {}
    for rule, (column, index, direction) in keys:
        if type(rule) is not Monotonic:
            continue
        other = seen.get((column, index))
        if other is None:
            seen[(column, index)] = (rule, direction)
            continue
        on = outputs.describe(1 if outputs.kind == "binary" else index)
        two = (
            f" ({outputs.describe(0)} = 1 - {on}: a rule on one of two classes is the "
            "opposite rule on the other)"
            if outputs.kind == "binary"
            else ""
        )
        if other[1] == direction:
            raise ValueError(
                f"rules {located(other[0])} and {located(rule)} say the same "
                f"of {column!r} and {on}{two}: give it once"
            )
        raise ValueError(
            f"rules {located(other[0])} and {located(rule)} contradict each "
            f"other: {on} cannot both rise and fall with {column!r}{two}"
        )
    _check_thresholds(keys, seen, outputs, strict)
    if outputs.kind == "multiclass":
        for column in {c for c, _ in seen}:
            every = [seen.get((column, i)) for i in range(len(outputs.names))]
            ways = {w[1] for w in every if w is not None}
            if None not in every and len(ways) == 1:
                raise ValueError(
                    f"the rules have the probability of every class {_MOVES[ways.pop()]} with "
                    f"{column!r}, which cannot be: the probabilities sum to 1"
                )


_MOVES = {"increasing": "rise", "decreasing": "fall"}


def _check_thresholds(
    keys: list[tuple[Rule, tuple[str, int, str]]],
    monotone: dict[tuple[str, int], tuple[Rule, str]],
    outputs: Outputs,
    strict: bool = True,
) -> None:
    """A threshold rule against a monotone rule of the opposite direction, or against
    another threshold at the same value (in the opposite direction, or in the same one and
    so the same rule), and thresholds at one value that have every class's probability
    move the same way, are errors; the last two only with ``strict`` (a model file written
    before they were refused still loads)."""
    at: dict[tuple[str, int, float], tuple[Rule, str]] = {}
    for rule, (column, index, direction) in keys:
        if not isinstance(rule, Threshold):
            continue
        on = outputs.describe(1 if outputs.kind == "binary" else index)
        rival = monotone.get((column, index))
        if rival is not None and rival[1] != direction:
            raise ValueError(
                f"rules {located(rival[0])} and {located(rule)} contradict each other: {on} "
                f"cannot both {_MOVES[rival[1]]} with {column!r} and be "
                f"{'lower' if direction == 'decreasing' else 'higher'} above "
                f"{rule.threshold:g}"
            )
        twin = at.get((column, index, rule.threshold))
        if twin is not None and twin[1] != direction:
            raise ValueError(
                f"rules {located(twin[0])} and {located(rule)} contradict each other: {on} "
                f"cannot be both higher and lower above {rule.threshold:g}"
            )
        if twin is not None and strict:
            raise ValueError(
                f"rules {located(twin[0])} and {located(rule)} say the same of {column!r} and "
                f"{on} above {rule.threshold:g}: give it once"
            )
        at[(column, index, rule.threshold)] = (rule, direction)
    if outputs.kind != "multiclass" or not strict:
        return
    for column, _, threshold in at:
        every = [at.get((column, i, threshold)) for i in range(len(outputs.names))]
        ways = {w[1] for w in every if w is not None}
        if None not in every and len(ways) == 1:
            raise ValueError(
                f"the rules have the probability of every class "
                f"{'higher' if ways.pop() == 'increasing' else 'lower'} above {threshold:g} "
                f"of {column!r}, which cannot be: the probabilities sum to 1"
            )


def acts_on(rules: Any, outputs: Outputs, encoder: TableEncoder | None = None) -> list[str]:
    """What each feature rule constrains, e.g. ``monotonic(dist, increasing): P('late')``;
    with the ``encoder``, a column given by position also gets its name
    (``monotonic(1, increasing) on 'x1': y``)."""
    leaves, _ = leaves_and_weights(rules)
    out = []
    for leaf in leaves:
        if isinstance(leaf, Monotonic | Threshold):
            index = outputs.find(leaf.output)
            named = ""
            if encoder is not None and isinstance(leaf.feature, int | np.integer):
                named = f" on {encoder.column(leaf.feature).name!r}"
            out.append(f"{describe(leaf)}{named}: {outputs.describe(index)}")
    return out


def _resolve_penalty(
    rule: Penalty, encoder: TableEncoder, outputs: Outputs, strict: bool = True
) -> Rule:
    fn = rule.fn
    if isinstance(rule, Expression):
        known = {c.name for c in encoder.columns if c.kind == NUMERIC} | set(outputs.names)
        for name in rule.comparison.names:
            if name in known:
                continue
            if name in encoder.names:
                kind = "a date column" if encoder.column(name).kind == DATE else "categorical"
                raise ValueError(
                    f"rule {located(rule, 'expression')}: column {name!r} is {kind}; "
                    "an expression can only use numeric columns and outputs"
                )
            numeric = [c.name for c in encoder.columns if c.kind == NUMERIC]
            raise ValueError(
                f"rule {located(rule, 'expression')}: unknown name {name!r}; the numeric "
                f"columns are {listed(numeric)} and the outputs {', '.join(outputs.names)}"
            )
        if strict and not set(rule.comparison.names) & set(outputs.names):
            raise ValueError(
                f"rule {located(rule, 'expression')} names no output "
                f"({', '.join(outputs.names)}), so the model cannot change whether it holds: "
                "an expression compares the outputs with the columns"
            )
        clash = set(encoder.names) & set(outputs.names) & set(rule.comparison.names)
        if clash:
            raise ValueError(
                f"rule {located(rule, 'expression')}: {sorted(clash)[0]!r} is both a column "
                "and an output"
            )
        fn = ExpressionFn(rule)
    named = NamedPenalty(fn, encoder, outputs)
    if isinstance(rule, Expression):
        read = set(rule.comparison.names)
        flags = [c.start + c.width - 1 for c in encoder.columns if c.name in read and c.indicator]
        return ExpressionPenalty(named, rule.tau, rule.strict, flags)
    if type(rule) is Penalty:
        return Penalty(named, tau=rule.tau, strict=rule.strict)
    own = copy.copy(rule)  # a subclass keeps its own loss, satisfied and violation
    own.fn = named
    return own


def _same(rule: Rule) -> Any:
    """What two rules must share to be the same rule: an expression's comparison in one
    spelling (its spacing and sides aside) and its tau; any other rule, itself.

    >>> _same(Expression("3*x + 25 >= y")) == _same(Expression("y <= 3 * x + 25"))
    True
    """
    return (rule.comparison.form, rule.tau) if type(rule) is Expression else rule


def _check_repeats(leaves: list[Rule]) -> None:
    """A threshold or penalty rule given twice would count twice as much as the others
    (monotone rules given twice are named by ``_check_pairs``)."""
    for i, leaf in enumerate(leaves):
        if isinstance(leaf, Monotonic):
            continue
        earlier = next((other for other in leaves[:i] if _same(other) == _same(leaf)), None)
        if earlier is not None:
            raise ValueError(
                f"rules {located(earlier)} and {located(leaf)} are the same rule, which would "
                "count twice: give it once (a weight makes a rule count more)"
            )


def resolve(
    rules: Any, encoder: TableEncoder, outputs: Outputs, strict: bool = True
) -> Rule | None:
    """The estimator's ``rules`` as one rule on the encoded input, or None without rules.

    This is where table rules are checked (columns, outputs, duplicates, contradictions)
    and where default perturbations are chosen, for Python and the command line alike.
    A model file's rules are read with ``strict`` False: the checks added since a file
    was written (a rule given twice, an expression naming no output, weights beyond the
    limits) do not stop it from loading, and the advice given at fit is not given again.
    """
    leaves, weights = leaves_and_weights(rules)
    if strict:
        _check_repeats(leaves)
    resolved: list[Rule] = []
    keys: list[tuple[Rule, tuple[str, int, str]]] = []
    for leaf in leaves:
        if isinstance(leaf, Monotonic | Threshold):
            rule, key = _resolve_feature_rule(leaf, encoder, outputs, strict)
            resolved.append(rule)
            keys.append((leaf, key))
        elif isinstance(leaf, Penalty):
            resolved.append(_resolve_penalty(leaf, encoder, outputs, strict))
        else:
            raise ValueError(
                f"estimators support Monotonic, Threshold, Penalty and Expression "
                f"rules, got {type(leaf).__name__}"
            )
    _check_pairs(keys, outputs, strict)
    if not resolved:
        return None
    weights = relative_weights(weights)
    if len(resolved) == 1 and weights == [1.0]:
        return resolved[0]
    return AllOf(resolved, weights) if strict else AllOf.as_stored(resolved, weights)
