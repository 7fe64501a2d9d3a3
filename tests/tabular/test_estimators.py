"""DeepCTRLRegressor and DeepCTRLClassifier: conventions, rules on named columns, alpha,
sweeps, multi-class and multi-output, save and load."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import GridSearchCV

import deepctrl as dc
import deepctrl.tabular.model_file
from deepctrl.tabular.alpha_choice import ALPHA_GRID
from deepctrl.tabular.alpha_evaluation import value_order
from deepctrl.tabular.model_file import estimator_config
from deepctrl.tabular.table_rules import Expression

FAST = {"max_epochs": 30, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def demand_table(n: int = 256, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "price": rng.uniform(1, 10, n),
            "size": rng.uniform(0, 1, n),
            "color": rng.choice(["red", "blue"], n),
        }
    )
    y = 10 - X["price"] + 2 * X["size"] + (X["color"] == "red") + rng.normal(0, 0.2, n)
    return X, y.rename("demand")


@pytest.fixture(scope="module")
def regressor() -> tuple[dc.DeepCTRLRegressor, pd.DataFrame, pd.Series]:
    X, y = demand_table()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST)
    return est.fit(X, y), X, y


def test_params_are_stored_unchanged_and_clone_copies_them():
    rules = [dc.Monotonic("price", "decreasing")]
    est = dc.DeepCTRLRegressor(rules=rules, alpha=0.3, hidden_size=16, loss="mae")
    params = est.get_params()
    assert params["rules"] is rules and params["alpha"] == 0.3 and params["loss"] == "mae"
    twin = clone(est)
    assert twin.get_params()["hidden_size"] == 16 and twin.get_params()["rules"][0] is not rules[0]
    assert est.set_params(alpha="auto").alpha == "auto"
    assert not [k for k in vars(est) if k.endswith("_")]  # nothing fitted yet


def test_fit_sets_fitted_attributes_and_keeps_params(regressor):
    est, X, _ = regressor
    assert est.n_features_in_ == 3 and list(est.feature_names_in_) == ["price", "size", "color"]
    assert est.output_names_ == ["demand"] and est.alpha == "auto"
    assert est.rule_.feature == 0 and est.rules[0].feature == "price"
    assert est.n_validation_ == round(0.2 * len(X)) and est.n_train_ == len(X) - est.n_validation_
    assert 0.0 <= est.selected_alpha_ <= 1.0 and 1 <= est.n_epochs_ <= 30


def test_predict_takes_alpha_and_auto_uses_the_selected_alpha(regressor):
    est, X, _ = regressor
    at_selected = est.predict(X, alpha=est.selected_alpha_)
    np.testing.assert_array_equal(est.predict(X), at_selected)
    np.testing.assert_array_equal(est.predict(X, alpha="auto"), at_selected)
    assert est.predict(X, alpha=0.0).shape == (len(X),)
    assert not np.allclose(est.predict(X, alpha=0.0), est.predict(X, alpha=1.0))
    np.testing.assert_array_equal(
        est.predict(X, alpha="min_error"), est.predict(X, alpha=est.min_error_alpha_)
    )
    with pytest.raises(
        ValueError, match="alpha must be a finite number, 'auto' or 'min_error', got 'high'"
    ):
        est.predict(X, alpha="high")


def test_sweep_matches_predict_and_the_rule_holds_at_alpha_one(regressor):
    est, X, y = regressor
    table = est.sweep(X, y, alphas=[0.0, 0.5, 1.0])
    assert list(table.columns) == ["alpha", "verification_ratio", "mae", "mse"]
    for alpha, mae, mse in zip(table["alpha"], table["mae"], table["mse"], strict=True):
        err = est.predict(X, alpha=alpha) - y.to_numpy()
        assert mae == pytest.approx(np.abs(err).mean(), rel=1e-6)
        assert mse == pytest.approx((err**2).mean(), rel=1e-6)
    assert table["verification_ratio"].iloc[-1] >= 0.95
    assert est.verification_ratio(X, alpha=1.0) == table["verification_ratio"].iloc[-1]
    assert table["mae"].iloc[0] < 0.6  # the data path fits (noise 0.2, range ~11)


def test_the_sweep_is_the_core_sweep_of_the_averaged_networks():
    X, y = demand_table()
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("price", "increasing")],  # against the data
        **{**FAST, "max_epochs": 5, "n_seeds": 3},
    ).fit(X, y)
    nets = torch.nn.ModuleList(est.models_)

    def mean(x, alphas):
        return torch.stack([net.forward_alphas(x, alphas) for net in nets]).mean(dim=0)

    alphas = [0.0, 0.85, 0.95, 1.0]
    X_enc = torch.from_numpy(est.encoder_.transform(X))
    order = value_order(X_enc)  # the rule's draws follow the rows' values
    X_enc = X_enc[order]
    scale, shift = est.target_scale_[0], est.target_mean_[0]
    scaled = (y.to_numpy()[order.numpy()] - shift) / scale
    core = dc.sweep(nets, est.rule_, X_enc, scaled, alphas, metrics=("mae", "mse"), forward=mean)
    table = est.sweep(X, y, alphas)
    assert table["verification_ratio"].tolist() == core["verification_ratio"]
    assert len(set(core["verification_ratio"])) > 2
    np.testing.assert_allclose(table["mae"], np.multiply(core["mae"], scale), rtol=1e-5)
    np.testing.assert_allclose(table["mse"], np.multiply(core["mse"], scale**2), rtol=1e-5)
    one = dc.sweep(nets[0], est.rule_, X_enc, scaled, alphas, metrics=("mae",))
    assert not np.allclose(one["mae"], core["mae"], rtol=1e-3)


def test_the_classifier_sweep_is_the_core_sweep_of_its_probability_average():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"dose": rng.uniform(0, 10, 300), "age": rng.uniform(20, 80, 300)})
    labels = np.digitize(X["dose"] + rng.normal(0, 1, 300), [3.5, 6.5])
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("dose", "increasing", output=0)],
        **{**FAST, "max_epochs": 5, "n_seeds": 3},
    ).fit(X, labels)

    def mean(x, alphas):  # the mean probability, as log-probabilities
        logp = torch.stack([net.forward_alphas(x, alphas) for net in est.models_])
        return torch.logsumexp(logp, dim=0) - np.log(len(est.models_))

    alphas = [0.0, 0.5, 1.0]
    X_enc = torch.from_numpy(est.encoder_.transform(X))
    order = value_order(X_enc)
    core = dc.sweep(
        torch.nn.ModuleList(est.models_),
        est.rule_,
        X_enc[order],
        torch.from_numpy(labels)[order],
        alphas,
        metrics=("cross_entropy", "accuracy"),
        forward=mean,
    )
    table = est.sweep(X, labels, alphas)
    assert table["verification_ratio"].tolist() == core["verification_ratio"]
    assert min(core["verification_ratio"]) < 1.0
    for name in ("cross_entropy", "accuracy"):
        np.testing.assert_allclose(table[name], core[name], rtol=1e-5)


def test_select_alpha_sets_the_fitted_alpha_and_keeps_the_parameter(regressor, tmp_path):
    est, X, y = regressor
    est = clone(est).set_params(**est.get_params())
    est.__dict__.update({k: v for k, v in regressor[0].__dict__.items() if k.endswith("_")})
    assert est.alpha == "auto" and est.alpha_ == est.selected_alpha_
    table = est.sweep(X, y, alphas=ALPHA_GRID)
    reached = table[table["verification_ratio"] >= 0.9]  # with labels: the lowest error there
    chosen = est.select_alpha(X, y, min_verification=0.9)
    assert chosen == reached.loc[reached["mse"].idxmin(), "alpha"]
    assert est.alpha_ == chosen and est.alpha == "auto"
    np.testing.assert_array_equal(est.predict(X), est.predict(X, alpha=chosen))
    assert est.resolve_alpha("auto") == est.selected_alpha_
    best = est.select_alpha(X, y)
    assert best == table.loc[table["mse"].idxmin(), "alpha"] and est.alpha_ == best
    assert est.get_params()["alpha"] == "auto"  # the hyperparameter is what the user set
    back = dc.DeepCTRLRegressor.load(est.save(tmp_path / "chosen.deepctrl"))
    assert back.alpha_ == best and back.alpha == "auto"


def test_save_and_load_round_trip(regressor, tmp_path):
    est, X, y = regressor
    path = est.save(tmp_path / "model.deepctrl")
    back = dc.DeepCTRLRegressor.load(path)
    for alpha in (0.0, 0.3, 1.0):
        np.testing.assert_array_equal(back.predict(X, alpha=alpha), est.predict(X, alpha=alpha))
    assert back.get_params()["max_epochs"] == 30 and back.rules[0].feature == "price"
    assert back.selected_alpha_ == est.selected_alpha_
    assert back.recipe_ == est.recipe_ and back.recipe_.max_epochs == 30
    del back.recipe_  # as a model read from a file written before the recipe was saved
    again = dc.DeepCTRLRegressor.load(back.save(tmp_path / "again.deepctrl"))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    pd.testing.assert_frame_equal(back.sweep(X, y), est.sweep(X, y))
    assert dc.read_checkpoint(path).config["estimator"] == "DeepCTRLRegressor"
    with pytest.raises(ValueError, match="holds a DeepCTRLRegressor, not a DeepCTRLClassifier"):
        dc.DeepCTRLClassifier.load(path)


def test_errors_are_one_clear_line(regressor):
    est, X, y = regressor
    with pytest.raises(ValueError, match="unknown column 'prize'"):
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("prize", "decreasing")], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="Feature names seen at fit time, yet now missing"):
        est.predict(X.drop(columns="size"))
    with pytest.raises(NotFittedError):
        dc.DeepCTRLRegressor().predict(X)
    with pytest.raises(ValueError, match="beta must be a positive number"):
        dc.DeepCTRLRegressor(beta=-1).fit(X, y)
    with pytest.raises(ValueError, match="hidden_size must be a positive integer, got 0"):
        dc.DeepCTRLRegressor(hidden_size=0).fit(X, y)
    with pytest.raises(ValueError, match="y has 2 target column\\(s\\), the model predicts 1"):
        est.sweep(X, np.c_[y, y])
    with pytest.raises(ValueError, match="a classifier needs at least two"):
        dc.DeepCTRLClassifier().fit(X, np.zeros(len(X)))


def test_the_training_objective_is_the_papers_and_a_subclass_may_change_it():
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], beta=0.3, rho=2.0)
    est.rule_ = est.rules[0]
    method = est._training_method()
    assert isinstance(method, dc.methods.DeepCTRL) and method.rho_mode == 2.0
    assert method.prior.a == method.prior.b == 0.3
    est.rule_ = None
    assert isinstance(est._training_method(), dc.methods.TaskOnly)

    class Penalized(dc.DeepCTRLRegressor):
        def _training_method(self) -> dc.methods.Method:
            return dc.methods.TaskAndRule(10.0)

    X, y = demand_table(64)
    fitted = Penalized(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    default = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    assert fitted.rho_ == [] and len(default.rho_) == 1


def test_without_rules_alpha_has_no_effect():
    X, y = demand_table(64)
    est = dc.DeepCTRLRegressor(max_epochs=3, random_state=0).fit(X.to_numpy()[:, :2], y)
    np.testing.assert_array_equal(
        est.predict(X.to_numpy()[:, :2], alpha=0.0), est.predict(X.to_numpy()[:, :2], alpha=1.0)
    )
    assert np.isnan(est.sweep(X.to_numpy()[:, :2], y)["verification_ratio"]).all()
    with pytest.raises(ValueError, match="has no rules"):
        est.verification_ratio(X.to_numpy()[:, :2])


def _documented_attributes(kind: type) -> set[str]:
    """The names the class docstring's Attributes section lists."""
    section = inspect.getdoc(kind).split("Attributes:\n", 1)[1]
    return set(re.findall(r"^    (\w+):", section, re.M))


