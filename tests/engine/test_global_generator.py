"""Training, sweeps, loading and the estimators leave PyTorch's global generator as they
found it (their draws come from generators derived from their own seeds)."""

import numpy as np
import pandas as pd
import torch

import deepctrl as dc


def leaves_the_global_generator(call) -> bool:
    torch.manual_seed(1)
    before = torch.get_rng_state().clone()
    call()
    return torch.equal(before, torch.get_rng_state())


def test_fit_sweep_load_and_the_estimators_leave_the_global_generator_alone(tmp_path):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(120, 3, generator=g)
    y = -X[:, :1]
    rule = dc.rules.Monotonic(0, "decreasing")
    data = torch.utils.data.TensorDataset(X, y)
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    path = dc.save(model, tmp_path / "m.safetensors")
    calls = {
        "fit on tensors": lambda: dc.fit(model, rule, train=(X, y), max_epochs=1, progress=False),
        "fit on a Dataset": lambda: dc.fit(model, rule, train=data, max_epochs=1, progress=False),
        "fit on a shuffled Dataset": lambda: dc.fit(
            model, rule, train=data, max_epochs=1, shuffle=True, progress=False
        ),
        "sweep of a Dataset": lambda: dc.sweep(model, rule, data),
        "load": lambda: dc.load(path),
    }
    frame = pd.DataFrame({"price": np.linspace(1, 9, 120), "q": np.cos(np.arange(120))})
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], max_epochs=2)
    calls["estimator fit"] = lambda: est.fit(frame, -frame["price"])
    calls["estimator load"] = lambda: dc.DeepCTRLRegressor.load(est.save(tmp_path / "e.deepctrl"))
    moved = [name for name, call in calls.items() if not leaves_the_global_generator(call)]
    assert moved == []
