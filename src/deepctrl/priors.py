"""`dc.priors`: distributions of the rule strength alpha drawn during training (the public
names of `deepctrl.core.priors`).

Examples:
    >>> import deepctrl as dc
    >>> dc.priors.Beta(0.1, 0.1)
    Beta(a=0.1, b=0.1)
"""

from deepctrl.core.priors import Beta, Fixed, Prior, Uniform

__all__ = ["Beta", "Fixed", "Prior", "Uniform"]