def test_every_fitted_attribute_is_documented(regressor):
    est, X, y = regressor
    classifier = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("price", "decreasing")], **{**FAST, "max_epochs": 2}
    ).fit(X, y > y.median())
    for fitted in (est, classifier):
        public = {k for k in vars(fitted) if k.endswith("_") and not k.startswith("_")}
        assert public - _documented_attributes(type(fitted)) == set()
    assert {"n_train_", "recipe_", "network_"} <= public  # a few of those found missing


def test_multiclass_rule_on_one_class_probability(tmp_path):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"dose": rng.uniform(0, 10, 300), "age": rng.uniform(20, 80, 300)})
    labels = np.array(["low", "mid", "high"])[
        np.digitize(X["dose"] + rng.normal(0, 1, 300), [3.5, 6.5])
    ]
    # classes_ are sorted: high, low, mid -> output 0 is P(high)
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("dose", "increasing", output=0)], **{**FAST, "n_seeds": 2}
    )
    est.fit(X, labels)
    assert len(est.models_) == 2
    assert list(est.classes_) == ["high", "low", "mid"] and est.network_["head"] == "log_softmax"
    proba = est.predict_proba(X, alpha=0.5)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-6)
    # the probabilities are the softmax of the combined log-probabilities, which
    # predict_proba overwrites in place and _proba keeps unless told otherwise
    logp = est._model_outputs(X, 0.5)
    kept = logp.copy()
    softmax = np.exp(kept) / np.exp(kept).sum(axis=1, keepdims=True)
    np.testing.assert_allclose(est._proba(logp), softmax, rtol=1e-12)
    np.testing.assert_array_equal(logp, kept)
    np.testing.assert_allclose(proba, softmax, rtol=1e-12)
    assert est._proba(np.log([[0.2, 0.3, 0.5]]), overwrite=True) == pytest.approx(
        np.array([[0.2, 0.3, 0.5]])
    )
    table = est.sweep(X, labels, alphas=[0.0, 1.0])
    assert list(table.columns) == [
        "alpha",
        "verification_ratio",
        "cross_entropy",
        "accuracy",
        "auc",
    ]
    assert table["accuracy"].iloc[0] > 0.7 and table["verification_ratio"].iloc[1] >= 0.95
    back = dc.DeepCTRLClassifier.load(est.save(tmp_path / "m.deepctrl"))
    np.testing.assert_array_equal(back.predict(X, alpha=0.3), est.predict(X, alpha=0.3))
    assert back.classes_.dtype == est.classes_.dtype


