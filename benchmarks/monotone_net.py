"""A network monotone by construction: a peer for ``monotone_suite.py --monotone-net``.

The constrained features (sign-flipped where the rule says "decreasing") enter the first
layer through non-negative weights (the absolute values of free parameters), every later
layer has non-negative weights too, and every activation rises with its input, so the
output rises with each constrained feature for any parameters. The other inputs enter the
first layer through ordinary weights. Rising activations of one shape only would make the
network convex (or concave) in the constrained features; each layer therefore splits its
units into three thirds, ``relu(h)`` (convex), ``-relu(-h)`` (concave) and
``clamp(h, -1, 1)`` (bounded), the construction of constrained monotonic neural networks
(Runje and Shankaranarayana, ICML 2023).

Training follows the suite's protocol: Adam at 1e-3, batches of 128 (16 below 2,000 rows),
early stopping with patience 20 on the rows the suite carves from the training split, the
weights of the best epoch kept; one network per seed.

>>> net = MonotoneNet(n_monotone=1, n_free=2, width=6, depth=2)
>>> x_free = torch.randn(5, 2)
>>> low, high = net(torch.zeros(5, 1), x_free), net(torch.ones(5, 1), x_free)
>>> bool((high >= low).all())
True
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from sklearn.compose import ColumnTransformer
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from torch import Tensor, nn

Predict = Callable[[pd.DataFrame], np.ndarray]


def rising_mix(h: Tensor) -> Tensor:
    """Thirds of the units through relu, its point reflection and a clamp to [-1, 1]."""
    k = h.shape[-1] // 3
    return torch.cat(
        [F.relu(h[..., :k]), -F.relu(-h[..., k : 2 * k]), h[..., 2 * k :].clamp(-1.0, 1.0)], -1
    )


class MonotoneNet(nn.Module):
    """Rises with each of the first ``n_monotone`` inputs, whatever its parameters."""

    def __init__(self, n_monotone: int, n_free: int, width: int, depth: int) -> None:
        super().__init__()
        self.monotone_in = nn.Parameter(torch.randn(n_monotone, width) * 0.3)
        self.free_in = nn.Linear(n_free, width)
        self.hidden = nn.ModuleList(nn.Linear(width, width) for _ in range(depth - 1))
        self.out = nn.Linear(width, 1)

    def forward(self, x_monotone: Tensor, x_free: Tensor) -> Tensor:
        h = rising_mix(x_monotone @ self.monotone_in.abs() + self.free_in(x_free))
        for layer in self.hidden:
            h = rising_mix(F.linear(h, layer.weight.abs(), layer.bias))
        return F.linear(h, self.out.weight.abs(), self.out.bias).squeeze(-1)


class _Inputs:
    """Constrained columns standardized and sign-flipped; the others standardized or
    one-hot; statistics from the fitting rows."""

    def __init__(self, X: pd.DataFrame, monotone: dict[str, int], categorical: list[str]):
        self.monotone = monotone
        self.scaler = StandardScaler().fit(X[list(monotone)].astype(float))
        free_num = [c for c in X.columns if c not in monotone and c not in categorical]
        self.free = ColumnTransformer(
            [
                ("num", StandardScaler(), free_num),
                ("cat", OneHotEncoder(handle_unknown="ignore", sparse_output=False), categorical),
            ]
        ).fit(X)
        self.signs = np.array([monotone[c] for c in monotone], dtype=float)

    def __call__(self, X: pd.DataFrame) -> tuple[Tensor, Tensor]:
        xm = self.scaler.transform(X[list(self.monotone)].astype(float)) * self.signs
        xf = np.asarray(self.free.transform(X), dtype=float)
        return torch.tensor(xm, dtype=torch.float32), torch.tensor(xf, dtype=torch.float32)


def fit_monotone_net(
    fit: tuple[pd.DataFrame, pd.Series],
    val: tuple[pd.DataFrame, pd.Series],
    monotone: dict[str, int],
    categorical: list[str],
    regression: bool,
    seed: int,
    width: int = 120,
    depth: int = 3,
) -> Predict:
    """Train one network on ``fit`` with early stopping on ``val``; return its predictor
    (the regression output, or the probability of class 1)."""
    torch.manual_seed(seed)
    inputs = _Inputs(fit[0], monotone, categorical)
    xm, xf = inputs(fit[0])
    vm, vf = inputs(val[0])
    y = torch.tensor(fit[1].to_numpy(), dtype=torch.float32)
    yv = torch.tensor(val[1].to_numpy(), dtype=torch.float32)
    shift, scale = (float(y.mean()), float(y.std())) if regression else (0.0, 1.0)

    def loss(out: Tensor, target: Tensor) -> Tensor:
        if regression:
            return F.mse_loss(out, (target - shift) / scale)
        return F.binary_cross_entropy_with_logits(out, target)

    net = MonotoneNet(xm.shape[1], xf.shape[1], width, depth)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    batch = 128 if len(y) >= 2000 else 16
    best, best_state, waited = float("inf"), net.state_dict(), 0
    for _ in range(500):
        for rows in torch.randperm(len(y)).split(batch):
            opt.zero_grad()
            loss(net(xm[rows], xf[rows]), y[rows]).backward()
            opt.step()
        with torch.no_grad():
            val_loss = float(loss(net(vm, vf), yv))
        if val_loss < best:
            best, waited = val_loss, 0
            best_state = {k: v.clone() for k, v in net.state_dict().items()}
        else:
            waited += 1
            if waited >= 20:
                break
    net.load_state_dict(best_state)
    net.eval()

    def predict(X: pd.DataFrame) -> np.ndarray:
        with torch.no_grad():
            out = net(*inputs(X))
        if regression:
            return (out * scale + shift).numpy().astype(float)
        return torch.sigmoid(out).numpy().astype(float)

    return predict
