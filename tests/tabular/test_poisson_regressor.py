"""DeepCTRLRegressor(loss="poisson"): counts trained as log-rates relative to their mean,
predicted in their own units (never negative), with rules that see those units, alpha chosen
by the Poisson deviance, and model and ONNX files that give the same predictions."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pandas as pd
import pytest
import torch

import deepctrl as dc
from deepctrl.io.checkpoint import read_checkpoint
from deepctrl.io.onnx_export import EXPORTER_READY
from deepctrl.tabular.alpha_choice import keep_rule_alpha, min_error_alpha
from deepctrl.tabular.table_rules import Expression

SMALL = {"max_epochs": 40, "hidden_size": 16, "n_seeds": 2, "random_state": 0}


def sales_table(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """Daily sales whose rate falls with the price: from about 60 at a price of 1 on a
    promotion to about 3 at a price of 10."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "promo": rng.integers(0, 2, n)})
    rate = np.exp(4.0 - 0.3 * X["price"] + 0.4 * X["promo"])
    return X, pd.Series(rng.poisson(rate), name="sales")


@pytest.fixture(scope="module")
def monotone():
    X, y = sales_table(600, 0)
    rule = dc.Monotonic("price", "decreasing")
    return dc.DeepCTRLRegressor(rules=[rule], loss="poisson", **SMALL).fit(X, y), X, y


def test_counts_train_relative_to_their_mean_and_predict_in_their_units(monotone):
    est, X, y = monotone
    assert est.target_mean_.tolist() == [0.0]
    assert est.target_scale_.tolist() == pytest.approx([y.mean()], rel=1e-12)
    pred = est.predict(X, alpha=0.0)
    assert pred.shape == (len(X),) and pred.min() > 0
    # the networks' mean rate, target_scale_ * exp(output), averaged in rate units
    enc = torch.from_numpy(est.encoder_.transform(X))
    with torch.no_grad():
        outs = [m(enc, alpha=torch.zeros(len(X))).double() for m in est.models_]
    rates = np.mean([est.target_scale_ * np.exp(o.numpy()) for o in outs], axis=0)[:, 0]
    np.testing.assert_allclose(pred, rates, rtol=1e-6)
    truth = np.exp(4.0 - 0.3 * X["price"] + 0.4 * X["promo"])
    assert np.corrcoef(np.log(pred), np.log(truth))[0, 1] > 0.97


def test_a_fresh_network_predicts_near_the_mean():
    X, y = sales_table(300, 1)
    weight = np.where(X["promo"] == 1, 3.0, 1.0)
    est = dc.DeepCTRLRegressor(loss="poisson", learning_rate=1e-12, max_epochs=1, n_seeds=1)
    est.set_params(random_state=0).fit(X, y, sample_weight=weight)
    mean = np.average(y, weights=weight)
    assert est.target_scale_.tolist() == pytest.approx([mean], rel=1e-12)
    pred = est.predict(X)
    assert 0.7 * mean < pred.min() and pred.max() < 1.4 * mean


def test_the_sweep_scores_the_deviance_and_alpha_is_chosen_by_it(monotone):
    est, X, y = monotone
    table = est.validation_sweep_
    assert list(table) == ["alpha", "verification_ratio", "mae", "mse", "poisson"]
    assert est.primary_metric == "poisson"
    assert est.min_error_alpha_ == min_error_alpha(table, "poisson")
    assert est.selected_alpha_ == keep_rule_alpha(table, "poisson")
    swept = est.sweep(X, y, [0.0, 1.0])
    pred = est.predict(X, alpha=1.0)
    deviance = 2 * (np.where(y > 0, y * np.log(np.maximum(y, 1) / pred), 0.0) - (y - pred))
    assert swept["poisson"].iloc[1] == pytest.approx(deviance.mean(), rel=1e-6)
    assert swept["mse"].iloc[1] == pytest.approx(((pred - y) ** 2).mean(), rel=1e-6)
    assert (
        "loss: poisson (predictions are exp of the networks' log-rate times the scale, the "
        f"training mean or 1 for a target that is all 0: sales {y.mean():.4g})" in est.summary()
    )
    assert "validation poisson" in est.summary()


def test_a_monotone_rule_holds_through_exp_and_rho_auto_needs_no_fallback(monotone):
    est, X, _ = monotone
    assert est.verification_ratio(X, alpha=1.0) >= 0.99
    assert all(0.01 < r < 10 for r in est.rho_)  # measured, not the fallback of 1.0
    grid = X.assign(promo=0).iloc[:50].sort_values("price")
    assert np.all(np.diff(est.predict(grid, alpha=1.0)) <= 1e-9)


