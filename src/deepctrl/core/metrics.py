"""Pure metric functions. ``per_sample`` losses drive training; ``score`` reports, with
optional sample weights.

>>> import torch
>>> y_hat, y = torch.tensor([[1.0], [4.0]]), torch.tensor([[2.0], [2.0]])
>>> float(score("mae", y_hat, y)), float(score("mae", y_hat, y, torch.tensor([3.0, 1.0])))
(1.5, 1.25)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import Tensor

PerSample = Callable[[Tensor, Tensor], Tensor]
Score = Callable[[Tensor, Tensor, Tensor | None], Tensor]


def _flat(t: Tensor) -> Tensor:
    return t.reshape(t.shape[0], -1)


def _difference(y_hat: Tensor, y: Tensor) -> Tensor:
    """Outputs minus targets, one row per sample; a target of another width is an error
    (it would broadcast against the outputs).

    >>> _difference(torch.ones(2, 3), torch.zeros(2, 1))
    Traceback (most recent call last):
    ...
    ValueError: the targets have 1 value(s) per sample but the outputs 3
    """
    out, target = _paired(y_hat, y)
    return out - target


def _paired(y_hat: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Outputs and targets one row per sample, the targets in the outputs' dtype; an error
    when their widths differ."""
    out, target = _flat(y_hat), _flat(y)
    if out.shape[1] != target.shape[1]:
        labels = (
            ""
            if y.is_floating_point()
            else "; class labels need a metric of classes (mae and mse compare numbers): "
            "dc.sweep(..., metrics=('cross_entropy', 'accuracy'))"
        )
        raise ValueError(
            f"the targets have {target.shape[1]} value(s) per sample but the outputs "
            f"{out.shape[1]}{labels}"
        )
    return out, target.to(y_hat)


def mae_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    return _difference(y_hat, y).abs().mean(dim=1)


def mse_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    return (_difference(y_hat, y) ** 2).mean(dim=1)


SIGMOID_HINT = "end the decision block with a sigmoid, e.g. dc.mlp(..., out_activation='sigmoid')"


def bce_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """Binary cross entropy of probabilities ``y_hat`` (log clamped at -100, like torch); a
    NaN probability (a batch with NaN in it, weights gone NaN) gives a NaN loss for its
    sample, as the other losses do, where torch raises.

    >>> bce_per_sample(torch.tensor([[0.5], [float("nan")]]), torch.tensor([[1.0], [0.0]]))
    tensor([0.6931,    nan])
    """
    p, target = _flat(y_hat), _flat(y).to(y_hat)
    try:
        return F.binary_cross_entropy(p, target, reduction="none").mean(dim=1)
    except RuntimeError as exc:
        if "between 0 and 1" not in str(exc):
            raise
        if bool(((target < 0) | (target > 1)).any()):
            raise ValueError(
                "task loss 'bce' needs targets in [0, 1], got "
                f"{float(target.min()):.3g} to {float(target.max()):.3g}"
            ) from None
        if not ((p < 0) | (p > 1)).any():  # only NaN outside [0, 1]: a NaN loss, no error
            nan = torch.isnan(p)
            loss = F.binary_cross_entropy(p.masked_fill(nan, 0.5), target, reduction="none")
            return loss.masked_fill(nan, math.nan).mean(dim=1)
        raise ValueError(
            f"task loss 'bce' needs probabilities in [0, 1], got values outside: {SIGMOID_HINT}"
        ) from None


def cross_entropy_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """Multi-class cross entropy of logits ``y_hat`` (batch, classes), integer labels."""
    return F.cross_entropy(y_hat, y.reshape(-1).long(), reduction="none")


def _half_deviance(y_hat: Tensor, y: Tensor, what: str) -> Tensor:
    """Half the Poisson deviance of log-rates ``y_hat`` against targets >= 0 (an error
    naming ``what`` otherwise), the mean over a sample's outputs."""
    f, counts = _paired(y_hat, y)
    # a few microseconds a batch; a compiled training step skips it
    if not torch.compiler.is_compiling() and counts.numel() and float(counts.min()) < 0:
        raise ValueError(f"{what} needs targets >= 0 (counts, rates), got {float(counts.min()):g}")
    return (f.exp() - counts * f + torch.xlogy(counts, counts) - counts).mean(dim=1)


def poisson_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """The Poisson loss of log-rates ``y_hat`` against counts ``y`` >= 0: the negative
    log-likelihood exp(f) - y f up to a term without f, here y log y - y, so that it is
    half the Poisson deviance, 0 where exp(f) = y and never negative (y log y = 0 at y = 0).

    >>> f = torch.tensor([[0.0], [2.0]])
    >>> [round(v, 4) for v in poisson_per_sample(f, torch.tensor([[1.0], [0.0]])).tolist()]
    [0.0, 7.3891]
    """
    return _half_deviance(y_hat, y, "task loss 'poisson'")