def test_binary_classifier_rule_and_named_penalty():
    rng = np.random.default_rng(2)
    X = pd.DataFrame({"bp": rng.uniform(90, 180, 300), "weight": rng.uniform(50, 110, 300)})
    y = (rng.random(300) < 1 / (1 + np.exp(-(X["bp"] - 135) / 10))).astype(int)
    rules = [dc.Monotonic("bp", "increasing"), Expression("proba_1 <= 0.6")]
    est = dc.DeepCTRLClassifier(rules=rules, **FAST).fit(X, y)
    table = est.sweep(X, y, alphas=[0.0, 1.0])
    assert list(table.columns) == ["alpha", "verification_ratio", "bce", "accuracy", "auc"]
    assert table["auc"].iloc[0] > 0.75 and table["accuracy"].iloc[0] > 0.75
    # the data put P(1) above 0.6 for a third of the rows; the rule path does not
    assert table["verification_ratio"].iloc[0] < 0.8 and table["verification_ratio"].iloc[1] >= 0.95
    assert est.predict_proba(X, alpha=1.0)[:, 1].max() <= 0.62


def test_multi_output_regression_with_a_rule_on_the_second_output():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x": rng.uniform(1, 5, 256), "z": rng.normal(0, 1, 256)})
    Y = pd.DataFrame(
        {"a": X["z"] * 2 + rng.normal(0, 0.1, 256), "b": 3 * X["x"] + rng.normal(0, 0.1, 256)}
    )
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing", output=1)], **FAST)
    est.fit(X, Y)
    assert est.output_names_ == ["a", "b"] and est.predict(X).shape == (256, 2)
    assert est.verification_ratio(X, alpha=1.0) >= 0.95
    by_name = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing", output="b")], **FAST)
    np.testing.assert_array_equal(by_name.fit(X, Y).predict(X), est.predict(X))
    with pytest.raises(
        ValueError,
        match=r"output 2 is not a target of this model \(targets: "
        r"a, b\)",
    ):
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing", output=2)]).fit(X, Y)


