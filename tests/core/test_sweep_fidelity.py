"""A sweep computes what the model's own forward computes, in float64, with draws that do
not depend on which alphas are swept."""

from __future__ import annotations

import pytest
import torch

import deepctrl as dc
from deepctrl.core.sweep_outputs import predict_sweep


def _net():
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


class Squashed(dc.DeepCTRL):
    def forward(self, x, alpha=0.0):
        return torch.sigmoid(super().forward(x, alpha))


class Rescaled(torch.nn.Module):
    """A wrapper of its own that keeps the model in `.module` (as weight averages do)."""

    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, x, alpha=0.0):
        return 10 * self.module(x, alpha) + 3


@pytest.mark.parametrize("kind", ["subclass", "wrapper", "compiled-like"])
def test_a_sweep_runs_the_models_own_forward(kind):
    base = _net()
    if kind == "subclass":
        model = Squashed(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
        model.load_state_dict(base.state_dict())
    elif kind == "wrapper":
        model = Rescaled(base)
    else:  # DataParallel is looked through, and computes what its module does
        model = torch.nn.DataParallel(base)
    X = torch.randn(30, 3)
    y_hat, _ = predict_sweep(model, None, X, [0.0, 0.6, 1.0])
    for i, a in enumerate([0.0, 0.6, 1.0]):
        torch.testing.assert_close(y_hat[i], model(X, a).detach())


def test_input_merge_sweeps_keep_the_output_shape():
    model = dc.DeepCTRL(
        dc.mlp(4, 8),
        None,
        torch.nn.Sequential(dc.mlp(8, 6), torch.nn.Unflatten(1, (2, 3))),
        merge="input",
    )
    X = torch.randn(5, 3)
    assert model.forward_alphas(X, [0.0, 1.0]).shape == (2, 5, 2, 3)
    flat = dc.DeepCTRL(
        dc.mlp(4, 8), None, torch.nn.Sequential(dc.mlp(8, 1), torch.nn.Flatten(0)), merge="input"
    )
    assert flat(X, 0.5).shape == (5,) and flat.forward_alphas(X, [0.0, 1.0]).shape == (2, 5)


def test_metrics_are_float64_whatever_the_targets_and_model_precision():
    model = _net().double()
    X = torch.randn(50, 3, dtype=torch.float64)
    y = 1e8 + model(X, 0.5).detach()  # float32 targets would round by up to 4
    shifted = lambda x, alphas: torch.stack([model(x, a) + 1e8 for a in alphas])  # noqa: E731
    table = dc.sweep(model, None, X, y, [0.5], metrics=("mae",), forward=shifted)
    assert table["mae"] == [0.0]
    half = _net().to(torch.bfloat16)
    Xh = torch.randn(400, 3)
    yh = torch.randn(400, 1)
    each = lambda x, alphas: torch.stack([half(x, a) for a in alphas])  # noqa: E731
    table = dc.sweep(half, None, Xh, yh, [0.0, 0.1], metrics=("mae",), forward=each)
    outs = [half(Xh.to(torch.bfloat16), a).detach().double() for a in (0.0, 0.1)]
    expected = [float((o - yh.double()).abs().mean()) for o in outs]
    assert table["mae"] == pytest.approx(expected, rel=1e-12)


class Jitter(dc.rules.Monotonic):
    """A rule whose perturbation draws normals, as a user's own rule may."""

    def perturb(self, x, generator=None):
        step = torch.randn(x.shape[0], generator=generator).abs()
        out = x.clone()
        out[:, 0] += step
        return out


class Wavy(torch.nn.Module):
    """Rises and falls with x0, so whether a step raises it depends on the step drawn."""

    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.tensor(5.0))

    def forward(self, x, alpha=0.0):
        return torch.sin(self.scale * x[:, :1]) * (1 + alpha)


def test_a_rows_check_does_not_depend_on_the_other_alphas_swept():
    model = Wavy()
    X = torch.randn(3000, 3)
    rule = Jitter(0, "increasing")
    _, alone = predict_sweep(model, rule, X, [0.0])
    _, among = predict_sweep(model, rule, X, [i / 20 for i in range(21)])
    assert torch.equal(alone[0], among[0])
    table = dc.sweep(model, rule, X, torch.zeros(3000, 1), [0.0, 0.5, 1.0])
    assert table["verification_ratio"][0] == dc.verification_ratio(model, rule, X, 0.0)
