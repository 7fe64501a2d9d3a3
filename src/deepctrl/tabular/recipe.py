"""How an estimator trains when its training parameters are "auto", by the number of
training rows.

* Below :data:`MANY_ROWS`: Adam at 1e-3 throughout, up to 500 epochs with patience 20,
  batches of at most 256, five networks averaged, width up to 128. A fit costs seconds
  here, and this recipe was as accurate as or more accurate than a shorter one on the
  small benchmark tables (diabetes test MSE 3121 against 3206).
* From :data:`MANY_ROWS` on: a budget of about :data:`STEP_BUDGET` optimizer steps, batches
  of up to 1024 (about :data:`ROWS_PER_STEP` rows per step), a learning rate scaled with the
  square root of the batch and decayed along half a cosine (``dc.fit(lr_schedule="cosine")``),
  three networks of width up to :data:`WIDEST`. On a 40,000-row table it fits five times
  faster than the first recipe at the same test error.

The estimators' ``recipe="long"`` or ``"step_budget"`` takes one of the two whatever the
rows. Just below the switch the step budget fits about ten times faster; the long recipe
stays the default there because it was the more accurate on the small benchmark tables
(COMPAS, Heart disease and Auto MPG in ``benchmarks/monotone_suite.py``).

The first trains on one intra-op thread, the second on as many as other processes
leave cores free (``Recipe.one_thread``; PyTorch's setting is restored after): a thread
that shares its core with a busy process stalls the others at every synchronisation. On a
2-core machine, quiet, 5,000 rows fit in the same 7 - 9 s on one thread or two, 40,000 rows
in 4.5 - 4.6 s on two against 6.4 - 6.8 s on one; beside two busy processes, two threads
took 39 - 158 s against 9 s (5,000 rows) and 23.7 - 27.3 s against 9.6 - 10.0 s (40,000
rows; ``benchmarks/table_threads.py``). 10^6 rows took 24.9 s on two and 25.3 s on one
(``benchmarks/table_speed.py --rows 1000000``).

Measured with benchmarks/table_speed.py, tabular_quality.py and monotone_suite.py
(docs/results/tabular.md).

>>> fast = training_recipe(25_600)
>>> fast.batch_size, fast.max_epochs, round(fast.learning_rate, 4), fast.n_seeds
(512, 40, 0.01, 3)
>>> training_recipe(800).lr_schedule, training_recipe(800).batch_size, fast.one_thread
('constant', 32, False)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

MANY_ROWS = 10_000
"""Training rows from which the step-budget recipe replaces the long constant-rate one."""
STEP_BUDGET = 2000
"""Optimizer steps the epoch budget aims at."""
EPOCHS = (5, 200)
"""The fewest and most epochs of the budget."""
ROWS_PER_STEP = 50
BATCH = (16, 1024)
LEARNING_RATE = 1e-2
"""At a batch of 512; scaled with the square root of the batch."""
WIDEST = 32
"""The widest hidden layer of the step-budget recipe: on the 40,000-row benchmark table 48
fitted 15-23 % slower at the same test error, 64 slower still (``table_speed.py --param
hidden_size=48``)."""


@dataclass(frozen=True)
class Recipe:
    """The training parameters an estimator passes to :func:`deepctrl.fit`, and the widest
    hidden layer its network may get."""

    batch_size: int
    learning_rate: float
    max_epochs: int
    patience: int
    lr_schedule: str
    n_seeds: int
    max_hidden: int
    one_thread: bool = False
    """Train on one intra-op thread; otherwise on as many as other processes leave cores
    free (:func:`deepctrl.engine.workers.free_threads`). PyTorch's setting is restored
    after."""


def _power_of_two(value: float, low: int, high: int) -> int:
    return int(min(max(2 ** round(math.log2(max(value, 1.0))), low), high))


def _small(n_train: int) -> Recipe:
    return Recipe(_power_of_two(n_train / 32, 16, 256), 1e-3, 500, 20, "constant", 5, 128, True)


def _large(n_train: int, batch: int) -> Recipe:
    steps = max(1, math.ceil(n_train / batch))
    epochs = min(max(math.ceil(STEP_BUDGET / steps), EPOCHS[0]), EPOCHS[1])
    return Recipe(
        batch,
        LEARNING_RATE * math.sqrt(batch / 512),
        epochs,
        max(10, math.ceil(epochs / 3)),
        "cosine",
        3,
        WIDEST,
        False,
    )


RECIPES = ("auto", "long", "step_budget")
"""The estimators' ``recipe``: by the number of training rows, or one of the two always."""


def training_recipe(
    n_train: int,
    batch_size: Any = "auto",
    learning_rate: Any = "auto",
    max_epochs: Any = "auto",
    patience: Any = "auto",
    lr_schedule: str = "auto",
    n_seeds: Any = "auto",
    recipe: str = "auto",
) -> Recipe:
    """The recipe for ``n_train`` training rows; a value given for a parameter is kept.
    ``recipe`` "long" or "step_budget" takes that recipe whatever the rows ("auto": the long
    one below :data:`MANY_ROWS`).

    >>> training_recipe(5000).max_epochs, training_recipe(5000, recipe="step_budget").max_epochs
    (500, 50)
    """
    if recipe not in RECIPES:
        raise ValueError(f"recipe must be one of {', '.join(RECIPES)}, got {recipe!r}")
    if recipe == "long" or (recipe == "auto" and n_train < MANY_ROWS):
        base = _small(n_train)
        batch = base.batch_size if batch_size == "auto" else int(batch_size)
    else:
        batch = (
            _power_of_two(n_train / ROWS_PER_STEP, *BATCH)
            if batch_size == "auto"
            else int(batch_size)
        )
        base = _large(n_train, batch)
    return Recipe(
        batch,
        base.learning_rate if learning_rate == "auto" else float(learning_rate),
        base.max_epochs if max_epochs == "auto" else int(max_epochs),
        base.patience if patience == "auto" else int(patience),
        base.lr_schedule if lr_schedule == "auto" else lr_schedule,
        base.n_seeds if n_seeds == "auto" else int(n_seeds),
        base.max_hidden,
        base.one_thread,
    )
