"""Settings held in numpy scalars or one-element tensors mean what the same Python number
means; booleans, NaN and infinity are refused with one line naming the setting."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import deepctrl as dc
from deepctrl.core.checks import finite_real, index


def _net():
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


def _data():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(64, 3, generator=g)
    return X, X[:, :1] * 2


@pytest.mark.parametrize("rho", [np.float32(0.5), np.float64(0.5), torch.tensor(0.5), 0.5])
def test_a_fixed_rho_of_any_numeric_type_is_the_rho_training_uses(rho):
    rule = dc.rules.Monotonic(0, "increasing")
    objective = dc.Objective(_net(), rule, dc.methods.DeepCTRL(rho=rho), seed=0)
    objective(*_data())
    assert objective.rho == 0.5
    result = dc.fit(_net(), rule, dc.methods.DeepCTRL(rho=rho), train=_data(), max_epochs=1)
    assert result.state.tensors["rho"].tolist() == [0.5]


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: dc.priors.Beta(float("inf"), 1.0), "Beta's a must be finite, got inf"),
        (lambda: dc.priors.Beta(0.1, float("nan")), "Beta's b must be finite, got nan"),
        (lambda: dc.priors.Fixed(float("nan")), "Fixed's a must be finite"),
        (lambda: dc.rules.Relative(float("inf")), "Relative perturbation's u must be finite"),
        (lambda: dc.rules.Additive(float("inf")), "Additive perturbation's scale must be finite"),
        (lambda: dc.rules.Threshold(0, float("nan")), "threshold must be finite"),
        (lambda: dc.rules.Penalty(lambda x, y: y[:, 0], tau=float("nan")), "tau must be finite"),
        (
            lambda: dc.rules.AllOf([dc.rules.Monotonic(0, "increasing")], [float("inf")]),
            "AllOf weight must be finite",
        ),
        (
            lambda: dc.rules.AllOf([dc.rules.Monotonic(0, "increasing")], [-1.0]),
            "AllOf weight must be >= 0, got -1",
        ),
        (
            lambda: dc.rules.AllOf([dc.rules.Monotonic(0, "increasing")], [0.0]),
            "AllOf weights are all 0, so no rule would act",
        ),
        (
            lambda: dc.rules.AllOf([dc.rules.Monotonic(0, "increasing")], [1e30]),
            "is above 1e.06: weights count relative to each other, and a huge one overflows",
        ),
        (lambda: dc.rules.Monotonic(True, "increasing"), "feature must be an integer index"),
        (lambda: dc.rules.Threshold(1.0, 0.5), "feature must be an integer index, got 1.0"),
        (lambda: dc.methods.DeepCTRL(rho=True), "rho must be a number, got True"),
        (lambda: dc.methods.DeepCTRL(val_alpha=float("nan")), "val_alpha must be finite"),
    ],
)
def test_settings_that_are_not_finite_numbers_are_named(make, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")) as e:
        make()
    assert "\n" not in str(e.value)


def test_a_numpy_integer_feature_is_that_column():
    x = torch.tensor([[1.0, 2.0, 3.0]])
    by_numpy = dc.rules.Monotonic(np.int64(1), "increasing", perturbation=dc.rules.Additive(1.0))
    moved = by_numpy.perturb(x) - x
    assert by_numpy.feature == 1 and type(by_numpy.feature) is int
    assert moved[0, 0] == 0 and 0 < moved[0, 1] <= 1 and moved[0, 2] == 0  # U(0, 1] on column 1


def test_the_checks_convert_and_refuse_by_hand():
    assert finite_real(torch.tensor([2.5], dtype=torch.float64), "w") == 2.5
    assert finite_real(np.int64(3), "w", positive=True) == 3.0
    assert index(np.int32(4), "feature") == 4
    for bad in ("1", None, torch.tensor([1.0, 2.0]), torch.tensor(True)):
        with pytest.raises(ValueError, match="w must be (a|one) number"):
            finite_real(bad, "w")
    with pytest.raises(ValueError, match="w must be > 0, got 0"):
        finite_real(0, "w", positive=True)


def test_an_objective_names_a_per_row_alpha_and_keeps_a_given_alpha_exact_in_float64():
    rule = dc.rules.Monotonic(0, "increasing")
    objective = dc.Objective(_net(), rule, dc.methods.DeepCTRL(rho=1.0), seed=0)
    X, y = _data()
    with pytest.raises(ValueError, match=r"alpha must be one number.*shape \(64,\)"):
        objective(X, y, alpha=torch.full((64,), 0.3))
    wide = dc.Objective(_net().double(), rule, dc.methods.DeepCTRL(rho=1.0), seed=0)
    out = wide(X.double(), y.double(), alpha=0.3)
    assert out.terms.alpha.dtype == torch.float64 and out.terms.alpha.item() == 0.3
    expected = 0.3 * out.rule.double() + 1.0 * 0.7 * out.task.double()
    assert out.loss.item() == pytest.approx(expected.item(), rel=1e-15)


def test_rho_auto_reads_output_none_as_the_first_output():
    g = torch.Generator().manual_seed(1)
    X = torch.randn(256, 3, generator=g)
    y = torch.cat([X[:, :1], 10 * X[:, 1:2]], dim=1)  # outputs of spread 1 and 10
    rhos = []
    for output in (None, 0):
        torch.manual_seed(0)
        net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 2))
        rule = dc.rules.Monotonic(0, "increasing", output=output)
        objective = dc.Objective(net, rule, dc.methods.DeepCTRL(rho="auto"), seed=0)
        objective.calibrate((X, y))
        rhos.append(objective.rho)
    assert rhos[0] == rhos[1]
