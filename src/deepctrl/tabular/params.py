"""The estimators' parameters and what each may be, declared once: `check(params, table)`
raises one `ValueError` naming the first parameter out of bounds.

Examples:
    >>> check({"beta": 0.1, "n_seeds": "auto"}, {"beta": POSITIVE, "n_seeds": COUNT_OR_AUTO})
    >>> check({"beta": 0}, {"beta": POSITIVE})
    Traceback (most recent call last):
    ...
    ValueError: beta must be a positive number, got 0
"""

from __future__ import annotations

import copy
import numbers
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Allowed:
    """What a parameter may be: a number of a kind (`integer`) above `low` (and, with
    `high`, below it; `low_closed` admits `low` itself), or one of `choices`, or None when
    `none`; or, as a `switch`, True or False. `says` is how the error names the allowed
    values."""

    says: str
    number: bool = True
    integer: bool = False
    low: float = 0.0
    low_closed: bool = False
    high: float | None = None
    choices: tuple[Any, ...] = ()
    none: bool = False
    switch: bool = False

    def admits(self, value: Any) -> bool:
        """Whether `value` is allowed (a switch admits Python and NumPy booleans only)."""
        if self.switch:
            return isinstance(value, bool | np.bool_)
        if value is None:
            return self.none
        if isinstance(value, str):
            return value in self.choices
        if not self.number or isinstance(value, bool):
            return False
        kind = numbers.Integral if self.integer else numbers.Real
        if not isinstance(value, kind):
            return False
        x = float(value)
        above = x >= self.low if self.low_closed else x > self.low
        return above and (self.high is None or x < self.high)


POSITIVE = Allowed("a positive number")
COUNT = Allowed("a positive integer", integer=True, none=True)
COUNT_OR_AUTO = Allowed("a positive integer or 'auto'", integer=True, choices=("auto",))
POSITIVE_OR_AUTO = Allowed("positive or 'auto'", choices=("auto",))
FRACTION = Allowed("in [0, 1)", low_closed=True, high=1.0)
SWITCHES = {"verbose": Allowed("True or False", switch=True)}
"""The on/off parameters every estimator has, which `check` checks whatever its table."""


def one_of(*choices: str) -> Allowed:
    """Named choices only: the first may be "auto", which the error names apart.

    Examples:
        >>> one_of("auto", "constant", "cosine").says
        "'auto' or one of ('constant', 'cosine')"
    """
    if choices[0] == "auto":
        return Allowed(f"'auto' or one of {choices[1:]}", number=False, choices=choices)
    return Allowed(f"one of {choices}", number=False, choices=choices)


def number_or(choices: tuple[str, ...]) -> Allowed:
    """A positive number or one of `choices`."""
    return Allowed(f"a positive number or one of {choices}", choices=choices)


def check(params: Mapping[str, Any], table: Mapping[str, Allowed]) -> None:
    """Raise ValueError for the first parameter of `table`, then of `SWITCHES` (those
    `params` has), whose value in `params` is not allowed: "NAME must be ALLOWED, got VALUE".

    >>> check({"verbose": "no"}, {})
    Traceback (most recent call last):
    ...
    ValueError: verbose must be True or False, got 'no'
    """
    switches = {name: allowed for name, allowed in SWITCHES.items() if name in params}
    for name, allowed in {**table, **switches}.items():
        value = params[name]
        if not allowed.admits(value):
            raise ValueError(f"{name} must be {allowed.says}, got {value!r}")


def fitted_param(estimator: Any, name: str) -> Any:
    """The value parameter `name` had when `estimator` was fitted (its `fitted_params_`),
    which `set_params` since then does not change; the current value for an estimator
    fitted before fits recorded them.

    >>> class Est:
    ...     fitted_params_ = {"validation": "holdout"}
    ...     validation = "cross_fit"
    >>> fitted_param(Est(), "validation")
    'holdout'
    """
    params = getattr(estimator, "fitted_params_", None)
    return params[name] if params is not None else getattr(estimator, name)


def fit_snapshot(params: dict[str, Any]) -> dict[str, Any]:
    """A copy of the parameters a fit used (its `fitted_params_`), which later changes to
    the user's objects (a rule, a class_weight dict) do not reach; the objects themselves
    when they cannot be copied (a penalty on a method of an object holding a lock).

    >>> weights = {"a": 1.0}
    >>> kept = fit_snapshot({"class_weight": weights})
    >>> weights["a"] = 2.0
    >>> kept
    {'class_weight': {'a': 1.0}}
    """
    try:
        return copy.deepcopy(params)
    except Exception:  # any object may refuse to be copied
        return dict(params)
