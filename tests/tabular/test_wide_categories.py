"""A category with many values (a shop or product code): the estimators' first layers look
up one weight column per row instead of multiplying the one-hot inputs, which computes the
same function; model files and ONNX files keep it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

import deepctrl as dc
from deepctrl.core.layers import OneHotLinear
from deepctrl.io.onnx_export import EXPORTER_READY
from deepctrl.tabular.network import LOOKUP_WIDTH

SMALL = {"max_epochs": 4, "hidden_size": 16, "n_seeds": 2}


def shops(n: int, levels: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "shop": rng.integers(0, levels, n)})
    X["shop"] = "s" + X["shop"].astype(str)
    effect = rng.normal(0, 1, levels)[X["shop"].str[1:].astype(int)]
    return X, 10 - X["price"] + effect + rng.normal(0, 0.2, n)


@pytest.fixture(scope="module")
def fitted():
    X, y = shops(600, 90, seed=0)
    rule = [dc.Monotonic("price", "decreasing")]
    return X, dc.DeepCTRLRegressor(rules=rule, random_state=0, **SMALL).fit(X, y)


def test_a_wide_category_is_looked_up_and_a_narrow_one_multiplied(fitted):
    est = fitted[1]
    shop = est.encoder_.column("shop")
    assert shop.width >= LOOKUP_WIDTH
    assert est.network_["one_hot"] == [[shop.start, shop.start + shop.width]]
    for model in est.models_:
        for encoder in (model.rule_encoder, model.data_encoder):
            assert isinstance(encoder[0], OneHotLinear)
    narrow = dc.DeepCTRLRegressor(random_state=0, **SMALL).fit(*shops(200, 12, seed=1))
    assert "one_hot" not in narrow.network_
    assert type(narrow.models_[0].data_encoder[0]) is torch.nn.Linear


def test_the_lookup_computes_the_plain_products(fitted):
    X, est = fitted
    x = est._encode(X.iloc[:50]).double()
    for model in est.models_:
        layer = model.data_encoder[0].double()
        plain = F.linear(x, layer.weight, layer.bias)
        torch.testing.assert_close(layer(x), plain, rtol=0, atol=1e-12)
        model.float()


def test_model_files_keep_the_lookup(fitted, tmp_path):
    X, est = fitted
    path = est.save(tmp_path / "shops.deepctrl")
    again = dc.DeepCTRLRegressor.load(path)
    assert again.network_["one_hot"] == est.network_["one_hot"]
    assert isinstance(again.models_[0].rule_encoder[0], OneHotLinear)
    np.testing.assert_array_equal(again.predict(X, alpha=0.7), est.predict(X, alpha=0.7))


@pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")
def test_onnx_files_give_the_same_predictions(fitted, tmp_path):
    import onnxruntime as ort

    X, est = fitted
    path = est.to_onnx(tmp_path / "shops.onnx", X.iloc[:40])
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    rows = X.iloc[40:140].reset_index(drop=True)
    rows.loc[0, "shop"] = "a shop never seen"
    with pytest.warns(UserWarning, match="not seen in training"):
        want = est.predict(rows, alpha=0.3)
    got = session.run(None, est.onnx_inputs(rows, alpha=0.3))[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-4 * np.abs(want).max())


def test_a_table_of_one_wide_category_alone_trains_stacked_and_predicts():
    X, y = shops(300, 70, seed=2)
    est = dc.DeepCTRLRegressor(random_state=0, **SMALL).fit(X[["shop"]], y)
    assert est.network_["one_hot"] == [[0, est.encoder_.column("shop").width]]
    assert np.isfinite(est.predict(X[["shop"]])).all()
