"""The figures of docs/rho.md on windows: rho="auto" of a Monotonic rule on (batch, time,
features) inputs grows with the window's length, and at 32 steps the measured rho keeps the
rule at alpha 1 less well than the one-step value fixed by hand."""

import pytest
import torch
from torch import nn

import deepctrl as dc

RULE = dc.rules.Monotonic(0, "increasing")


def _window(steps: int, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A target of the last step only: y = -2 x0 + x1 + noise at step T."""
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, steps, 3, generator=g)
    y = (-2 * X[:, -1, 0] + X[:, -1, 1] + 0.1 * torch.randn(n, generator=g))[:, None]
    return X, y


def _model(steps: int) -> dc.DeepCTRL:
    torch.manual_seed(0)

    def encoder() -> nn.Module:
        return nn.Sequential(nn.Flatten(), nn.Linear(steps * 3, 32), nn.ReLU(), nn.Linear(32, 16))

    return dc.DeepCTRL(encoder(), encoder(), dc.mlp(32, 16, 1))


@pytest.mark.parametrize(("steps", "rho"), [(1, 0.047), (8, 0.39), (32, 1.6)])
def test_the_measured_rho_grows_with_the_window(steps, rho):
    X, y = _window(steps, 500)
    objective = dc.Objective(_model(steps), RULE, task_loss="mae").calibrate((X, y))
    assert objective.rho == pytest.approx(rho, rel=0.02)


def test_the_one_step_rho_keeps_the_rule_on_a_long_window():
    X, y = _window(32, 800)

    def verification_at_alpha_1(rho: float | str) -> float:
        result = dc.fit(
            _model(32),
            RULE,
            dc.methods.DeepCTRL(rho=rho),
            train=(X[:500], y[:500]),
            val=(X[500:650], y[500:650]),
            task_loss="mae",
            batch_size=32,
            max_epochs=40,
            patience=10,
            seeds=[0],
        )
        return dc.sweep(result.model, RULE, X[650:], y[650:], alphas=[1.0])["verification_ratio"][0]

    assert verification_at_alpha_1("auto") == pytest.approx(0.87, abs=0.01)
    assert verification_at_alpha_1(0.0472) == 1.0
