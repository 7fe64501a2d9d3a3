"""`FitResult`: what `deepctrl.fit` returns, and how the results of seed shares trained side
by side are joined."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Generic

from torch import nn
from typing_extensions import TypeVar

from deepctrl.core.method_state import SeedState
from deepctrl.core.methods import Method

ModelT_co = TypeVar("ModelT_co", bound=nn.Module, covariant=True, default=nn.Module)
"""The type of the model given to `fit`: a bare `FitResult` holds `nn.Module`s."""


@dataclass
class FitResult(Generic[ModelT_co]):
    """What [fit][deepctrl.engine.training.fit] returns: one trained model per seed (best
    weights restored, eval mode), and how training went.

    Every list has one entry per seed, in the order of `seeds`. The models are copies of
    the model given to `fit`, of its type (`FitResult[DeepCTRL]` to type checkers).

    Attributes:
        models: The trained models.
        seeds: The seeds, as integers.
        method: The method the models trained with.
        state: The method's final per-seed state (rho, multipliers, alpha priors).
        history: Per seed, a dict of lists: `"train_loss"` (one per epoch), and
            `"val_epoch"` and `"val_loss"` (one per validation).
        epochs: The number of epochs each seed trained (early stopping may end it sooner).
        best_epochs: The epoch whose weights each seed kept (its last without validation).
        seconds: Wall-clock time of training (of the slowest worker with `workers > 1`).
        val_loss: Each seed's best validation loss (infinity without validation data).
        path: How the seeds ran: `"lowered"` (batched matrix products), `"vmap"` or
            `"loop"`.
    """

    models: list[ModelT_co]
    seeds: list[int]
    method: Method
    state: SeedState
    history: list[dict[str, list[float]]]
    epochs: list[int]
    best_epochs: list[int]
    seconds: float
    val_loss: list[float] = field(default_factory=list)
    path: str = "lowered"

    def __repr__(self) -> str:
        """One line: the method, seeds, epochs and time (the models and the loss histories
        are in their attributes).

        >>> import torch
        >>> from deepctrl.core.methods import TaskOnly
        >>> state, net = SeedState(1, 0), torch.nn.Linear(1, 1)
        >>> result = FitResult([net], [0], TaskOnly(), state, [{}], [12], [9], 1.2)
        >>> print(result)  # doctest: +ELLIPSIS
        FitResult(method=TaskOnly, seeds=[0], epochs=[12], best_epochs=[9], seconds=1.2, ...)
        """
        return (
            f"FitResult(method={self.method.name}, seeds={self.seeds}, epochs={self.epochs}, "
            f"best_epochs={self.best_epochs}, seconds={self.seconds:.1f}, path={self.path!r})"
        )

    @property
    def model(self) -> ModelT_co:
        """The model of the first seed, `models[0]`."""
        return self.models[0]

    @classmethod
    def join(cls, parts: Sequence[FitResult[ModelT_co]]) -> FitResult[ModelT_co]:
        """Fits of one method on disjoint seed sets (side by side) as one result: the
        per-seed lists and method states joined in order, the time of the slowest part.

        Args:
            parts: Results of the same method, in seed order.

        Returns:
            The one result (`parts[0]` itself when there is one part).
        """
        if len(parts) == 1:
            return parts[0]
        return dataclasses.replace(
            parts[0],
            models=[m for p in parts for m in p.models],
            seeds=[s for p in parts for s in p.seeds],
            state=SeedState.join([p.state for p in parts]),
            history=[h for p in parts for h in p.history],
            epochs=[e for p in parts for e in p.epochs],
            best_epochs=[e for p in parts for e in p.best_epochs],
            seconds=max(p.seconds for p in parts),
            val_loss=[v for p in parts for v in p.val_loss],
            path=" + ".join(sorted({p.path for p in parts})),
        )
