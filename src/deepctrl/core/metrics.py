"""Pure metric functions. ``per_sample`` losses drive training; ``score`` reports.

>>> import torch
>>> float(score("mae", torch.tensor([[1.0], [3.0]]), torch.tensor([[2.0], [2.0]])))
1.0
"""

from __future__ import annotations

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

PerSample = Callable[[Tensor, Tensor], Tensor]

_EPS = 1e-7


def _flat(t: Tensor) -> Tensor:
    return t.reshape(t.shape[0], -1)


def mae_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    return (_flat(y_hat) - _flat(y).to(y_hat)).abs().mean(dim=1)


def mse_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    return ((_flat(y_hat) - _flat(y).to(y_hat)) ** 2).mean(dim=1)


SIGMOID_HINT = ("end the decision block with a sigmoid, e.g. dc.mlp(..., "
                "out_activation='sigmoid')")


def bce_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """Binary cross entropy of probabilities ``y_hat`` (log clamped at -100, like torch)."""
    p = _flat(y_hat)
    try:
        return F.binary_cross_entropy(p, _flat(y).to(p), reduction="none").mean(dim=1)
    except RuntimeError as exc:
        if "between 0 and 1" not in str(exc):
            raise
        raise ValueError("task loss 'bce' needs probabilities in [0, 1] and targets in "
                         f"[0, 1], got values outside: {SIGMOID_HINT}") from None


def cross_entropy_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """Multi-class cross entropy of logits ``y_hat`` (batch, classes), integer labels."""
    return F.cross_entropy(y_hat, y.reshape(-1).long(), reduction="none")


PER_SAMPLE: dict[str, PerSample] = {
    "mae": mae_per_sample,
    "l1": mae_per_sample,
    "mse": mse_per_sample,
    "bce": bce_per_sample,
    "cross_entropy": cross_entropy_per_sample,
}


def per_sample(loss: str | PerSample) -> PerSample:
    """The per-sample loss for a name ("mae", "mse", "bce", "cross_entropy") or a callable."""
    if callable(loss):
        return loss
    if loss not in PER_SAMPLE:
        raise ValueError(
            f"unknown task loss {loss!r}; use one of {sorted(PER_SAMPLE)} or a callable")
    return PER_SAMPLE[loss]


def correct_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """1.0 where the prediction is right: binary (probabilities, threshold 0.5) or
    multi-class (argmax of scores)."""
    if y_hat.dim() == 2 and y_hat.shape[1] > 1:
        return (y_hat.argmax(dim=1) == y.reshape(-1).long()).float()
    return ((_flat(y_hat)[:, 0] > 0.5) == (_flat(y)[:, 0] > 0.5)).float()


def accuracy(y_hat: Tensor, y: Tensor) -> Tensor:
    """Binary (probabilities, threshold 0.5) or multi-class (argmax of scores) accuracy."""
    return correct_per_sample(y_hat, y).mean()


def auc(y_hat: Tensor, y: Tensor) -> Tensor:
    """Area under the ROC curve of binary scores (ties count one half).

    >>> float(auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])))
    0.75
    """
    s = _flat(y_hat)[:, 0].double()
    pos = _flat(y)[:, 0] > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    if n_pos == 0 or n_neg == 0:
        return torch.tensor(float("nan"))
    ranks = _average_ranks(s)
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).float()


def _average_ranks(s: Tensor) -> Tensor:
    """1-based ranks with ties given their average rank."""
    order = torch.argsort(s)
    sorted_s = s[order]
    _, inverse, counts = torch.unique_consecutive(sorted_s, return_inverse=True,
                                                  return_counts=True)
    ends = torch.cumsum(counts, 0).double()
    avg = ends - (counts.double() - 1) / 2
    ranks = torch.empty_like(s)
    ranks[order] = avg[inverse]
    return ranks


SCORES: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "mae": lambda p, y: mae_per_sample(p, y).mean(),
    "mse": lambda p, y: mse_per_sample(p, y).mean(),
    "rmse": lambda p, y: mse_per_sample(p, y).mean().sqrt(),
    "bce": lambda p, y: bce_per_sample(p, y).mean(),
    "cross_entropy": lambda p, y: cross_entropy_per_sample(p, y).mean(),
    "accuracy": accuracy,
    "auc": auc,
}

HIGHER_IS_BETTER = frozenset({"accuracy", "auc"})

MEANS: dict[str, PerSample] = {
    "mae": mae_per_sample, "mse": mse_per_sample, "rmse": mse_per_sample,
    "bce": bce_per_sample, "cross_entropy": cross_entropy_per_sample,
    "accuracy": correct_per_sample,
}
"""Metrics that are means of a per-sample value (rmse: the root of the mean), so that they
can be accumulated block by block; auc needs every score at once."""


def score(name: str, y_hat: Tensor, y: Tensor) -> Tensor:
    """Metric ``name`` (mae, mse, rmse, bce, cross_entropy, accuracy, auc) as a 0-d tensor."""
    if name not in SCORES:
        raise ValueError(f"unknown metric {name!r}; use one of {sorted(SCORES)}")
    return SCORES[name](y_hat, y)
