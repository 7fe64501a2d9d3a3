"""`dc.methods`: the training objectives (the public names of `deepctrl.core.methods`).

`dc.methods.DeepCTRL` is the paper's objective under the paper's name; its class is
[DeepCTRLMethod][deepctrl.methods.DeepCTRLMethod], so that the network (`dc.DeepCTRL`) and
the objective do not share a class name inside the library.

Examples:
    >>> import deepctrl as dc
    >>> dc.methods.DeepCTRL(rho=1.0).name, dc.methods.TaskAndRule(0.1).name
    ('DeepCTRL', 'TaskAndRule(0.1)')
"""

from deepctrl.core.method_state import SeedState
from deepctrl.core.method_terms import Coefficients, Terms
from deepctrl.core.methods import (
    DeepCTRLMethod,
    LagrangianDual,
    LinearMethod,
    Method,
    RuleOnly,
    TaskAndRule,
    TaskOnly,
)

DeepCTRL = DeepCTRLMethod

__all__ = [
    "Coefficients",
    "DeepCTRL",
    "DeepCTRLMethod",
    "LagrangianDual",
    "LinearMethod",
    "Method",
    "RuleOnly",
    "SeedState",
    "TaskAndRule",
    "TaskOnly",
    "Terms",
]
