"""Rules that name table columns, as the estimators take them, and their translation to
rules on the encoded model input.

* ``Monotonic("price", "decreasing")`` and ``Threshold("ap_hi", 129.5)``: the column is
  found in the table, the perturbation applies in the column's own units (before scaling;
  days for a date column) and the threshold is given in those units too (thresholds on
  date columns are not supported). Without a perturbation one is chosen from the column
  (:func:`default_perturbation`). ``output`` names the class (a label, or its index in
  ``classes_``) or the target column; by default a rule acts on the first output: in a
  binary classifier the probability of ``classes_[1]``.
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
import math
import unicodedata
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch
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
    rule_from_config,
)
from deepctrl.core.rules.expression import parse
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.encoding import (
    DATE,
    NUMERIC,
    Column,
    TableEncoder,
    listed,
    numeric_values,
    shown,
)


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


def is_int(value: Any) -> bool:
    """Whether ``value`` is an integer (Python's or numpy's), not a boolean."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _whole(label: Any) -> bool:
    """A whole-number class label: 2, or its text '2' (the estimators keep labels as text)."""
    return is_int(label) or (isinstance(label, str) and label.lstrip("-").isdigit())


def _composed(label: Any) -> str:
    """A label as text with its accents composed (Unicode NFC)."""
    return unicodedata.normalize("NFC", str(label))


class Outputs:
    """The model's outputs by name, and how to turn model outputs into the table's units."""

    def __init__(
        self,
        kind: str,
        names: list[str],
        mean: Iterable[float] = (),
        std: Iterable[float] = (),
        labels: Sequence[Any] = (),
        recoded_hint: bool = True,
        link: str = "identity",
    ) -> None:
        self.kind, self.names = kind, names
        self.link = link
        """How regression outputs f become the target's units: ``"identity"``,
        f * std + mean, or ``"log"``, exp(f) * std + mean (a Poisson model's log-rate), so
        that rules see the values ``predict`` returns."""
        self.labels = list(labels)
        """The class labels of a classifier (empty for regression)."""
        self.recoded_hint = recoded_hint
        """Whether a class not found with labels 0, 1, ... hints that a meta-estimator may
        have recoded the labels (never so on the command line, which reads them from the
        file)."""
        self.mean = torch.tensor(list(mean), dtype=torch.float32)
        self.std = torch.tensor(list(std), dtype=torch.float32)

    @classmethod
    def regression(
        cls,
        names: list[str],
        mean: Iterable[float] | None = None,
        std: Iterable[float] | None = None,
        link: str = "identity",
    ) -> Outputs:
        """Regression outputs `names`, in the target's units f * std + mean, or under the
        ``"log"`` link exp(f) * std + mean.

        >>> out = Outputs.regression(["sales"], [0.0], [20.0], link="log")
        >>> out.raw(torch.tensor([[0.0], [math.log(2.0)]]))["sales"].tolist()
        [20.0, 40.0]
        """
        k = len(names)
        return cls(
            "regression",
            names,
            mean if mean is not None else [0.0] * k,
            std if std is not None else [1.0] * k,
            link=link,
        )

    @classmethod
    def classification(cls, classes: Sequence[Any], recoded_hint: bool = True) -> Outputs:
        names = [f"proba_{c}" for c in classes]
        labels = [c.item() if isinstance(c, np.generic) else c for c in classes]
        kind = "binary" if len(classes) == 2 else "multiclass"
        return cls(kind, names, labels=labels, recoded_hint=recoded_hint)

    def find(self, output: Any) -> int:
        """The index of a class label or target name, or of an index given as such;
        ``output`` None is the first output (regression) or ``classes_[1]`` (binary).

        With whole-number class labels an integer names a label, never a position, so that
        ``1`` cannot mean one class here and another there. A label's accents may be
        written either way (``ö``, or ``o`` and a combining mark).

        >>> Outputs.classification(["late", "ontime"]).find(1)
        1
        >>> Outputs.classification(["1", "2", "5"]).find(2)
        1
        """
        if output is None:
            return 1 if self.kind == "binary" else 0
        keys = self.labels if self.labels else self.names
        for i, key in enumerate(keys):
            if key == output or _composed(key) == _composed(output):
                return i
        whole = any(_whole(k) for k in self.labels)
        if is_int(output) and not whole and 0 <= output < len(keys):
            return int(output)
        what, plural = ("class", "classes") if self.labels else ("target", "targets")
        hint = ""
        if is_int(output) and whole:
            hint = "; with whole-number classes an output names a class, not a position"
        elif (
            self.recoded_hint
            and isinstance(output, str)
            and [str(k) for k in keys] == [str(i) for i in range(len(keys))]
        ):
            hint = (
                "; a meta-estimator (cross_val_predict, VotingClassifier, StackingClassifier) "
                "may have recoded the labels to 0, 1, ...: name the class by its position in "
                "the sorted original labels (output=0 for the first, output=1 for the second)"
            )
        elif isinstance(output, str):
            alike = [k for k in keys if str(k).strip().casefold() == output.strip().casefold()]
            hint = f"; did you mean {alike[0]!r}?" if alike else ""
        raise ValueError(
            f"output {output!r} is not a {what} of this model ({plural}: "
            f"{listed(list(keys))}){hint}"
        )

    def describe(self, index: int) -> str:
        """``P('late')`` for a class, the target name for regression."""
        return f"P({self.labels[index]!r})" if self.labels else self.names[index]

    def at_targets(self, scaled: Tensor) -> Tensor:
        """The model outputs that predict regression targets given as the networks train
        on them: the targets themselves, or under the log link their log, a target of 0
        taken as a millionth (exp(f) is never 0, so a zero count is only approached).

        >>> Outputs.regression(["n"], link="log").at_targets(torch.tensor([[1.0], [0.0]]))
        tensor([[  0.0000],
                [-13.8155]])
        """
        return scaled.clamp_min(1e-6).log() if self.link == "log" else scaled

    @property
    def n_model_outputs(self) -> int:
        return 1 if self.kind == "binary" else len(self.names)

    def raw(self, y_hat: Tensor) -> dict[str, Tensor]:
        """Model outputs (batch, n_model_outputs) by name in the table's units: regression
        outputs unscaled (exp first under the log link), class probabilities from the logit
        (binary) or log-probabilities."""
        if self.kind == "regression":
            linked = y_hat.exp() if self.link == "log" else y_hat
            values = linked * self.std.to(y_hat) + self.mean.to(y_hat)
        elif self.kind == "binary":
            p = torch.sigmoid(y_hat[:, :1])
            values = torch.cat([1 - p, p], dim=1)
        else:
            values = y_hat.exp()
        return {name: values[:, j] for j, name in enumerate(self.names)}


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