@pytest.mark.filterwarnings("ignore:rho:RuntimeWarning")  # the rule holds at the initial weights
def test_penalty_on_named_outputs_in_raw_units():
    X, y = demand_table()
    est = dc.DeepCTRLRegressor(
        rules=[dc.rules.Penalty(lambda cols, out: out["demand"] - 8.0)], **FAST
    ).fit(X, y)
    table = est.sweep(X, y, alphas=[0.0, 1.0])
    assert table["verification_ratio"].iloc[0] < 0.9 <= table["verification_ratio"].iloc[1]
    assert (est.predict(X, alpha=1.0) <= 8.2).mean() > 0.95


def test_binary_ensemble_averages_probabilities_without_rounding():
    est = dc.DeepCTRLClassifier()
    est.network_ = {"head": "identity"}
    logits = torch.tensor([[[0.0]], [[np.log(3.0)]]])  # probabilities 0.5 and 0.75
    mean_p = (0.5 + 0.75) / 2
    assert est._combine(logits).item() == pytest.approx(np.log(mean_p / (1 - mean_p)), rel=1e-5)
    confident = torch.full((2, 1, 1), 40.0)  # sigmoid(40) rounds to 1.0 in float32
    assert est._combine(confident).item() == pytest.approx(40.0, rel=1e-4)


