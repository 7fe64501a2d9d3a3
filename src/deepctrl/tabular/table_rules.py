"""Rules that name table columns, as the estimators take them, and their translation to
rules on the encoded model input.

* ``Monotonic("price", "decreasing")`` and ``Threshold("ap_hi", 129.5)``: the column is
  found in the table, the perturbation applies in the column's own units (before scaling)
  and the threshold is given in those units too.
* ``Penalty(fn)``: ``fn(columns, outputs)`` gets two dicts of tensors in the table's units:
  every numeric column by name, and every output by name (regression: the target names;
  classification: ``proba_<class>``, the class probabilities).
* ``Expression("charges <= 400 * bmi")``: the same as text, so it can be saved and written
  in a rules file.

>>> import pandas as pd, deepctrl as dc
>>> from deepctrl.tabular.encoding import TableEncoder
>>> enc = TableEncoder.fit(pd.DataFrame({"size": [1.0, 3.0], "price": [10.0, 30.0]}))
>>> rule = resolve([dc.Monotonic("price", "decreasing")], enc, Outputs.regression(["y"]))
>>> rule.feature, type(rule.perturbation).__name__
(1, 'Standardized')
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor

from deepctrl.core.rules import (
    AllOf,
    Monotonic,
    Penalty,
    Relative,
    Rule,
    Standardized,
    Threshold,
    rule_from_config,
)
from deepctrl.core.rules.expression import parse
from deepctrl.tabular.encoding import NUMERIC, TableEncoder


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
        raise ValueError(f"Expression({self.expression!r}) names columns: use it in "
                         "DeepCTRLRegressor or DeepCTRLClassifier")

    def config(self) -> dict[str, Any]:
        return {"kind": "expression", "expression": self.expression, "tau": self.tau}

    def __reduce__(self) -> tuple[type, tuple[str, float]]:
        return (Expression, (self.expression, self.tau))


class Outputs:
    """The model's outputs by name, and how to turn model outputs into the table's units."""

    def __init__(self, kind: str, names: list[str], mean: Iterable[float] = (),
                 std: Iterable[float] = ()) -> None:
        self.kind, self.names = kind, names
        self.mean = torch.tensor(list(mean), dtype=torch.float32)
        self.std = torch.tensor(list(std), dtype=torch.float32)

    @classmethod
    def regression(cls, names: list[str], mean: Iterable[float] | None = None,
                   std: Iterable[float] | None = None) -> Outputs:
        k = len(names)
        return cls("regression", names, mean if mean is not None else [0.0] * k,
                   std if std is not None else [1.0] * k)

    @classmethod
    def classification(cls, classes: Sequence[Any]) -> Outputs:
        names = [f"proba_{c}" for c in classes]
        return cls("binary" if len(classes) == 2 else "multiclass", names)

    @property
    def n_model_outputs(self) -> int:
        return 1 if self.kind == "binary" else len(self.names)

    def raw(self, y_hat: Tensor) -> dict[str, Tensor]:
        """Model outputs (batch, n_model_outputs) by name in the table's units: regression
        outputs unscaled, class probabilities from the logit (binary) or log-probabilities."""
        if self.kind == "regression":
            values = y_hat * self.std.to(y_hat) + self.mean.to(y_hat)
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
        self.inputs = [(c.name, c.start, c.mean, c.std) for c in encoder.columns
                       if c.kind == NUMERIC]

    def __call__(self, x: Tensor, y_hat: Tensor) -> Tensor:
        columns = {name: x[:, i] * std + mean for name, i, mean, std in self.inputs}
        return self.fn(columns, self.outputs.raw(y_hat))


class _ExpressionFn:
    def __init__(self, rule: Expression) -> None:
        self.rule, self.comparison = rule, rule.comparison

    def __reduce__(self) -> tuple[type, tuple[Expression]]:
        return (_ExpressionFn, (self.rule,))

    def __call__(self, columns: dict[str, Tensor], outputs: dict[str, Tensor]) -> Tensor:
        return self.comparison.residual({**columns, **outputs})


def describe(rule: Rule) -> str:
    """A short human description, e.g. ``monotonic(price, decreasing)``."""
    if isinstance(rule, Expression):
        return f"penalty({rule.expression})"
    if isinstance(rule, Threshold):
        return f"threshold({rule.feature} > {rule.threshold:g}, {rule.direction})"
    if isinstance(rule, Monotonic):
        return f"monotonic({rule.feature}, {rule.direction})"
    return type(rule).__name__.lower()


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


def _check_output(rule: Monotonic | Threshold, outputs: Outputs) -> None:
    n = outputs.n_model_outputs
    if not 0 <= rule.output < n:
        hint = " (a binary classifier has one output: the probability of its second class)" \
            if outputs.kind == "binary" else ""
        raise ValueError(f"rule {describe(rule)}: output {rule.output} is out of range, the "
                         f"model has {n} output(s){hint}")


def _resolve_feature_rule(rule: Monotonic | Threshold, encoder: TableEncoder,
                          outputs: Outputs) -> Rule:
    col = encoder.numeric(rule.feature, f"rule {describe(rule)}")
    _check_output(rule, outputs)
    if isinstance(rule.perturbation, Relative) and col.low <= 0 <= col.high:
        warnings.warn(f"rule {describe(rule)}: column {col.name!r} takes values around 0, where "
                      "a relative perturbation barely moves it; consider "
                      f"perturbation=dc.rules.Additive({0.1 * col.std:.3g})",
                      UserWarning, stacklevel=4)
    out = rule.with_feature(col.start, Standardized(rule.perturbation, col.mean, col.std))
    if isinstance(out, Threshold):
        out.threshold = col.to_encoded(out.threshold)
    return out


def _resolve_penalty(rule: Penalty, encoder: TableEncoder, outputs: Outputs) -> Rule:
    fn = rule.fn
    if isinstance(rule, Expression):
        known = {c.name for c in encoder.columns if c.kind == NUMERIC} | set(outputs.names)
        for name in rule.comparison.names:
            if name in known:
                continue
            if name in encoder.names:
                raise ValueError(f"rule {describe(rule)}: column {name!r} is categorical; "
                                 "an expression can only use numeric columns and outputs")
            raise ValueError(f"rule {describe(rule)}: unknown name {name!r}; outputs are "
                             f"{', '.join(outputs.names)}")
        clash = set(encoder.names) & set(outputs.names) & set(rule.comparison.names)
        if clash:
            raise ValueError(f"rule {describe(rule)}: {sorted(clash)[0]!r} is both a column "
                             "and an output")
        fn = _ExpressionFn(rule)
    return Penalty(NamedPenalty(fn, encoder, outputs), tau=rule.tau, strict=rule.strict)


def resolve(rules: Any, encoder: TableEncoder, outputs: Outputs) -> Rule | None:
    """The estimator's ``rules`` as one rule on the encoded input, or None without rules."""
    leaves, weights = leaves_and_weights(rules)
    resolved: list[Rule] = []
    for leaf in leaves:
        if isinstance(leaf, Monotonic | Threshold):
            resolved.append(_resolve_feature_rule(leaf, encoder, outputs))
        elif isinstance(leaf, Penalty):
            resolved.append(_resolve_penalty(leaf, encoder, outputs))
        else:
            raise ValueError(f"estimators support Monotonic, Threshold, Penalty and Expression "
                             f"rules, got {type(leaf).__name__}")
    if not resolved:
        return None
    if len(resolved) == 1 and weights == [1.0]:
        return resolved[0]
    return AllOf(resolved, weights)


def rules_config(rules: Any) -> list[dict[str, Any]]:
    """The estimator's rules as JSON, for a model file."""
    leaves, weights = leaves_and_weights(rules)
    out = []
    for leaf, weight in zip(leaves, weights, strict=True):
        if type(leaf) is Penalty:
            raise ValueError("a Penalty rule written in Python cannot be stored in a model file;"
                             " write it as an Expression('...') (deepctrl.tabular.table_rules)"
                             " to save it")
        cfg = leaf.config()
        if isinstance(cfg.get("feature"), np.integer):
            cfg["feature"] = int(cfg["feature"])
        out.append({"rule": cfg, "weight": weight})
    return out


def rules_from_config(items: list[dict[str, Any]]) -> list[Rule] | None:
    """Rebuild the rules stored by :func:`rules_config` (None when there are none)."""
    rules: list[Rule] = []
    weights: list[float] = []
    for item in items:
        cfg = item["rule"]
        if cfg.get("kind") == "expression":
            rules.append(Expression(cfg["expression"], cfg["tau"]))
        else:
            rules.append(rule_from_config(cfg))
        weights.append(float(item["weight"]))
    if not rules:
        return None
    return [AllOf(rules, weights)] if any(w != 1.0 for w in weights) else rules
