"""Settings that must be finite real numbers, whatever numeric type holds them.

A setting read from a config, computed with numpy or kept in a tensor arrives as a numpy
scalar or a one-element tensor; the checks here turn each into a Python float or int, and
refuse booleans, text, NaN and infinity with one line naming the setting. Seeds must be
integers and models modules, likewise.
"""

from __future__ import annotations

import math
import numbers
import reprlib
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn


def finite_real(value: object, what: str, *, positive: bool = False, nonneg: bool = False) -> float:
    """`value` as a finite float.

    Args:
        value: A number: Python, numpy (a one-element array too), or a one-element tensor.
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
        >>> finite_real(np.array([0.25]), "alpha")
        0.25
        >>> finite_real(np.zeros(600), "alpha")
        Traceback (most recent call last):
        ...
        ValueError: alpha must be one number, got an array of shape (600,)
    """
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype != torch.bool:
        value = value.item()
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iuf":
        value = value.item()
    if isinstance(value, Tensor | np.ndarray) and math.prod(value.shape) != 1:  # not its values
        kind = "a tensor" if isinstance(value, Tensor) else "an array"
        raise ValueError(f"{what} must be one number, got {kind} of shape {tuple(value.shape)}")
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


def nonneg_int(value: object, what: str) -> int:
    """`value` as an integer >= 0 (Python, numpy, or a one-element integer tensor), never a
    boolean or a float: a seed, a count.

    Examples:
        >>> nonneg_int(3, "seed"), nonneg_int(torch.tensor(3), "seed")
        (3, 3)
        >>> nonneg_int(1.5, "seed")
        Traceback (most recent call last):
        ...
        ValueError: seed must be an integer >= 0, got 1.5
    """
    if (
        isinstance(value, torch.Tensor)
        and value.numel() == 1
        and not (value.dtype.is_floating_point or value.dtype.is_complex)
        and value.dtype != torch.bool
    ):
        value = int(value.item())
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 0:
        raise ValueError(f"{what} must be an integer >= 0, got {value!r}")
    return int(value)


def module(value: object, what: str) -> nn.Module:
    """`value` itself when it is a `torch.nn.Module`; anything else is a TypeError naming
    it (a path or a class given where a built network belongs, say).

    Examples:
        >>> module("net.pt", "model")
        Traceback (most recent call last):
        ...
        TypeError: model must be a torch.nn.Module, got 'net.pt' (str)
    """
    if not isinstance(value, nn.Module):
        raise TypeError(
            f"{what} must be a torch.nn.Module, got {reprlib.repr(value)} ({type(value).__name__})"
        )
    return value


def saved_state(state: object, keys: tuple[str, ...], source: str) -> dict[str, Any]:
    """`state` when it is a dict holding `keys`, as `source` (`"Objective.state_dict()"`)
    returns it; anything else is an error naming what is missing.

    Examples:
        >>> saved_state({}, ("params",), "Beta.state_dict()")
        Traceback (most recent call last):
        ...
        ValueError: state is not what Beta.state_dict() returns: it has no 'params'
    """
    if not isinstance(state, dict):
        raise TypeError(f"state must be the dict {source} returns, got {type(state).__name__}")
    missing = [k for k in keys if k not in state]
    if missing:
        raise ValueError(
            f"state is not what {source} returns: it has no {', '.join(map(repr, missing))}"
        )
    return state


def first_sentence(exc: BaseException) -> str:
    """The first sentence of an exception's message, for one-line errors that quote it.

    >>> first_sentence(RuntimeError("Cannot do it. Try again.\\nDetails"))
    'Cannot do it'
    """
    return str(exc).splitlines()[0].split(". ")[0] if str(exc) else type(exc).__name__


def restore_generator(generator: torch.Generator, value: object, where: str) -> None:
    """Set `generator` to a state saved with ``get_state``; anything else is a ValueError
    naming `where` it came from.

    Examples:
        >>> restore_generator(torch.Generator(), "x", "state['generator']")
        Traceback (most recent call last):
        ...
        ValueError: state['generator'] is not a saved generator state: expected a \
torch.ByteTensor, but got str
    """
    try:
        generator.set_state(value)  # type: ignore[arg-type]
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"{where} is not a saved generator state: {first_sentence(exc)}") from exc
