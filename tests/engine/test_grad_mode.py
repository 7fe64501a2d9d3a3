"""Training inside a caller's ``torch.no_grad()`` or ``torch.inference_mode()`` block (an
evaluation cell of a notebook) trains as outside it, and leaves the block's mode on."""

import numpy as np
import pandas as pd
import pytest
import torch

import deepctrl as dc


def _fit():
    torch.manual_seed(0)
    X = torch.randn(64, 3)
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    rule = dc.rules.Monotonic(0, "increasing")
    result = dc.fit(model, rule, dc.methods.DeepCTRL(), train=(X, X[:, :1]), max_epochs=2)
    return torch.cat([p.detach().reshape(-1) for p in result.model.parameters()])


@pytest.mark.parametrize("block", [torch.no_grad, torch.inference_mode])
def test_dc_fit_in_a_no_grad_block_trains_as_outside_it(block):
    outside = _fit()
    with block():
        inside = _fit()
        assert not torch.is_grad_enabled()
    assert torch.equal(inside, outside)


def test_an_estimator_fits_in_an_inference_mode_block():
    X = pd.DataFrame({"a": np.linspace(0, 1, 60)})
    with torch.inference_mode():
        est = dc.DeepCTRLRegressor(max_epochs=2, n_seeds=1, random_state=0).fit(X, X["a"])
    assert est.predict(X).shape == (60,)