def test_grid_search_clones_and_scores():
    X, y = demand_table(96)
    search = GridSearchCV(
        dc.DeepCTRLRegressor(max_epochs=2, n_seeds=1, random_state=0), {"alpha": [0.0, 1.0]}, cv=2
    )
    search.fit(X, y)
    assert search.best_params_["alpha"] in (0.0, 1.0) and len(search.cv_results_["params"]) == 2


def test_model_files_that_are_not_ours_or_incompatible_are_refused(regressor, tmp_path):
    est = regressor[0]
    cfg = estimator_config(est)
    weights = torch.nn.ModuleList(est.models_)
    newer = dc.save(weights, tmp_path / "newer.deepctrl", {**cfg, "estimator_format": 99})
    with pytest.raises(ValueError, match="in format 99 .* this deepctrl reads format 1"):
        dc.DeepCTRLRegressor.load(newer)
    plain = dc.save(est.models_[0], tmp_path / "plain.deepctrl", {"note": "research model"})
    with pytest.raises(ValueError, match="is a deepctrl model file but not a table model"):
        dc.DeepCTRLRegressor.load(plain)
    damaged = dc.save(
        weights, tmp_path / "damaged.deepctrl", {**cfg, "preprocessing": {"columns": []}}
    )
    with pytest.raises(ValueError, match="is a damaged table model: the preprocessing does not"):
        dc.DeepCTRLRegressor.load(damaged)
    path = est.save(tmp_path / "ok.deepctrl")
    path.write_bytes(path.read_bytes()[:-100])  # cut short
    with pytest.raises(
        ValueError, match="ok.deepctrl is damaged: its weights differ from the checksum"
    ):
        dc.DeepCTRLRegressor.load(path)


def test_the_summary_says_how_many_rows_a_threshold_rule_judged(tmp_path):
    rng = np.random.default_rng(0)
    bp = rng.uniform(100, 160, 600)
    X = pd.DataFrame({"bp": bp, "age": rng.uniform(30, 70, 600)})
    y = (bp > 140) + 0.02 * X["age"] + rng.normal(0, 0.3, 600)
    fast = {"max_epochs": 5, "n_seeds": 1, "random_state": 0, "verbose": False}
    cut = dc.DeepCTRLRegressor(rules=[dc.rules.Threshold("bp", 140.0)], **fast).fit(X, y)
    judged, rows = cut.judged_rows_
    assert rows == 120 and 0 < judged < 30  # the rows within one perturbation below 140
    line = (
        f"verification judged on {judged} of 120 validation rows (a threshold rule judges only "
        "the rows whose perturbation crosses its threshold); a ratio over so few rows is a "
        "weak guarantee"
    )
    assert line in cut.summary().splitlines()
    loaded = dc.DeepCTRLRegressor.load(cut.save(tmp_path / "m.deepctrl"))
    assert loaded.judged_rows_ == (judged, 120) and line in loaded.summary()
    rising = dc.DeepCTRLRegressor(rules=[dc.Monotonic("bp", "increasing")], **fast).fit(X, y)
    assert rising.judged_rows_ == (120, 120) and "judged on" not in rising.summary()
    swept = cut.sweep(X).attrs["judged_rows"]
    assert swept[1] == 600 and 0 < swept[0] < 150  # the same band below 140, on 600 rows
    gaps = X.assign(bp=X["bp"].mask(np.arange(600) % 100 == 0))  # 6 rows without a bp
    learned = dc.DeepCTRLRegressor(rules=[dc.Monotonic("bp", "increasing")], **fast)
    assert learned.fit(gaps, y).sweep(gaps, y).attrs["judged_rows"] == (594, 600)
    plain = dc.DeepCTRLRegressor(**fast).fit(X, y)
    assert "judged_rows" not in plain.sweep(X).attrs


