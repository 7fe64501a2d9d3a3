"""Hooks into :func:`deepctrl.fit`'s epochs, for loggers, timers and custom stopping.

A callback is a function of :class:`EpochEnd` (called after every epoch; return True to
stop training) or a :class:`Callback` with ``on_epoch_start`` and ``on_epoch_end``.

>>> import torch, deepctrl as dc
>>> X = torch.randn(64, 3); y = X.sum(1, keepdim=True)
>>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
>>> seen = []
>>> result = dc.fit(model, dc.rules.Monotonic(0, "increasing"), train=(X, y), max_epochs=5,
...                 callbacks=[lambda end: seen.append(end.epoch) or end.epoch == 3])
>>> seen, result.epochs
([1, 2, 3], [3])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EpochEnd:
    """What an epoch did, for every copy (seed, or method x seed) that trained in it."""

    epoch: int
    """The epoch, from 1."""
    seeds: list[int]
    """The seed of each copy that trained in this epoch (early-stopped ones are gone)."""
    train_loss: list[float]
    """Each copy's mean training objective over the epoch."""
    val_loss: list[float] | None
    """Each copy's validation loss, or None when this epoch did not validate."""
    train_seconds: float
    """Seconds of the pass over the training data (validation excluded)."""
    lr: float
    """The epoch's learning rate."""


class Callback:
    """Base class for callbacks with both hooks; override what you need.

    Example: a time budget, ``class Budget(dc.Callback)`` whose ``on_epoch_end`` returns
    True once the clock runs out; every copy then keeps its best weights.
    """

    def on_epoch_start(self, epoch: int) -> None:
        """Before epoch ``epoch`` (from 1) trains."""

    def on_epoch_end(self, end: EpochEnd) -> bool | None:
        """After the epoch (and its validation); True stops training."""
        return None


class _EndOnly(Callback):
    def __init__(self, function: Callable[[EpochEnd], Any]) -> None:
        self.function = function

    def on_epoch_end(self, end: EpochEnd) -> bool | None:
        return bool(self.function(end))


def as_callbacks(callbacks: Sequence[Any]) -> list[Callback]:
    """Callbacks from :class:`Callback` objects and plain functions of :class:`EpochEnd`."""
    out: list[Callback] = []
    for c in callbacks:
        if isinstance(c, Callback):
            out.append(c)
        elif callable(c):
            out.append(_EndOnly(c))
        else:
            raise ValueError(f"a callback is a deepctrl.Callback or a function of EpochEnd, "
                             f"got {type(c).__name__}")
    return out
