"""The estimators' targets: a target's name as messages give it, the check of the values the
Poisson loss takes, and each target column's mean, spread and magnitude, which scale it."""

from __future__ import annotations

import warnings

import numpy as np

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.value_bulk import value_bulk

CONSTANT_SPREAD = 1e-14
"""A target whose standard deviation is at most this fraction of its largest magnitude is
constant: float64 resolves about 1e-16 of a value, so a smaller spread is rounding."""
DWARFED_TARGET = 0.05
"""When a target's values but the farthest 2 % (at least one) span less than this many of
its standard deviations, a few far values set its scale and the others are learned at a
tiny fraction of it."""


def target_named(name: str) -> str:
    """'y', or 'y (column 'status')' for a target with its own name."""
    return "y" if name == "y" else f"y (column {name!r})"


def check_counts(values: np.ndarray, names: list[str]) -> None:
    """Targets for the Poisson loss are >= 0: an error naming the first negative one.

    >>> check_counts(np.array([[3.0], [-2.0]]), ["sales"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y (column 'sales') has a negative value, -2 at row 1: loss='poisson' needs ...
    """
    negative = np.argwhere(values < 0)
    if len(negative):
        row, col = negative[0]
        raise ValueError(
            f"{target_named(names[col])} has a negative value, {values[row, col]:g} at row "
            f"{row}: loss='poisson' needs counts or other values >= 0"
        )


LARGEST_TARGET = 1e150
"""The largest target magnitude a regressor takes: the squared errors that choose alpha and
score the model must stay within float64 (about 1.8e308)."""


def check_target_size(values: np.ndarray, names: list[str]) -> None:
    """Targets within ``LARGEST_TARGET``: an error naming the first beyond (its squared
    errors would overflow to inf at every alpha, leaving the choice of alpha to chance).

    >>> check_target_size(np.array([[3.0], [-1e200]]), ["sales"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: y (column 'sales') has a value too large, -1e+200 at row 1: its squared ...
    """
    far = np.argwhere(np.abs(values) > LARGEST_TARGET)
    if len(far):
        row, col = far[0]
        raise ValueError(
            f"{target_named(names[col])} has a value too large, {values[row, col]:g} at row "
            f"{row}: its squared errors overflow float64 beyond {LARGEST_TARGET:g}; give the "
            "target in larger units"
        )


def target_spread(
    values: np.ndarray, weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each target column's (weighted) mean and standard deviation, and its largest
    magnitude, in whose units both are computed: targets near 1e300 square beyond float64,
    and a spread of 1e-14 metres is a spread, not a constant.

    >>> [v.tolist() for v in target_spread(np.array([[1.0], [3.0]]))]
    [[2.0], [1.0], [3.0]]
    """
    unit = np.abs(values).max(axis=0)
    unit = np.where(unit > 0, unit, 1.0)
    scaled = values / unit
    mean = np.average(scaled, axis=0, weights=weight)
    std = np.sqrt(np.average((scaled - mean) ** 2, axis=0, weights=weight))
    return mean * unit, std * unit, unit


def constant_scale(std: np.ndarray, unit: np.ndarray) -> np.ndarray:
    """The scale a target is divided by: its standard deviation, or for a constant one its
    magnitude up to 1 (a constant 1e-6 is learned in units of 1e-6, not of 1).

    >>> constant_scale(np.array([2.0, 0.0, 0.0]), np.array([9.0, 1e-6, 50.0])).tolist()
    [2.0, 1e-06, 1.0]
    """
    return np.where(std > CONSTANT_SPREAD * unit, std, np.minimum(unit, 1.0))


def warn_far_targets(values: np.ndarray, names: list[str], std: np.ndarray) -> None:
    """A warning per target column whose few far values (a typo of 1e5 times the others)
    dwarf the rest: the standard deviation they set leaves the others almost alike.

    >>> import warnings
    >>> y = np.r_[np.linspace(12, 20, 299), 1.6e6][:, None]
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_far_targets(y, ["sales"], y.std(axis=0))
    >>> print(str(seen[0].message)[:62])
    target 'sales': its value 1.6e+06 dwarfs its other values (12.
    """
    for j, name in enumerate(names):
        low, high, worst, k = value_bulk(values[:, j])
        if 0 < high - low < DWARFED_TARGET * std[j]:  # not a target mostly of one value
            warnings.warn(
                f"target {name!r}: its value {worst:g} dwarfs its other values ({low:.3g} to "
                f"{high:.3g} for all but {k} of them), so the networks learn those at a tiny "
                "fraction of the target's scale and fit them poorly (loss='mae' too): "
                "correct or remove that row",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
