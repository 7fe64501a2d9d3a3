"""The estimators' targets: a target's name as messages give it, the check of the values the
Poisson loss takes, and each target column's mean, spread and magnitude, which scale it."""

from __future__ import annotations

import numpy as np


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