def test_an_expression_on_the_output_holds_in_the_targets_units():
    X, y = sales_table(600, 2)
    rule = Expression("sales <= 40")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # rho falls back to 1 if no row breaks it at first
        est = dc.DeepCTRLRegressor(rules=[rule], loss="poisson", rho=1.0, **SMALL).fit(X, y)
    assert est.predict(X, alpha=0.0).max() > 45  # the data alone break it
    assert est.predict(X, alpha=1.0).max() <= 40.5
    assert est.verification_ratio(X, alpha=1.0) >= 0.99
    # every rule sees the values predict returns
    enc = torch.from_numpy(est.encoder_.transform(X))
    with torch.no_grad():
        combined = est.combined_at(enc, torch.full((len(X),), 0.5))
    seen = est.rule_outputs().raw(combined.float())["sales"].double().numpy()
    np.testing.assert_allclose(seen, est.predict(X, alpha=0.5), rtol=1e-5)


def test_negative_targets_are_refused_naming_the_target_and_value(monotone):
    X, y = sales_table(50, 3)
    y.iloc[7] = -4
    est = dc.DeepCTRLRegressor(loss="poisson", max_epochs=1)
    with pytest.raises(
        ValueError, match=r"^y \(column 'sales'\) has a negative value, -4 at row 7"
    ):
        est.fit(X, y)
    fitted, X_fit, _ = monotone
    with pytest.raises(ValueError, match="has a negative value, -4 at row 7: loss='poisson'"):
        fitted.sweep(X, y)
    with pytest.raises(ValueError, match="loss must be one of \\('mse', 'mae', 'poisson'\\)"):
        dc.DeepCTRLRegressor(loss="gamma").fit(X_fit, np.ones(len(X_fit)))


def test_save_and_load_give_the_same_predictions_and_old_readers_refuse(monotone, tmp_path):
    est, X, y = monotone
    path = est.save(tmp_path / "sales.deepctrl")
    back = dc.DeepCTRLRegressor.load(path)
    assert np.array_equal(back.predict(X), est.predict(X))
    assert np.array_equal(back.predict(X, alpha=0.3), est.predict(X, alpha=0.3))
    assert back.primary_metric == "poisson" and back.rule_outputs().link == "log"
    assert read_checkpoint(path).config["estimator_format"] == 2
    plain = dc.DeepCTRLRegressor(max_epochs=2, n_seeds=1, random_state=0).fit(X, y)
    saved = plain.save(tmp_path / "plain.deepctrl")
    assert read_checkpoint(saved).config["estimator_format"] == 1


@pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")
def test_onnx_applies_the_exp_link(monotone, tmp_path):
    est, X, _ = monotone
    session = ort.InferenceSession(str(est.to_onnx(tmp_path / "sales.onnx", X.iloc[:40])))
    alphas = np.linspace(0, 1, len(X))
    (got,) = session.run(None, est.onnx_inputs(X, alpha=alphas))
    np.testing.assert_allclose(got, est.predict(X, alpha=alphas), rtol=1e-5, atol=0)


def test_several_count_targets():
    X, y = sales_table(300, 4)
    Y = pd.DataFrame({"sales": y, "returns": np.random.default_rng(4).poisson(0.5, len(y))})
    est = dc.DeepCTRLRegressor(loss="poisson", **SMALL).fit(X, Y)
    assert est.target_scale_ == pytest.approx(Y.mean().to_numpy(), rel=1e-12)
    pred = est.predict(X)
    assert pred.shape == (300, 2) and pred.min() > 0
    assert pred[:, 1].mean() == pytest.approx(Y["returns"].mean(), rel=0.2)


def test_the_documented_example_runs(capsys):
    text = (Path(__file__).resolve().parents[2] / "docs" / "tables-cli.md").read_text()
    section = text.split("## Counts: the Poisson loss")[1].split("\n## ")[0]
    (block,) = re.findall(r"```python\n(.*?)```", section, re.S)
    namespace: dict = {}
    exec(compile(block, "tables-cli.md, Counts", "exec"), namespace)
    out = capsys.readouterr().out
    assert "loss: poisson (predictions are exp of the networks' log-rate" in out
    model, sales = namespace["model"], namespace["sales"]
    assert sales.min() > 0 and model.verification_ratio(namespace["X_test"], alpha=1.0) >= 0.99
    swept = model.sweep(namespace["X_test"], namespace["y_test"], [0.0])
    assert list(swept.columns) == ["alpha", "verification_ratio", "mae", "mse", "poisson"]
