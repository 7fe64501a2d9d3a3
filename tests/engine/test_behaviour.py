"""DeepCTRL does what the paper promises on small tasks with a known answer.

1. A damped oscillator whose energy can only fall: the energy rule is true for the data.
2. A perturbation rule that the data contradict: alpha = 0 must behave like TaskOnly and
   alpha = 1 like RuleOnly (see docs/rho.md).
"""

import numpy as np
import pytest
import torch
from torch import nn

import deepctrl as dc

SEEDS = [0, 1, 2]
ALPHAS = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]


def oscillator(n: int, seed: int, dt: float = 0.1, damping: float = 0.005):
    """States on the annulus 0.5 <= r <= 1 and their exact successors after dt."""
    g = torch.Generator().manual_seed(seed)
    r = 0.5 + 0.5 * torch.rand(n, generator=g, dtype=torch.float64)
    phase = 2 * torch.pi * torch.rand(n, generator=g, dtype=torch.float64)
    x = torch.stack([r * torch.cos(phase), r * torch.sin(phase)], dim=1)
    step = torch.linalg.matrix_exp(
        torch.tensor([[0.0, 1.0], [-1.0, -2 * damping]], dtype=torch.float64) * dt
    )
    return x.float(), (x @ step.T).float()


def energy(s):
    return 0.5 * (s**2).sum(dim=1)


class Residual(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = dc.mlp(2, 32, 32, 2)

    def forward(self, x):
        return x + self.net(x)


def mean_table(models, rule, X, y, metric):
    tables = [dc.sweep(m, rule, X, y, ALPHAS, metrics=(metric,)) for m in models]
    return (
        np.mean([t[metric] for t in tables], axis=0),
        np.mean([t["verification_ratio"] for t in tables], axis=0),
    )


@pytest.mark.slow
def test_energy_rule_true_for_the_data():
    train, val, test = oscillator(300, 0), oscillator(300, 1), oscillator(2000, 2)
    rule = dc.rules.Penalty(lambda x, y: energy(y) - energy(x), strict=True)
    kw = dict(
        train=train,
        val=val,
        max_epochs=400,
        patience=10,
        val_every=5,
        batch_size=32,
        input_noise=0.01,
        seeds=SEEDS,
    )
    task = dc.fit(Residual(), rule, dc.methods.TaskOnly(), **kw)
    deep = dc.fit(
        dc.DeepCTRL(dc.mlp(2, 32, 16), dc.mlp(2, 32, 16), dc.mlp(32, 32, 2), residual=True),
        rule,
        dc.methods.DeepCTRL(),
        **kw,
    )
    task_mae, task_vr = mean_table(task.models, rule, *test, "mae")
    mae, vr = mean_table(deep.models, rule, *test, "mae")
    print("TaskOnly", task_mae[0], task_vr[0], "DeepCTRL", mae.round(5), vr.round(3))
    assert vr[-1] >= 0.95
    assert vr[-1] > vr[0]
    assert mae.min() <= 1.15 * task_mae[0]


def contradicted(n, g, slope):
    X = torch.randn(n, 3, generator=g)
    return X, slope * X[:, :1] + X[:, 1:2] + 0.1 * torch.randn(n, 1, generator=g)


def output_moves(models, X, alpha, seed=5):
    """Mean over models of the fractions of rows whose output rises, and falls, when feature 0
    is raised by up to 10 % of its size: the direction read off the network itself."""
    g = torch.Generator().manual_seed(seed)
    X_p = X.clone()
    X_p[:, 0] += 0.1 * torch.rand(len(X), generator=g) * X[:, 0].abs()
    rises, falls = [], []
    with torch.no_grad():
        for m in models:
            change = (m(X_p, alpha) - m(X, alpha))[:, 0]
            rises.append(float((change > 0).float().mean()))
            falls.append(float((change < 0).float().mean()))
    return np.mean(rises), np.mean(falls)


@pytest.mark.parametrize("direction", ["increasing", "decreasing"])
def test_contradicted_perturbation_rule_keeps_both_ends(direction):
    """The data fall with feature 0 where the rule says it rises, and the other way round."""
    g = torch.Generator().manual_seed(0)
    slope = -2.0 if direction == "increasing" else 2.0
    train, val, test = (contradicted(n, g, slope) for n in (1000, 300, 1000))
    rule = dc.rules.Monotonic(0, direction)

    def net():
        return dc.DeepCTRL(dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 32, 1))

    kw = dict(
        train=train,
        val=val,
        task_loss="mae",
        batch_size=32,
        max_epochs=300,
        patience=10,
        seeds=SEEDS,
    )
    runs = {
        name: dc.fit(net(), rule, method, **kw)
        for name, method in [
            ("TaskOnly", dc.methods.TaskOnly()),
            ("RuleOnly", dc.methods.RuleOnly()),
            ("DeepCTRL", dc.methods.DeepCTRL()),
        ]
    }
    (task_mae, task_vr) = mean_table(runs["TaskOnly"].models, rule, *test, "mae")
    (_, rule_vr) = mean_table(runs["RuleOnly"].models, rule, *test, "mae")
    mae, vr = mean_table(runs["DeepCTRL"].models, rule, *test, "mae")
    deep = runs["DeepCTRL"].models
    rise_0, fall_0 = output_moves(deep, test[0], 0.0)
    rise_1, fall_1 = output_moves(deep, test[0], 1.0)
    print(
        direction,
        runs["DeepCTRL"].state["rho"],
        mae.round(3),
        vr.round(3),
        task_mae[0],
        task_vr[0],
        rule_vr[-1],
        (rise_0, fall_0),
        (rise_1, fall_1),
    )
    assert task_vr[0] < 0.05 and vr[0] < 0.05
    assert mae[0] <= 1.15 * task_mae[0]
    # measured: 0.95 at alpha 1 (RuleOnly 1.0); docs/rho.md shows the trade-off with alpha 0
    assert rule_vr[-1] >= 0.99 and vr[-1] >= 0.93
    # the same, read off the outputs: alpha 0 follows the data, alpha 1 the rule
    with_data, with_rule = (fall_0, rise_1) if direction == "increasing" else (rise_0, fall_1)
    assert with_data >= 0.95 and with_rule >= 0.93
