"""Early stopping per seed: a seed stops after ``patience`` validations without a new
lowest finite validation loss and keeps the weights of its best one (a loss of -inf, from a
task loss that underflowed, is no best).

>>> stop = EarlyStopping(2, patience=2, state_of=lambda j: {"w": j})
>>> stop.update(1, [0, 1], [1.0, 1.0], state_of=lambda j: {"w": 10 + j})
[True, True]
>>> stop.update(2, [0, 1], [0.5, 2.0], state_of=lambda j: {"w": 20 + j})
[True, True]
>>> stop.update(3, [0, 1], [0.7, 2.0], state_of=lambda j: {"w": 30 + j})
[True, False]
>>> stop.best_epochs, stop.best_state
([2, 1], [{'w': 20}, {'w': 11}])
>>> stop.update(4, [0], [float("-inf")], state_of=lambda j: {"w": 40})
[False]
>>> stop.best_epochs[0], stop.best[0]
(2, 0.5)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

StateOf = Callable[[int], dict[str, Any]]
"""The weights of the ``j``-th seed still training."""


class EarlyStopping:
    """Best validation loss, its epoch and its weights, and the validations waited, for
    each of ``n_seeds`` seeds (indexed by their place in the fit's seed list)."""

    def __init__(self, n_seeds: int, patience: int, state_of: StateOf) -> None:
        self.patience = patience
        self.best = [float("inf")] * n_seeds
        self.wait = [0] * n_seeds
        self.best_epochs = [0] * n_seeds
        self.best_state = [state_of(i) for i in range(n_seeds)]

    def update(
        self, epoch: int, active: list[int], val_loss: list[float], state_of: StateOf
    ) -> list[bool]:
        """Record the validation losses of the seeds ``active`` (their indices) at
        ``epoch``; returns, per active seed, whether it goes on training."""
        keep = [True] * len(active)
        for j, g in enumerate(active):
            if math.isfinite(val_loss[j]) and val_loss[j] < self.best[g]:
                self.best[g], self.wait[g], self.best_epochs[g] = val_loss[j], 0, epoch
                self.best_state[g] = state_of(j)
            else:
                self.wait[g] += 1
                keep[j] = self.wait[g] < self.patience
        return keep
