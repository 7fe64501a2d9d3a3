"""Settings that must be finite real numbers, whatever numeric type holds them.

A setting read from a config, computed with numpy or kept in a tensor arrives as a numpy
scalar or a one-element tensor; the checks here turn each into a Python float or int, and
refuse booleans, text, NaN and infinity with one line naming the setting.
"""

from __future__ import annotations

import math
import numbers

import torch
from torch import Tensor


def finite_real(value: object, what: str, *, positive: bool = False, nonneg: bool = False) -> float:
    """`value` as a finite float.

    Args:
        value: A number: Python, numpy, or a one-element tensor.
        what: How the message names it (`"rho"`, `"AllOf weight"`).
        positive: Require value > 0.
        nonneg: Require value >= 0.

    Returns:
        The float.

    Raises:
        ValueError: For a boolean, a non-number, NaN, infinity, or a value out of range.

    Examples:
        >>> import numpy as np
        >>> finite_real(np.float32(0.5), "rho", positive=True)
        0.5
    """
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype != torch.bool:
        value = value.item()
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{what} must be a number, got {value!r}")
    out = float(value)
    if not math.isfinite(out):
        raise ValueError(f"{what} must be finite, got {out}")
    if positive and not out > 0:
        raise ValueError(f"{what} must be > 0, got {out:g}")
    if nonneg and not out >= 0:
        raise ValueError(f"{what} must be >= 0, got {out:g}")
    return out


def index(value: object, what: str) -> int:
    """`value` as an int index: Python or numpy integers, never booleans.

    Examples:
        >>> import numpy as np
        >>> index(np.int64(2), "feature")
        2
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{what} must be an integer index, got {value!r}")
    return int(value)
