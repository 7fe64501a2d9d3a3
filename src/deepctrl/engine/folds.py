"""Cross-fitting in one stacked fit: seed i validates on the rows of its fold and trains on
the other rows of the training data.

Every seed keeps its own rows as index tensors (seeds, rows), so an epoch of seed i is one
pass over its own training rows, in its own shuffled order, and its validation loss is the
mean over its own fold: what a fit of that seed alone on those rows computes. The folds must
hold equally many rows, so that the seeds' batches line up.

>>> import torch
>>> folds = SeedFolds.of([[0, 1], [2, 3]], n=5, copies=1, device=torch.device("cpu"))
>>> folds.train.tolist(), folds.val.tolist()
([[2, 3, 4], [0, 1, 4]], [[0, 1], [2, 3]])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import Tensor


@dataclass
class SeedFolds:
    """The rows of every copy in the stack: ``train`` (copies, m) and ``val`` (copies, v)
    indices into the training data, each row sorted; with sample weights (:meth:`weigh`),
    each copy's weights (copies, n) scaled to mean 1 over its training or its validation
    rows."""

    train: Tensor
    val: Tensor
    train_weights: Tensor | None = None
    val_weights: Tensor | None = None

    @classmethod
    def of(cls, folds: Sequence[Any], n: int, copies: int, device: torch.device) -> SeedFolds:
        """The rows of ``folds`` (one per seed) over ``n`` training rows, repeated for
        ``copies`` methods; a ValueError names what is wrong with them."""
        parts = [_rows(f, i, n) for i, f in enumerate(folds)]
        sizes = sorted({len(p) for p in parts})
        if len(sizes) > 1:
            raise ValueError(
                f"folds must hold equally many rows (the seeds train in step), got sizes {sizes}"
            )
        if sizes[0] >= n:
            raise ValueError(f"every fold leaves no training row: {sizes[0]} of {n} rows")
        everyone = np.arange(n)
        train = [np.setdiff1d(everyone, p) for p in parts]
        return cls(_stacked(train, copies, device), _stacked(parts, copies, device))

    def weigh(self, w: Tensor | None, dtype: torch.dtype) -> None:
        """Every copy's weights from the row weights ``w`` (n,) of the training data."""
        if w is not None:
            self.train_weights = per_seed_weights(w, self.train, dtype, "training")
            self.val_weights = per_seed_weights(w, self.val, dtype, "validation")

    def keep(self, mask: Tensor) -> None:
        """Copies marked False (stopped seeds) leave, with their weights."""
        self.train, self.val = self.train[mask], self.val[mask]
        if self.train_weights is not None and self.val_weights is not None:
            self.train_weights = self.train_weights[mask]
            self.val_weights = self.val_weights[mask]


def _rows(fold: Any, i: int, n: int) -> np.ndarray:
    rows = np.asarray(fold.cpu() if isinstance(fold, Tensor) else fold)
    if rows.ndim != 1 or rows.size == 0 or not np.issubdtype(rows.dtype, np.integer):
        raise ValueError(f"fold {i} must be a non-empty 1-D array of row indices")
    if rows.min() < 0 or rows.max() >= n:
        raise ValueError(f"fold {i} has row indices outside 0..{n - 1}")
    unique = np.unique(rows)
    if len(unique) != len(rows):
        raise ValueError(f"fold {i} repeats a row index")
    return unique.astype(np.int64)


def _stacked(parts: list[np.ndarray], copies: int, device: torch.device) -> Tensor:
    return torch.as_tensor(np.stack(parts), device=device).repeat(copies, 1)


def per_seed_weights(w: Tensor, rows: Tensor, dtype: torch.dtype, what: str) -> Tensor:
    """Row weights (n,) as one row per copy (copies, n), each scaled to mean 1 over that
    copy's ``rows`` (computed in float64, as :func:`deepctrl.engine.feed.mean_one`);
    ``what`` names the rows in the error when all of a copy's weigh 0."""
    w = w.to(rows.device, torch.float64)
    means = w[rows].mean(dim=1, keepdim=True)
    if (means == 0).any():
        i = int((means[:, 0] == 0).nonzero()[0])
        raise ValueError(f"every {what} row of fold {i} has weight 0")
    return (w / means).to(dtype)