class _ExpressionFn:
    def __init__(self, rule: Expression) -> None:
        self.rule, self.comparison = rule, rule.comparison

    def __reduce__(self) -> tuple[type, tuple[Expression]]:
        return (_ExpressionFn, (self.rule,))

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


def _named(rule: Rule, key: str | None = None) -> str:
    """:func:`describe` with where the rule (or its ``key``) was written, for errors."""
    return describe(rule, where=True, key=key)


def leaves_and_weights(rules: Any) -> tuple[list[Rule], list[float]]:
    """The single rules of an estimator's ``rules`` (a rule, a list, or None) with weights."""
    if rules is None:
        return [], []
    items = [rules] if isinstance(rules, Rule) else rules
    if not isinstance(items, list | tuple):
        raise ValueError(f"rules must be a rule or a list of rules, got {type(rules).__name__}")
    leaves: list[Rule] = []
    weights: list[float] = []
    for item in items:
        if not isinstance(item, Rule):
            raise ValueError(f"rules must be deepctrl rules, got {type(item).__name__}")
        leaves += item.leaves()
        weights += item.weights if isinstance(item, AllOf) else [1.0]
    return leaves, weights


def relative_weights(weights: list[float]) -> list[float]:
    """Rule weights divided by the largest: only their ratios count, so one factor on
    every weight, or a single rule's weight, trains the same model to the last bit (rho
    would absorb the factor, but not the optimizer's rounding). All zeros stay as given,
    for `AllOf` to refuse.

    >>> relative_weights([2.0, 4.0]), relative_weights([0.5])
    ([0.5, 1.0], [1.0])
    """
    top = max(weights, default=0.0)
    return [w / top for w in weights] if top > 0 else weights


