"""How :func:`deepctrl.fit` trains: its options as one keyword-built object, and the
learning-rate schedules.

>>> Options(batch_size=32).batch_size, Options().lr_schedule
(32, 'constant')
>>> SWITCHES
('progress', 'shuffle', 'reinit', 'compile', 'exact_sums')
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import torch

from deepctrl.core.metrics import PerSample
from deepctrl.engine.callbacks import Callback


@dataclass(frozen=True, kw_only=True)
class Options:
    """How :func:`fit` trains (its keyword arguments other than data, method and seeds)."""

    task_loss: str | PerSample = "mae"
    batch_size: int = 64
    lr: float = 1e-3
    max_epochs: int = 1000
    patience: int = 10
    val_every: int = 1
    progress: bool = False
    input_noise: float = 0.0
    shuffle: bool = True
    device: str | torch.device | None = None
    reinit: bool = True
    chunk_batches: int = 64
    compile: bool = False
    exact_sums: bool = False
    lr_schedule: str = "constant"
    callbacks: tuple[Any, ...] = ()
    folds: tuple[Any, ...] | None = None

    def __post_init__(self) -> None:
        # one callback given alone is a list of one; folds are rows per seed, never a count
        callbacks: Any = self.callbacks
        if isinstance(callbacks, Callback) or callable(callbacks):
            callbacks = (callbacks,)
        elif isinstance(callbacks, str | bytes) or not hasattr(callbacks, "__iter__"):
            raise ValueError(
                "callbacks must be a list of deepctrl.Callback objects or functions of "
                f"EpochEnd, got {type(callbacks).__name__}"
            )
        object.__setattr__(self, "callbacks", tuple(callbacks))
        if self.folds is not None:
            if not isinstance(self.folds, list | tuple | np.ndarray):
                raise ValueError(
                    "folds takes one array of row indices per seed (the training rows that "
                    f"seed validates on), not a {type(self.folds).__name__}: "
                    "folds=[rows_0, rows_1, ...]"
                )
            object.__setattr__(self, "folds", tuple(self.folds))


SWITCHES = tuple(f.name for f in fields(Options) if f.type == "bool")
"""The options that are True or False (`fit` refuses any other value for them)."""

LR_SCHEDULES = ("constant", "cosine")
LR_FLOOR = 1 / 50
"""The cosine schedule's last learning rate, as a fraction of the first."""


def scheduled_lr(schedule: str, lr: float, epoch: int, epochs: int) -> float:
    """The learning rate of epoch ``epoch`` (from 1) of ``epochs`` under ``schedule``.

    >>> [round(scheduled_lr("cosine", 1.0, e, 3), 2) for e in (1, 2, 3)]
    [1.0, 0.51, 0.02]
    """
    if schedule == "constant":
        return lr
    t = (epoch - 1) / max(1, epochs - 1)
    return lr * (LR_FLOOR + (1 - LR_FLOOR) * 0.5 * (1 + math.cos(math.pi * t)))
