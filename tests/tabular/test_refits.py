"""Refitting in a notebook: a fit that fails or is interrupted leaves the estimator as it
was, and parameters set after a fit do not rewrite what the fit is said to have been."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

import deepctrl as dc
from deepctrl.tabular.estimator_base import DeepCTRLEstimator

FAST = {"max_epochs": 8, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def _table(n: int = 160, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 9, n), "rating": rng.uniform(0, 5, n)})
    return X, pd.Series(20 - 1.5 * X["price"] + X["rating"] + rng.normal(0, 0.3, n), name="y")


def _interrupt(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


def test_a_refit_that_fails_leaves_the_previous_model_whole():
    X, y = _table()
    model = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    before, mean = model.predict(X.head(5)), model.target_mean_.copy()
    model.set_params(rules=[dc.Monotonic("prise", "decreasing")])
    with pytest.raises(ValueError, match="prise"):
        model.fit(X, y * 100 + 7)  # in cents, with a typo in the rule
    np.testing.assert_array_equal(model.predict(X.head(5)), before)
    np.testing.assert_array_equal(model.target_mean_, mean)
    assert model.rule_ is not None and "price" in model.summary()


def test_an_interrupted_refit_on_another_table_leaves_the_previous_model_whole(monkeypatch):
    X, y = _table()
    model = dc.DeepCTRLRegressor(**FAST).fit(X, y)
    before = model.predict(X.head(5))
    other = X.rename(columns={"rating": "stars"}).assign(stock=1.0)
    monkeypatch.setattr(DeepCTRLEstimator, "_train", _interrupt)  # after the encoding
    with pytest.raises(KeyboardInterrupt):
        model.fit(other, y)
    assert list(model.feature_names_in_) == ["price", "rating"]
    np.testing.assert_array_equal(model.predict(X.head(5)), before)


def test_an_interrupted_first_fit_leaves_an_unfitted_estimator(monkeypatch):
    X, y = _table()
    model = dc.DeepCTRLClassifier(**FAST)
    monkeypatch.setattr(DeepCTRLEstimator, "_train", _interrupt)
    with pytest.raises(KeyboardInterrupt):
        model.fit(X, (y > y.median()).map({True: "high", False: "low"}))
    assert not [k for k in vars(model) if k.endswith("_")]
    with pytest.raises(NotFittedError):
        check_is_fitted(model)


def test_parameters_set_after_a_fit_wait_for_the_next_one(tmp_path):
    X, y = _table()
    model = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    summary, sweep = model.summary(), model.validation_sweep_
    model.set_params(
        rules=[dc.Monotonic("rating", "decreasing")],
        validation="cross_fit",
        loss="mae",
        alpha=0.6,
    )
    now = model.summary().splitlines()
    assert now[:-1] == summary.splitlines() and now[-1] == "predict uses alpha 0.6 (alpha=0.6)"
    assert "rules: monotonic(price, decreasing): y" in now
    assert model.primary_metric == "mse"  # the loss the fit chose alpha by
    loaded = dc.DeepCTRLRegressor.load(model.save(tmp_path / "m.deepctrl"))
    assert loaded.get_params()["validation"] == "holdout" and loaded.get_params()["loss"] == "mse"
    assert [r.feature for r in loaded.rules] == ["price"] and loaded.alpha == 0.6
    assert loaded.alpha_ == 0.6 and loaded.validation_sweep_ == sweep
    np.testing.assert_allclose(loaded.predict(X.head(5)), model.predict(X.head(5)), rtol=1e-6)
    assert loaded.verification_ratio(X, 0.0) == model.verification_ratio(X, 0.0)


def test_a_class_weight_changed_in_place_after_the_fit_is_not_saved(tmp_path):
    X, y = _table()
    labels = (y > y.median()).map({True: "high", False: "low"})
    weights = {"high": 1.0, "low": 2.0}
    model = dc.DeepCTRLClassifier(class_weight=weights, **FAST).fit(X, labels)
    weights["low"] = 50.0  # in place, after the fit
    loaded = dc.DeepCTRLClassifier.load(model.save(tmp_path / "m.deepctrl"))
    assert loaded.get_params()["class_weight"] == {"high": 1.0, "low": 2.0}


@pytest.mark.parametrize(
    "rules",
    [
        dc.Monotonic("price", "decreasing"),
        [dc.Monotonic("price", "decreasing")],
        dc.rules.AllOf([dc.Monotonic("price", "decreasing"), dc.Monotonic("q", "increasing")]),
        dc.rules.AllOf(
            [dc.Monotonic("price", "decreasing"), dc.Monotonic("q", "increasing")], [1.0, 2.0]
        ),
    ],
    ids=["a rule", "a list", "AllOf", "weighted AllOf"],
)
def test_rules_load_as_they_were_given(rules, tmp_path):
    X = pd.DataFrame({"price": np.linspace(1, 9, 60), "q": np.tile([0.0, 1.0], 30)})
    est = dc.DeepCTRLRegressor(rules=rules, max_epochs=1, n_seeds=1).fit(X, 10 - X.price)
    loaded = dc.DeepCTRLRegressor.load(est.save(tmp_path / "m.deepctrl"))
    assert loaded.rules == rules and type(loaded.rules) is type(rules)


class ShopRegressor(dc.DeepCTRLRegressor):
    """A user's subclass that adds a method."""

    def predict_rounded(self, X):
        return self.predict(X).round(2)


def test_a_subclass_saves_and_loads_as_itself_and_as_its_base(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 9, 60)})
    est = ShopRegressor(max_epochs=2, n_seeds=1).fit(X, 20 - X["price"].to_numpy())
    path = est.save(tmp_path / "shop.deepctrl")
    again = ShopRegressor.load(path)
    assert type(again) is ShopRegressor
    np.testing.assert_array_equal(again.predict_rounded(X), est.predict_rounded(X))
    base = dc.DeepCTRLRegressor.load(path)
    assert type(base) is dc.DeepCTRLRegressor
    np.testing.assert_array_equal(base.predict(X), est.predict(X))
    with pytest.raises(ValueError, match="holds a DeepCTRLRegressor, not a DeepCTRLClassifier"):
        dc.DeepCTRLClassifier.load(path)
