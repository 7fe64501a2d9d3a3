"""Where most of a column's values lie, without the few farthest from its median: a typo
of 1e5 times the others must not widen the range it is compared with, even in a table of
fifty rows."""

from __future__ import annotations

import numpy as np

FAR_SHARE = 0.02
"""The share of a column's values, those farthest from its median (at least one), left out
of its bulk."""


def value_bulk(values: np.ndarray) -> tuple[float, float, float, int]:
    """The lowest and highest of ``values`` once the ``k`` farthest from their median are
    left out (``FAR_SHARE`` of them, at least one), the farthest value, and ``k``.

    >>> value_bulk(np.r_[np.arange(1.0, 80.0), 1e6])
    (1.0, 79.0, 1000000.0, 1)
    >>> value_bulk(np.array([7.0]))  # one value is its own bulk
    (7.0, 7.0, 7.0, 0)
    """
    if len(values) < 2:
        only = float(values[0]) if len(values) else float("nan")
        return only, only, only, 0
    k = max(1, int(FAR_SHARE * len(values)))
    distance = np.abs(values - np.median(values))
    order = np.argpartition(distance, len(values) - k)
    rest = values[order[: len(values) - k]]
    return float(rest.min()), float(rest.max()), float(values[int(distance.argmax())]), k