def poisson_deviance(y_hat: Tensor, y: Tensor) -> Tensor:
    """The Poisson deviance of each sample, 2 (y log(y / mu) - (y - mu)) at the predicted
    rate mu = exp(``y_hat``) (a log-rate, as task loss "poisson" trains it), y log y = 0 at
    y = 0: twice the loss."""
    return 2 * _half_deviance(y_hat, y, "metric 'poisson'")


PER_SAMPLE: dict[str, PerSample] = {
    "mae": mae_per_sample,
    "l1": mae_per_sample,
    "mse": mse_per_sample,
    "bce": bce_per_sample,
    "cross_entropy": cross_entropy_per_sample,
    "poisson": poisson_per_sample,
}


def per_sample(loss: str | PerSample) -> PerSample:
    """The per-sample loss for a name ("mae", "mse", "bce", "cross_entropy", "poisson") or a
    callable."""
    if callable(loss):
        return loss
    if loss not in PER_SAMPLE:
        raise ValueError(
            f"unknown task loss {loss!r}; use one of {sorted(PER_SAMPLE)} or a callable"
        )
    return PER_SAMPLE[loss]


def _score_dtype(y_hat: Tensor) -> torch.dtype:
    return y_hat.dtype if y_hat.is_floating_point() else torch.float32


def correct_per_sample(y_hat: Tensor, y: Tensor) -> Tensor:
    """1.0 where the prediction is right: binary (probabilities, threshold 0.5) or
    multi-class (argmax of scores, labels checked by `class_labels`); in the dtype of
    floating-point ``y_hat``."""
    if y_hat.dim() == 2 and y_hat.shape[1] > 1:
        right = y_hat.argmax(dim=1) == class_labels(y, y_hat.shape[1], "accuracy")
    else:
        right = (_flat(y_hat)[:, 0] > 0.5) == (_flat(y)[:, 0] > 0.5)
    return right.to(_score_dtype(y_hat))


def weighted_mean(values: Tensor, weight: Tensor | None = None) -> Tensor:
    """The mean of per-sample ``values``; with ``weight`` (one per sample, >= 0) the weighted
    mean sum(w v) / sum(w), summed in float64 (NaN when the weights sum to zero).

    >>> float(weighted_mean(torch.tensor([1.0, 4.0]), torch.tensor([3.0, 1.0])))
    1.75
    """
    if weight is None:
        return values.mean()
    w = _weights(weight, values.shape[0], values.device)
    return (values.double() * w).sum() / w.sum()


def _weights(weight: Tensor, n: int, device: torch.device) -> Tensor:
    w = weight.reshape(-1).to(device=device, dtype=torch.float64)
    if w.shape[0] != n:
        raise ValueError(f"{w.shape[0]} weights for {n} samples (one weight per sample)")
    return w


def accuracy(y_hat: Tensor, y: Tensor, weight: Tensor | None = None) -> Tensor:
    """Binary (probabilities, threshold 0.5) or multi-class (argmax of scores) accuracy,
    weighted by sample if ``weight`` is given."""
    return weighted_mean(correct_per_sample(y_hat, y), weight)


def class_labels(y: Tensor, n_classes: int, metric: str) -> Tensor:
    """``y`` as class indices (int64, one per sample), checked: whole numbers from 0 to
    ``n_classes - 1``.

    >>> class_labels(torch.tensor([[0.0], [2.0]]), 3, "accuracy").tolist()
    [0, 2]
    >>> try:
    ...     class_labels(torch.tensor([0.5, 1.0]), 3, "accuracy")
    ... except ValueError as e:
    ...     print(str(e).split("; ")[1])
    got 0.5
    """
    flat = _flat(y)
    bad = None
    if flat.shape[1] != 1:
        bad = f"{flat.shape[1]} values per sample"
    elif y.is_floating_point() or y.dtype == torch.bool:
        off = flat[:, 0] != flat[:, 0].round()
        if bool(off.any()):
            bad = f"{float(flat[:, 0][off][0]):g}"
    if bad is None:
        labels = flat[:, 0].long()
        out = (labels < 0) | (labels >= n_classes)
        if not bool(out.any()):
            return labels
        bad = f"{int(labels[out][0])}"
    raise ValueError(
        f"{metric} over {n_classes} outputs needs one class label per sample, a whole number "
        f"from 0 to {n_classes - 1}; got {bad}"
    )


