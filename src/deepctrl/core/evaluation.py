"""Evaluate a trained model over the rule strength: `sweep` and `verification_ratio`.

Examples:
    >>> import torch, deepctrl as dc
    >>> model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    >>> rule = dc.rules.Monotonic(0, "increasing")
    >>> X, y = torch.randn(50, 2), torch.randn(50, 1)
    >>> table = dc.sweep(model, rule, X, y, alphas=[0.0, 0.5, 1.0], metrics=("mae",))
    >>> sorted(table)
    ['alpha', 'mae', 'verification_ratio']
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn

from deepctrl.core.calls import eval_mode
from deepctrl.core.checks import finite_real
from deepctrl.core.data import as_target
from deepctrl.core.inputs import Alphas
from deepctrl.core.metrics import MEANS, SCORES, score
from deepctrl.core.rules.base import Rule, checked_rule
from deepctrl.core.sources import is_loader
from deepctrl.core.sweep_outputs import AlphaForward, alpha_list, predict_sweep, sweep_blocks

Table = dict[str, list[float]]

AlphaValue = float | np.floating[Any] | Tensor
"""One rule strength: a Python or NumPy number, or a one-element tensor."""

SWEEP_ALPHAS = tuple(float(a) for a in np.round(np.linspace(0, 1, 11), 10))
"""0, 0.1, ..., 1: the alphas `sweep` evaluates unless given others."""


def sweep(
    model: nn.Module,
    rule: Rule | None,
    X: Any,
    y: Any = None,
    alphas: Alphas = SWEEP_ALPHAS,
    metrics: str | Sequence[str] = ("mae",),
    seed: int = 0,
    forward: AlphaForward | None = None,
) -> Table:
    """Metrics and verification ratio at every alpha, in eval mode.

    A Dataset or DataLoader is read block by block with the metrics accumulated as they go
    (in float64; auc keeps one score per row and alpha), so memory holds one block.

    Args:
        model: The trained model.
        rule: The rule whose verification ratio to measure; None measures none.
        X: The inputs: a tensor (array, DataFrame) or a dict of them, or a Dataset or
            DataLoader of (x, y) pairs.
        y: The targets of tensor `X`; None when `X` is a Dataset or DataLoader.
        alphas: The rule strengths; the default is 0, 0.1, ..., 1.
        metrics: Any of `"mae"`, `"mse"`, `"rmse"`, `"poisson"` (the mean Poisson deviance
            of log-rate outputs), `"bce"`, `"cross_entropy"`, `"accuracy"` and `"auc"` (one
            name alone is one metric); `"l1"`, as training also names the mae, gives the
            `mae` column.
        seed: Seeds the perturbations of the rule check, an integer >= 0.
        forward: The outputs at every alpha instead of the model's, as in
            [predict_sweep][deepctrl.core.sweep_outputs.predict_sweep].

    Returns:
        A dict of equal-length lists: `alpha`, one list per metric and
            `verification_ratio` (when `rule` is given), the fraction of samples the rule
            can judge that satisfy it.

    Raises:
        ValueError: When `alphas` is empty or not finite numbers (booleans included), a
            metric is unknown, `y` is given with a Dataset or DataLoader or missing with
            tensors, `X` and `y` differ in rows, or the model cannot take the rows of `X`.
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    alphas = alpha_list(alphas)
    if not alphas:
        raise ValueError("sweep needs at least one alpha")
    if rule is not None:
        checked_rule(rule)
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)  # "mae" is one metric
    metrics = tuple(dict.fromkeys("mae" if m == "l1" else m for m in metrics))
    unknown = [m for m in metrics if m not in SCORES]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; use one of {sorted(SCORES)}")
    if is_loader(X):
        if y is not None:
            raise ValueError("sweep takes the targets from the Dataset/DataLoader: pass y=None")
        return _streamed_sweep(model, rule, X, alphas, metrics, seed, True, forward)
    if y is None:
        raise ValueError("sweep needs y (or X as a Dataset/DataLoader of (x, y) pairs)")
    y = as_target(y, "y", dtype=torch.float64)
    y_hat, ok = predict_sweep(model, rule, X, alphas, seed, forward=forward)
    y = y.to(y_hat.device)
    if y.shape[0] != y_hat.shape[1]:
        raise ValueError(f"X has {y_hat.shape[1]} rows but y has {y.shape[0]}")
    table: Table = {"alpha": alphas}
    for name in metrics:  # in float64, whatever the model's precision
        table[name] = [float(score(name, _wide(y_hat[i]), y)) for i in range(len(alphas))]
    if ok is not None:
        # in float64: a share of whole counts, exact (in float32, 95 of 100 read 0.94999999)
        table["verification_ratio"] = [float(v) for v in ok.double().nanmean(dim=1)]
    return table


