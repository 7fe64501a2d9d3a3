"""Hooks into [fit][deepctrl.engine.training.fit]'s epochs, for loggers, timers and custom
stopping.

A callback is a function of [EpochEnd][deepctrl.engine.callbacks.EpochEnd] (called after
every epoch; return True to stop training) or a [Callback][deepctrl.engine.callbacks.Callback]
with `on_epoch_start` and `on_epoch_end`.

Examples:
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
from dataclasses import dataclass, field
from typing import Any

from deepctrl.core.method_state import SeedState


@dataclass(frozen=True)
class EpochEnd:
    """What an epoch did, for every copy (seed, or method x seed) that trained in it.

    The lists have one entry per copy, in the order of `seeds`.

    Attributes:
        epoch: The epoch, from 1.
        seeds: The seed of each copy that trained in this epoch (early-stopped ones are
            gone).
        train_loss: Each copy's mean training objective over the epoch.
        val_loss: Each copy's validation loss, or None when this epoch did not validate.
        train_seconds: Seconds of the pass over the training data (validation excluded).
        lr: The epoch's learning rate.
        method_state: The method's state after the epoch, by name, one entry per copy that
            trained in it, in the order of `seeds` (None for a copy whose method keeps no
            such value): `rho` for DeepCTRL
            (re-measured every epoch with `rho="epoch"`), the multipliers for
            LagrangianDual (a list per copy, one per rule).
    """

    epoch: int
    seeds: list[int]
    train_loss: list[float]
    val_loss: list[float] | None
    train_seconds: float
    lr: float
    method_state: dict[str, list[Any]] = field(default_factory=dict)


def per_copy_values(state: SeedState) -> dict[str, list[Any]]:
    """A method state's tensors as Python values, one entry per copy (seed); for a stack of
    methods, None where a copy's method keeps no such tensor.

    >>> import torch
    >>> state = SeedState(2)
    >>> state.add("rho", torch.tensor([0.5, 2.0]))
    >>> per_copy_values(state)
    {'rho': [0.5, 2.0]}
    """
    out: dict[str, list[Any]] = {}
    start = 0
    for part in state.parts:
        for name, values in per_copy_values(part).items():
            out.setdefault(name, [None] * len(state))[start : start + len(part)] = values
        start += len(part)
    out.update({name: t.detach().cpu().tolist() for name, t in state.tensors.items()})
    return out


class Callback:
    """Base class for callbacks with both hooks; override what you need.

    Examples:
        A time budget: `on_epoch_end` returns True once the clock runs out, and every copy
        then keeps its best weights.

        ```python
        import time

        class Budget(dc.Callback):
            def __init__(self, seconds):
                self.deadline = time.monotonic() + seconds

            def on_epoch_end(self, end):
                return time.monotonic() > self.deadline
        ```
    """

    def on_epoch_start(self, epoch: int) -> None:
        """Called before an epoch trains.

        Args:
            epoch: The epoch about to train, from 1.
        """

    def on_epoch_end(self, end: EpochEnd) -> bool | None:
        """Called after the epoch (and its validation).

        Args:
            end: What the epoch did.

        Returns:
            True to stop training after this epoch; False or None to go on.
        """
        return None


class _EndOnly(Callback):
    def __init__(self, function: Callable[[EpochEnd], Any]) -> None:
        self.function = function

    def on_epoch_end(self, end: EpochEnd) -> Any:
        return self.function(end)  # as it returned: only True stops


def as_callbacks(callbacks: Sequence[Any]) -> list[Callback]:
    """Callbacks from `Callback` objects and plain functions of `EpochEnd`.

    Args:
        callbacks: `Callback` objects and functions of `EpochEnd`, in calling order.

    Returns:
        Every one as a `Callback` (a function runs as its `on_epoch_end`).

    Raises:
        ValueError: When an item is neither a `Callback` nor callable.
    """
    out: list[Callback] = []
    for c in callbacks:
        if isinstance(c, Callback):
            out.append(c)
        elif callable(c):
            out.append(_EndOnly(c))
        else:
            raise ValueError(
                f"a callback is a deepctrl.Callback or a function of EpochEnd, "
                f"got {type(c).__name__}"
            )
    return out