def auc(y_hat: Tensor, y: Tensor, weight: Tensor | None = None) -> Tensor:
    """Area under the ROC curve (ties count one half): for one output, of binary scores,
    the chance that a positive scores above a negative, each pair counted with the product
    of the two samples' weights if ``weight`` is given; NaN without a positive or negative
    weight. For several outputs (logits of classes, as `cross_entropy` reads them) and one
    class label per sample, the mean over the classes of each class's probability (softmax)
    scored one against the rest, NaN when a class has no sample.

    >>> float(auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1])))
    0.75
    >>> float(auc(torch.tensor([0.1, 0.4, 0.35, 0.8]), torch.tensor([0, 0, 1, 1]),
    ...           torch.tensor([1.0, 3.0, 1.0, 1.0])))
    0.625
    >>> logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0], [1.0, 0.0, 0.0]])
    >>> float(auc(logits, torch.tensor([0, 1, 2, 0])))
    1.0
    """
    s = _flat(y_hat)
    dtype = _score_dtype(y_hat) if weight is None else torch.float64
    if s.shape[1] == 1:
        return _binary_auc(s[:, 0].double(), _flat(y)[:, 0] > 0.5, weight).to(dtype)
    labels = class_labels(y, s.shape[1], "auc")
    proba = torch.softmax(s.double(), dim=1)
    per_class = [_binary_auc(proba[:, k], labels == k, weight) for k in range(s.shape[1])]
    return torch.stack(per_class).mean().to(dtype)


def _binary_auc(s: Tensor, pos: Tensor, weight: Tensor | None) -> Tensor:
    """The weighted AUC of float64 scores ``s`` against the bools ``pos``, in float64."""
    w = torch.ones_like(s) if weight is None else _weights(weight, s.shape[0], s.device)
    w_pos, w_neg = w[pos].sum(), w[~pos].sum()
    if w_pos == 0 or w_neg == 0:
        return torch.tensor(float("nan"), dtype=torch.float64, device=s.device)
    area = (w[pos] * _mid_ranks(s, w)[pos]).sum() - w_pos * w_pos / 2
    return area / (w_pos * w_neg)


def _mid_ranks(s: Tensor, w: Tensor) -> Tensor:
    """Per sample, the weight of the samples scored below it plus half the weight of those
    scored equal (itself included): with unit weights the average rank less one half,
    exact in float64."""
    order = torch.argsort(s)
    _, inverse, counts = torch.unique_consecutive(s[order], return_inverse=True, return_counts=True)
    tied = torch.zeros(counts.shape[0], dtype=w.dtype, device=w.device)
    tied.index_add_(0, inverse, w[order])
    mid = torch.cumsum(tied, 0) - tied / 2
    ranks = torch.empty_like(s)
    ranks[order] = mid[inverse]
    return ranks


def _checked_cross_entropy(y_hat: Tensor, y: Tensor) -> Tensor:
    """`cross_entropy_per_sample` with its labels checked (for reports, not training)."""
    return cross_entropy_per_sample(y_hat, class_labels(y, _flat(y_hat).shape[1], "cross_entropy"))


SCORES: dict[str, Score] = {
    "mae": lambda p, y, w: weighted_mean(mae_per_sample(p, y), w),
    "mse": lambda p, y, w: weighted_mean(mse_per_sample(p, y), w),
    "rmse": lambda p, y, w: weighted_mean(mse_per_sample(p, y), w).sqrt(),
    "poisson": lambda p, y, w: weighted_mean(poisson_deviance(p, y), w),
    "bce": lambda p, y, w: weighted_mean(bce_per_sample(p, y), w),
    "cross_entropy": lambda p, y, w: weighted_mean(_checked_cross_entropy(p, y), w),
    "accuracy": accuracy,
    "auc": auc,
}

HIGHER_IS_BETTER = frozenset({"accuracy", "auc"})

MEANS: dict[str, PerSample] = {
    "mae": mae_per_sample,
    "mse": mse_per_sample,
    "rmse": mse_per_sample,
    "poisson": poisson_deviance,
    "bce": bce_per_sample,
    "cross_entropy": _checked_cross_entropy,
    "accuracy": correct_per_sample,
}
"""Metrics that are means of a per-sample value (rmse: the root of the mean), so that they
can be accumulated block by block; auc needs every score at once."""


def score(name: str, y_hat: Tensor, y: Tensor, weight: Tensor | None = None) -> Tensor:
    """Metric ``name`` (mae, mse, rmse, poisson, bce, cross_entropy, accuracy, auc) as a 0-d
    tensor in the dtype of ``y_hat`` (poisson: the mean deviance of log-rates ``y_hat``);
    with ``weight`` (one per sample, >= 0) each sample counts in proportion to its weight,
    and the result is float64."""
    if name not in SCORES:
        raise ValueError(f"unknown metric {name!r}; use one of {sorted(SCORES)}")
    return SCORES[name](y_hat, y, weight)