def _wide(t: Tensor) -> Tensor:
    """Floating-point outputs in float64, where metrics are computed."""
    return t.double() if t.is_floating_point() else t


def verification_ratio(
    model: nn.Module,
    rule: Rule,
    X: Any,
    alpha: AlphaValue = 0.0,
    seed: int = 0,
    forward: AlphaForward | None = None,
) -> float:
    """Fraction of the samples of `X` (that the rule can judge) on which the rule holds.

    Args:
        model: The trained model.
        rule: The rule to check.
        X: Tensors, a dict of them, or a Dataset/DataLoader (of inputs or (x, y) pairs).
        alpha: The rule strength to run the model at: a number or a one-element tensor.
        seed: Seeds the perturbations, an integer >= 0.
        forward: The outputs at every alpha instead of the model's, as in
            [predict_sweep][deepctrl.core.sweep_outputs.predict_sweep].

    Returns:
        The verification ratio, between 0 and 1 (NaN when the rule can judge no sample).

    Raises:
        ValueError: When `alpha` is not a finite number, `seed` is not an integer >= 0, or
            the model cannot take the rows of `X`.
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    a = finite_real(alpha, "alpha")
    checked_rule(rule)
    if is_loader(X):
        table = _streamed_sweep(model, rule, X, [a], (), seed, False, forward)
        return table["verification_ratio"][0]
    _, ok = predict_sweep(model, rule, X, [a], seed, forward=forward)
    assert ok is not None
    return float(ok.double().nanmean())


@torch.no_grad()
def _streamed_sweep(
    model: nn.Module,
    rule: Rule | None,
    data: Any,
    alphas: Sequence[float],
    metrics: Sequence[str],
    seed: int,
    need_y: bool,
    forward: AlphaForward | None,
) -> Table:
    """`sweep` on a Dataset/DataLoader, accumulated block by block: memory holds one
    block (and, for auc, one score per row and alpha)."""
    A = len(alphas)
    sums = {name: torch.zeros(A, dtype=torch.float64) for name in metrics if name in MEANS}
    judged, held = torch.zeros(A, dtype=torch.float64), torch.zeros(A, dtype=torch.float64)
    scores: list[Tensor] = []
    targets: list[Tensor] = []
    n = rows = 0
    with eval_mode(model):
        for y_hat, ok, y in sweep_blocks(model, rule, data, alphas, seed, None, need_y, forward):
            rows += y_hat.shape[1]
            if y is not None:
                for name, total in sums.items():
                    total += torch.stack(
                        [MEANS[name](_wide(y_hat[i]), y).sum() for i in range(A)]
                    ).cpu()
                n += y.shape[0]
            if "auc" in metrics:  # every output: several are the logits of classes
                scores.append(_wide(y_hat.reshape(A, y_hat.shape[1], -1)).cpu())
                targets.append(y.cpu())  # type: ignore[union-attr]
            if ok is not None:
                held += ok.nan_to_num(0.0).double().sum(dim=1).cpu()
                judged += (~ok.isnan()).double().sum(dim=1).cpu()
    if rows == 0:
        raise ValueError("the data has no rows (a DataLoader that yields no batch)")
    table: Table = {"alpha": list(alphas)}
    for name in metrics:
        if name == "auc":
            s, t = torch.cat(scores, dim=1), torch.cat(targets)
            table[name] = [float(score("auc", s[i], t)) for i in range(A)]
        else:
            mean = sums[name] / max(n, 1)
            table[name] = (mean.sqrt() if name == "rmse" else mean).tolist()
    if rule is not None:
        table["verification_ratio"] = (held / judged).tolist()
    return table