def default_perturbation(col: Column) -> Perturbation:
    """The perturbation of a rule that gives none, in the column's units: relative (up to
    10 %, the paper's) for a column whose values are all positive and not whole numbers;
    otherwise (values that include 0 or negatives, counts, dates) additive, up to a tenth
    of the column's standard deviation, and for whole numbers (counts, flags) at least up
    to the next one: a rule trained on steps of a tenth of a stop could hold from 0.0 to
    0.1 stops and fall from 0 stops to 1.

    >>> from deepctrl.tabular.encoding import Column
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
        raise ValueError(f"rule {_named(rule, 'output')}: {exc}") from None
    if outputs.kind == "binary":
        return 0, index == 0
    return index, False


def _resolve_feature_rule(
    rule: Monotonic | Threshold, encoder: TableEncoder, outputs: Outputs
) -> tuple[Rule, tuple[str, int, str]]:
    """The rule on the encoded input, and (column, output, direction) it constrains."""
    col = encoder.ordered(rule.feature, f"rule {_named(rule, 'column')}")
    index, flip = _feature_key(rule, col, outputs)
    direction = (
        rule.direction
        if not flip
        else ("decreasing" if rule.direction == "increasing" else "increasing")
    )
    given = rule.given_perturbation
    pert = given if given is not None else default_perturbation(col)
    if isinstance(pert, Relative) and col.low <= 0 <= col.high:
        fallback = default_perturbation(col)
        assert isinstance(fallback, Additive)  # a column that reaches 0 gets an additive one
        step = f"{fallback.scale:.3g}"
        whole = " (whole numbers step at least to the next one)" if col.integer else ""
        warnings.warn(
            f"rule {_named(rule, 'column')}: column {col.name!r} takes values around 0, where "
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
                f"rule {_named(rule, 'threshold')}: a threshold on the date column "
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
                f"rules {_named(other[0])} and {_named(rule)} say the same "
                f"of {column!r} and {on}{two}: give it once"
            )
        raise ValueError(
            f"rules {_named(other[0])} and {_named(rule)} contradict each "
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
                f"rules {_named(rival[0])} and {_named(rule)} contradict each other: {on} "
                f"cannot both {_MOVES[rival[1]]} with {column!r} and be "
                f"{'lower' if direction == 'decreasing' else 'higher'} above "
                f"{rule.threshold:g}"
            )
        twin = at.get((column, index, rule.threshold))
        if twin is not None and twin[1] != direction:
            raise ValueError(
                f"rules {_named(twin[0])} and {_named(rule)} contradict each other: {on} "
                f"cannot be both higher and lower above {rule.threshold:g}"
            )
        if twin is not None and strict:
            raise ValueError(
                f"rules {_named(twin[0])} and {_named(rule)} say the same of {column!r} and "
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
                    f"rule {_named(rule, 'expression')}: column {name!r} is {kind}; "
                    "an expression can only use numeric columns and outputs"
                )
            numeric = [c.name for c in encoder.columns if c.kind == NUMERIC]
            raise ValueError(
                f"rule {_named(rule, 'expression')}: unknown name {name!r}; the numeric "
                f"columns are {listed(numeric)} and the outputs {', '.join(outputs.names)}"
            )
        if strict and not set(rule.comparison.names) & set(outputs.names):
            raise ValueError(
                f"rule {_named(rule, 'expression')} names no output "
                f"({', '.join(outputs.names)}), so the model cannot change whether it holds: "
                "an expression compares the outputs with the columns"
            )
        clash = set(encoder.names) & set(outputs.names) & set(rule.comparison.names)
        if clash:
            raise ValueError(
                f"rule {_named(rule, 'expression')}: {sorted(clash)[0]!r} is both a column "
                "and an output"
            )
        fn = _ExpressionFn(rule)
    named = NamedPenalty(fn, encoder, outputs)
    if type(rule) in (Penalty, Expression):
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
                f"rules {_named(earlier)} and {_named(leaf)} are the same rule, which would "
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
    limits) do not stop it from loading.
    """
    leaves, weights = leaves_and_weights(rules)
    if strict:
        _check_repeats(leaves)
    resolved: list[Rule] = []
    keys: list[tuple[Rule, tuple[str, int, str]]] = []
    for leaf in leaves:
        if isinstance(leaf, Monotonic | Threshold):
            rule, key = _resolve_feature_rule(leaf, encoder, outputs)
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
            value = NamedPenalty(_ExpressionFn(rule), encoder, outputs)(x, at.to(x.dtype))
        bad = ~torch.isfinite(value.reshape(len(x), -1)).all(dim=1)
        if bad.any():
            row = int(rows[bad.numpy()].min())  # the first in the user's table
            raise RowValueError(
                f"rule {_named(rule, 'expression')} is not a finite number on "
                f"{int(bad.sum())} of the {len(x)} rows given to fit (the first at ",
                row,
                "): a log, square root or division there has no value; keep its argument in "
                "range (max(..., 0.01), say)",
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
            col = encoder.ordered(rule.feature, f"rule {_named(rule, 'column')}")
            if col.low == col.high:
                raise ValueError(
                    f"rule {_named(rule, 'column')}: column {col.name!r} is constant "
                    f"({col.low:g}) in the training rows, so the rule can be neither learned "
                    "nor checked"
                )
            if isinstance(rule, Threshold) and col.kind == NUMERIC:
                if not col.low < float(rule.threshold) < col.high:
                    raise ValueError(
                        f"rule {_named(rule, 'threshold')}: the threshold "
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
        f"rule {_named(rule, 'threshold')}: no training row can cross the threshold "
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
    raise ValueError(
        f"rule {_named(rule, 'column')}: its perturbation moves {col.name!r} by up to "
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
                f"rules {_named(rule, 'output')} and {_named(unnamed[0])} act on different "
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
        if len(labels) > 2 and all(_whole(v) for v in labels)
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


def rules_config(rules: Any) -> list[dict[str, Any]]:
    """The estimator's rules as JSON, for a model file."""
    leaves, weights = leaves_and_weights(rules)
    out = []
    for leaf, weight in zip(leaves, weights, strict=True):
        if type(leaf) is Penalty:
            raise ValueError(
                "a Penalty rule written in Python cannot be stored in a model file;"
                " write it as an Expression('...') (deepctrl.tabular.table_rules)"
                " to save it"
            )
        if type(leaf) not in STORED_RULES:
            raise ValueError(
                f"rule {type(leaf).__name__} is a subclass of {_built_in(leaf)} with code of "
                "its own, which a model file cannot store (it holds Monotonic, Threshold and "
                "Expression rules): keep the fitted estimator with joblib, or fit it with "
                f"{_built_in(leaf)} to save it"
            )
        cfg = leaf.config()
        if isinstance(cfg.get("feature"), np.integer):
            cfg["feature"] = int(cfg["feature"])
        out.append({"rule": cfg, "weight": weight})
    return out


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


class UnknownRuleKindError(ValueError):
    """A model file's rule of a kind deepctrl does not rebuild."""


STORED_RULES = (Monotonic, Threshold, Expression)
"""The rule classes a model file stores (their `config()` rebuilds them)."""


def _built_in(rule: Rule) -> str:
    """The name of the deepctrl rule class ``rule`` derives from."""
    return next(
        kind.__name__
        for kind in type(rule).__mro__
        if kind.__module__.startswith("deepctrl.") and issubclass(kind, Rule)
    )


def rules_from_config(items: list[dict[str, Any]]) -> list[Rule] | None:
    """Rebuild the rules stored by :func:`rules_config` (None when there are none)."""
    rules: list[Rule] = []
    weights: list[float] = []
    for item in items:
        cfg = item["rule"]
        kind = cfg.get("kind")
        if kind == "expression":
            rules.append(Expression(cfg["expression"], cfg["tau"]))
        elif kind in ("monotonic", "threshold", "allof"):
            rules.append(rule_from_config(cfg))
        else:
            raise UnknownRuleKindError(
                f"it holds a rule of kind {shown(kind)}, which deepctrl does not store "
                "(a rule class of one's own, or a file from a newer deepctrl)"
            )
        weights.append(float(item["weight"]))
    if not rules:
        return None
    return [AllOf.as_stored(rules, weights)] if any(w != 1.0 for w in weights) else rules
