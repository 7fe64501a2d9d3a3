"""``dc.rules``: what a model should respect (the public names of
:mod:`deepctrl.core.rules`).

>>> import deepctrl as dc
>>> rule = dc.rules.Monotonic(0, "decreasing", perturbation=dc.rules.Relative(0.1))
"""

from deepctrl.core.rules import (
    Additive,
    AllOf,
    Context,
    Monotonic,
    Penalty,
    Perturbation,
    Relative,
    Rule,
    SignedRule,
    Standardized,
    Threshold,
    rule_from_config,
)

__all__ = [
    "Additive",
    "AllOf",
    "Context",
    "Monotonic",
    "Penalty",
    "Perturbation",
    "Relative",
    "Rule",
    "SignedRule",
    "Standardized",
    "Threshold",
    "rule_from_config",
]
