"""The Poisson loss for counts: task_loss="poisson" trains log-rates, metric "poisson" is the
mean deviance of the rates they predict; both refuse negative targets."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch.utils.data import TensorDataset

import deepctrl as dc
from deepctrl.core.metrics import per_sample, score

COUNTS = torch.tensor([[0.0], [1.0], [3.0], [7.0], [2.0]], dtype=torch.float64)


def test_the_loss_is_half_the_deviance_and_its_gradient_is_the_rate_less_the_count():
    f = torch.tensor([[0.5], [-1.0], [1.2], [2.0], [0.0]], dtype=torch.float64)
    loss = per_sample("poisson")(f, COUNTS)
    y, mu = COUNTS[:, 0].numpy(), np.exp(f[:, 0].numpy())
    ylogy = np.where(y > 0, y * np.log(np.where(y > 0, y, 1.0)), 0.0)
    by_hand = ylogy - y * np.log(mu) - (y - mu)  # half of 2 (y log(y / mu) - (y - mu))
    np.testing.assert_allclose(loss.numpy(), by_hand, rtol=1e-12, atol=1e-12)
    # the negative log-likelihood exp(f) - y f, up to y log y - y, which holds no f
    np.testing.assert_allclose(loss.numpy(), (mu - y * f[:, 0].numpy()) + ylogy - y, rtol=1e-12)
    assert (
        loss[1] > 0
        and per_sample("poisson")(COUNTS.clamp_min(1).log(), COUNTS)[1:].abs().max() < 1e-12
    )

    g = f.clone().requires_grad_(True)
    per_sample("poisson")(g, COUNTS).sum().backward()
    np.testing.assert_allclose(g.grad.numpy(), (f.exp() - COUNTS).numpy(), rtol=1e-12)
    assert torch.autograd.gradcheck(
        lambda t: per_sample("poisson")(t, COUNTS), (f.clone().requires_grad_(True),)
    )


def test_a_constant_prediction_is_best_at_the_log_of_the_mean_count():
    y = torch.poisson(torch.full((500, 1), 4.0), generator=torch.Generator().manual_seed(0))
    y = y.double()

    def mean_loss(c: torch.Tensor) -> torch.Tensor:
        return per_sample("poisson")(c.expand(500, 1), y).mean()

    best = torch.tensor(math.log(float(y.mean())), dtype=torch.float64, requires_grad=True)
    (slope,) = torch.autograd.grad(mean_loss(best), best)
    assert abs(float(slope)) < 1e-12
    grid = best.detach() + torch.linspace(-0.5, 0.5, 1001, dtype=torch.float64)
    losses = torch.stack([mean_loss(c) for c in grid])
    assert int(losses.argmin()) == 500  # the middle of the grid: log(mean y) itself


def test_the_metric_is_the_mean_deviance_of_the_rates_exp_f():
    f = torch.tensor([[0.0], [0.0], [math.log(2.0)], [math.log(7.0)], [1.0]], dtype=torch.float64)
    y, mu = COUNTS[:, 0].tolist(), torch.exp(f[:, 0]).tolist()
    deviance = [
        2 * ((yi * math.log(yi / m) if yi > 0 else 0.0) - (yi - m))
        for yi, m in zip(y, mu, strict=True)
    ]
    assert float(score("poisson", f, COUNTS)) == pytest.approx(np.mean(deviance), rel=1e-12)
    w = torch.tensor([1.0, 0.0, 2.0, 1.0, 1.0])
    weighted = np.average(deviance, weights=w.numpy())
    assert float(score("poisson", f, COUNTS, w)) == pytest.approx(weighted, rel=1e-12)
    assert abs(deviance[3]) < 1e-12  # exp(f) = y


def test_negative_targets_are_refused_by_the_loss_and_the_metric():
    bad = torch.tensor([[1.0], [-2.0]])
    with pytest.raises(ValueError, match=r"^task loss 'poisson' needs targets >= 0 .*got -2$"):
        per_sample("poisson")(torch.zeros(2, 1), bad)
    with pytest.raises(ValueError, match=r"^metric 'poisson' needs targets >= 0 .*got -2$"):
        score("poisson", torch.zeros(2, 1), bad)
    X = torch.randn(40, 2)
    with pytest.raises(ValueError, match="task loss 'poisson' needs targets >= 0"):
        dc.fit(
            dc.mlp(2, 1),
            None,
            dc.methods.TaskOnly(),
            train=(X, -torch.ones(40, 1)),
            task_loss="poisson",
            max_epochs=1,
        )


def _counts(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.rand(n, 2, generator=g) * 2 - 1
    rate = torch.exp(1.5 + 1.0 * X[:, :1] - 0.5 * X[:, 1:])
    return X, torch.poisson(rate, generator=g)


def test_fit_learns_log_rates_and_sweep_scores_them_on_tensors_and_loaders():
    X, y = _counts(1500, 0)
    X_test, y_test = _counts(1000, 1)
    model = dc.DeepCTRL(dc.mlp(2, 8), dc.mlp(2, 8), dc.mlp(16, 16, 1))
    rule = dc.rules.Monotonic(0, "increasing")
    result = dc.fit(
        model,
        rule,
        dc.methods.DeepCTRL(),
        train=(X, y),
        val=(X_test, y_test),
        task_loss="poisson",
        max_epochs=60,
        batch_size=64,
        seeds=[0],
    )
    net = result.models[0]
    table = dc.sweep(net, rule, X_test, y_test, alphas=[0.0, 1.0], metrics=("poisson", "mse"))
    true_rate = torch.exp(1.5 + X_test[:, :1] - 0.5 * X_test[:, 1:])
    truth = float(score("poisson", true_rate.log(), y_test))
    assert table["poisson"][0] < 1.1 * truth  # near the deviance of the true rates
    assert table["verification_ratio"][1] >= 0.99
    streamed = dc.sweep(
        net, rule, TensorDataset(X_test, y_test), alphas=[0.0, 1.0], metrics=("poisson",)
    )
    np.testing.assert_allclose(streamed["poisson"], table["poisson"], rtol=1e-6)
    assert dc.select_alpha({"alpha": [0.0, 1.0], "poisson": [2.0, 1.0]}) == 1.0


def test_objective_takes_the_poisson_loss():
    X, y = _counts(64, 2)
    model = dc.mlp(2, 1)
    out = dc.Objective(model, None, dc.methods.TaskOnly(), task_loss="poisson")(X, y)
    want = per_sample("poisson")(model(X), y).mean()
    assert float(out.loss) == pytest.approx(float(want), rel=1e-6)


def test_select_alpha_picks_by_the_deviance_beside_errors_of_log_rates():
    table = {"alpha": [0.0, 0.5, 1.0], "poisson": [1.0, 2.0, 3.0], "mae": [3.0, 2.0, 1.0]}
    assert dc.select_alpha(table) == 0.0
    assert dc.select_alpha(table, metric="mae") == 1.0
