"""The estimators' networks are float32 whatever default dtype the program has set, and
train the same: the same data and random_state give the same model."""

import numpy as np
import pandas as pd
import torch

import deepctrl as dc


def test_a_float64_default_dtype_changes_neither_the_networks_nor_the_fit():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200), "b": rng.normal(size=200)})
    y = 2 * X["a"] + X["b"] ** 2

    def fit():
        rules = [dc.Monotonic("a", "increasing")]
        return dc.DeepCTRLRegressor(rules, max_epochs=3, n_seeds=1, random_state=0).fit(X, y)

    first = fit().predict(X)
    torch.set_default_dtype(torch.float64)
    try:
        est = fit()
        assert torch.get_default_dtype() == torch.float64  # the program's setting is kept
    finally:
        torch.set_default_dtype(torch.float32)
    assert {p.dtype for m in est.models_ for p in m.parameters()} == {torch.float32}
    np.testing.assert_array_equal(est.predict(X), first)
