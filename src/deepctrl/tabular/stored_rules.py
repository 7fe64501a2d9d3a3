"""Table rules in a model file: written as JSON (`rules_config`) and rebuilt from it
(`rules_from_config`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from deepctrl.core.rules import AllOf, Monotonic, Penalty, Rule, Threshold, rule_from_config
from deepctrl.tabular.rule_leaves import leaves_and_weights
from deepctrl.tabular.table_messages import shown
from deepctrl.tabular.table_rules import Expression


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