def test_a_threshold_no_training_row_can_cross_is_refused_with_a_threshold_that_can_be():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"stops": rng.poisson(0.8, 300), "km": rng.gamma(2, 12, 300)})
    y = 0.6 * X["stops"] + 0.04 * X["km"] + rng.normal(0, 0.5, 300)
    fast = {"max_epochs": 2, "n_seeds": 1, "random_state": 0, "verbose": False}
    at_two = dc.DeepCTRLRegressor(rules=[dc.rules.Threshold("stops", 2.0)], **fast)
    with pytest.raises(ValueError) as caught:
        at_two.fit(X, y)  # raised by at most one stop, 1 reaches 2 and never passes it
    assert str(caught.value) == (
        "rule threshold(stops > 2, increasing): no training row can cross the threshold 2, "
        "since no value below it is raised past it (values move by at most 1 in the column's "
        "units); for 'stops' of whole numbers, a threshold between two of them (1.5) is "
        "crossed from below; or give a larger perturbation"
    )
    between = dc.DeepCTRLRegressor(rules=[dc.rules.Threshold("stops", 1.5)], **fast).fit(X, y)
    assert between.judged_rows_[0] > 0


def test_a_perturbation_far_beyond_the_column_is_refused_and_a_wide_one_is_not():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"km": rng.uniform(0, 10, 300), "age": rng.uniform(20, 60, 300)})
    y = 0.5 * X["km"] + rng.normal(0, 0.3, 300)
    fast = {"max_epochs": 2, "n_seeds": 1, "random_state": 0, "verbose": False}
    huge = dc.Monotonic("km", "increasing", perturbation=dc.rules.Additive(1e30))
    with pytest.raises(ValueError, match=r"moves 'km' by up to 1e\+30, more than 100 times the "):
        dc.DeepCTRLRegressor(rules=[huge], **fast).fit(X, y)
    tenfold = dc.Monotonic("age", "increasing", perturbation=dc.rules.Relative(100.0))
    with pytest.raises(ValueError, match="more than 100 times the column's training range"):
        dc.DeepCTRLRegressor(rules=[tenfold], **fast).fit(X, y)  # 60 years moved by 6,000
    wide = dc.Monotonic("km", "increasing", perturbation=dc.rules.Additive(900.0))
    dc.DeepCTRLRegressor(rules=[wide], **fast).fit(X, y)  # 90 ranges: allowed


def test_an_estimator_pickles_as_the_docs_say():
    import pickle

    rng = np.random.default_rng(1)
    X = pd.DataFrame({"price": rng.uniform(1, 9, 200), "ads": rng.uniform(0, 5, 200)})
    y = 20 - X["price"] + X["ads"] + rng.normal(0, 0.3, 200)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("price", "decreasing")], max_epochs=3, n_seeds=1, random_state=0
    ).fit(X, y)
    again = pickle.loads(pickle.dumps(est))
    for alpha in (0.0, 1.0):
        np.testing.assert_array_equal(again.predict(X, alpha=alpha), est.predict(X, alpha=alpha))
    assert again.judged_rows_ == est.judged_rows_ and again.summary() == est.summary()
