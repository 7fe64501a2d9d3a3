"""Targets that do not fit the model's outputs fail with one line before rho is measured,
whichever row holds them and whatever rho is."""

import re

import pytest
import torch
from torch import nn

import deepctrl as dc

RULE = dc.rules.Monotonic(0, "increasing", output=1)
LABELS = "task_loss='cross_entropy': labels must be in 0..2 for 3 model outputs, got 0..5"


def _classifier() -> dc.DeepCTRL:
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 3))


def _labels() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(64, 3, generator=g)
    y = torch.randint(0, 3, (64,), generator=g)
    y[40] = 5  # past the first rows the shapes are checked on
    return X, y


@pytest.mark.parametrize("rho", [1.0, "auto"])
def test_fit_checks_every_label(rho):
    X, y = _labels()
    method = dc.methods.DeepCTRL(rho=rho)
    with pytest.raises(ValueError, match=f"^{re.escape(LABELS)}$"):
        dc.fit(_classifier(), RULE, method, train=(X, y), task_loss="cross_entropy", max_epochs=1)


def test_fit_checks_every_bce_target_before_the_models_outputs():
    X = torch.randn(64, 3, generator=torch.Generator().manual_seed(1))
    y = (X[:, :1] > 0).float()
    y[40] = 2.0
    torch.manual_seed(0)
    model = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), nn.Sequential(dc.mlp(8, 1), nn.Sigmoid()))
    rule = dc.rules.Monotonic(0, "increasing")
    with pytest.raises(ValueError, match=r"needs targets in \[0, 1\], got 0 to 2$"):
        dc.fit(model, rule, train=(X, y), task_loss="bce", max_epochs=1)


@pytest.mark.parametrize("rho", [1.0, "auto", "paper"])
def test_an_objective_checks_the_first_batch_whatever_rho(rho):
    X, y = _labels()
    objective = dc.Objective(_classifier(), RULE, dc.methods.DeepCTRL(rho=rho), "cross_entropy")
    with pytest.raises(ValueError, match=r"labels must be in 0\.\.2 .* got 0\.\.5$"):
        objective(X, y)


def test_calibrate_checks_every_block():
    X, y = _labels()
    objective = dc.Objective(_classifier(), RULE, task_loss="cross_entropy")
    with pytest.raises(ValueError, match=r"labels must be in 0\.\.2 .* got 0\.\.5$"):
        objective.calibrate((X, y), block_rows=16)  # the bad label is in the third block
