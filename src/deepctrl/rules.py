"""`dc.rules`: what a model should respect (the public names of `deepctrl.core.rules`), and
[output_column][deepctrl.rules.output_column] for rules of your own.

Examples:
    >>> import torch
    >>> import deepctrl as dc
    >>> rule = dc.rules.Monotonic(0, "decreasing", perturbation=dc.rules.Relative(0.1))
    >>> dc.rules.output_column(torch.zeros(4, 2, 3), 5).shape
    torch.Size([4])
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
    output_column,
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
    "output_column",
    "rule_from_config",
]
