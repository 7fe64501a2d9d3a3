"""validation="cross_fit": each network holds out its own fold, alpha is chosen out of fold."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.utils import check_random_state

import deepctrl as dc
import deepctrl.tabular.network_training as network_training
from deepctrl.tabular.alpha_choice import ALPHA_GRID

QUICK = {"max_epochs": 4, "batch_size": 16, "n_seeds": 3, "random_state": 7}


def table(n: int = 90, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "size": rng.uniform(0, 1, n)})
    y = 10 - X["price"] + 2 * X["size"] + rng.normal(0, 0.3, n)
    return X, y.rename("demand")


@pytest.fixture(scope="module")
def fitted_with_calls():
    """A cross-fitted regressor on 92 rows and what its `deepctrl.fit` calls got."""
    X, y = table(92)
    calls = []
    fit = network_training.training.fit

    def recording(*args, **kwargs):
        calls.append(kwargs)
        return fit(*args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(network_training.training, "fit", recording)
        est = dc.DeepCTRLRegressor(
            rules=[dc.Monotonic("price", "decreasing")], validation="cross_fit", **QUICK
        ).fit(X, y)
    return est, X, y, calls


def _rows(block) -> set[tuple[float, ...]]:
    return {tuple(r) for r in block.tolist()}


def test_the_networks_train_in_one_fit_each_on_every_fold_but_its_own(fitted_with_calls):
    est, X, _, calls = fitted_with_calls
    assert len(calls) == 1 and len(est.models_) == 3 and len(est.best_epochs_) == 3
    (call,) = calls
    assert call["val"] is None and call["desc"] == "DeepCTRLRegressor (3 folds)"
    assert len(call["seeds"]) == 3
    assert _rows(call["train"][0]) == _rows(est.encoder_.transform(X))
    folds = [set(f.tolist()) for f in call["folds"]]
    # 92 rows in 3 folds of 31, 31, 30: one row of each larger fold is cut, and the two cut
    # rows train every network
    assert [len(f) for f in folds] == [30, 30, 30]
    assert len(set.union(*folds)) == 90  # three disjoint folds of 30
    assert est.n_train_ == 92 and est.n_validation_ == 90


def test_the_sweep_scores_each_row_with_the_network_that_held_it_out(fitted_with_calls):
    est, X, y, _ = fitted_with_calls
    y_std = (y.to_numpy() - est.target_mean_[0]) / est.target_scale_[0]
    folds = est._equal_folds(len(X), y_std, 3, check_random_state(QUICK["random_state"]))
    models = est.models_
    error = 0.0
    for model, fold in zip(models, folds, strict=True):
        est.models_ = [model]
        error += float(((est.predict(X.iloc[fold], alpha=0.0) - y.iloc[fold]) ** 2).sum())
    est.models_ = models
    assert est.validation_sweep_["alpha"] == ALPHA_GRID
    assert est.validation_sweep_["mse"][0] == pytest.approx(error / 90, rel=1e-5)


def test_equal_folds_cut_the_larger_folds_at_random():
    est = dc.DeepCTRLRegressor()
    folds = est._equal_folds(23, np.zeros((23, 1)), 5, check_random_state(3))
    assert [len(f) for f in folds] == [4] * 5
    assert len(np.unique(np.concatenate(folds))) == 20
    assert all((np.diff(f) > 0).all() for f in folds)


def test_weighted_rows_weigh_the_out_of_fold_error():
    X, y = table(60, seed=1)
    w = np.random.default_rng(2).integers(1, 4, len(X)).astype(float)
    est = dc.DeepCTRLRegressor(validation="cross_fit", **QUICK).fit(X, y, sample_weight=w)
    y_std = (y.to_numpy() - est.target_mean_[0]) / est.target_scale_[0]
    folds = est._equal_folds(len(X), y_std, 3, check_random_state(QUICK["random_state"]))
    models, total = est.models_, 0.0
    for model, fold in zip(models, folds, strict=True):
        est.models_ = [model]
        residual = est.predict(X.iloc[fold], alpha=0.0) - y.iloc[fold].to_numpy()
        total += float((w[fold] * residual**2).sum())
    est.models_ = models
    assert est.validation_sweep_["mse"][0] == pytest.approx(total / w.sum(), rel=1e-5)


def test_summary_and_model_file_say_cross_fitted(fitted_with_calls, tmp_path):
    est, X, _, _ = fitted_with_calls
    summary = est.summary()
    assert "cross-fitted: 3 networks, each validated on its own fold" in summary
    assert "out-of-fold at alpha 0" in summary
    loaded = dc.DeepCTRLRegressor.load(est.save(tmp_path / "m.dcm"))
    assert loaded.validation == "cross_fit"
    np.testing.assert_array_equal(loaded.predict(X), est.predict(X))


def test_classifier_folds_are_stratified():
    est = dc.DeepCTRLClassifier()
    y = np.array([0] * 40 + [1] * 20)[:, None].astype(np.float32)
    folds = est._folds(60, y, 4, check_random_state(0))
    assert sorted(np.concatenate(folds).tolist()) == list(range(60))
    assert [int(y[f, 0].sum()) for f in folds] == [5, 5, 5, 5]


def test_classifier_folds_stay_stratified_with_a_rare_class():
    est = dc.DeepCTRLClassifier()
    y = np.array([0] * 54 + [1] * 20 + [2] * 6)[:, None].astype(np.float32)
    with warnings.catch_warnings():  # scikit-learn's warning of the 6-row class is not shown
        warnings.simplefilter("error")
        folds = est._folds(80, y, 8, check_random_state(0))
    assert sorted(np.concatenate(folds).tolist()) == list(range(80))
    counts = [np.bincount(y[f, 0].astype(int), minlength=3).tolist() for f in folds]
    assert all(c[1] in (2, 3) and c[2] <= 1 for c in counts)  # 20 over 8 folds, 6 over 6
    assert all(c[0] in (6, 7) for c in counts)
    two = np.array([0] * 58 + [1] * 2)[:, None].astype(np.float32)
    for seed in range(10):  # the two rows of a class are never held out together
        folds = est._folds(60, two, 5, check_random_state(seed))
        assert max(int(two[f, 0].sum()) for f in folds) == 1
    few = np.array([0, 0, 0, 1, 1, 1])[:, None].astype(np.float32)  # every class under k
    folds = est._folds(6, few, 4, check_random_state(0))
    assert sorted(np.concatenate(folds).tolist()) == list(range(6))


def test_cross_fitted_classifier_predicts_probabilities():
    X, y = table(80)
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("size", "increasing")], validation="cross_fit", **QUICK
    ).fit(X, y > y.median())
    proba = est.predict_proba(X)
    assert proba.shape == (80, 2) and np.allclose(proba.sum(axis=1), 1.0)
    assert len(est.validation_sweep_["accuracy"]) == len(ALPHA_GRID)


@pytest.mark.parametrize(
    ("params", "rows", "message"),
    [
        ({"n_seeds": 1}, 40, "needs n_seeds >= 2 (one fold each), got 1"),
        ({"n_seeds": 5}, 8, "needs at least 2 rows per fold: 8 rows, 5 folds"),
        ({"validation": "kfold"}, 40, "validation must be one of ('holdout', 'last', 'cross_fit')"),
    ],
)
def test_bad_cross_fit_settings_fail_with_one_message(params, rows, message):
    X, y = table(rows)
    settings = {**QUICK, "validation": "cross_fit", **params}
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        dc.DeepCTRLRegressor(**settings).fit(X, y)


def test_a_table_too_small_to_cross_fit_is_not_advised_to():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 9)})
    y = 2 * X["x"] + rng.normal(0, 0.1, 9)
    est = dc.DeepCTRLRegressor(rules=dc.Monotonic("x", "increasing"), max_epochs=2)
    with pytest.warns(
        UserWarning,
        match="with 9 rows there are too few for cross-fitting's 5 "
        "folds of 2 rows or more: gather more rows, or fix alpha",
    ):
        est.fit(X, y)
    with pytest.raises(ValueError, match=r"9 rows, 5 folds \(one per network: n_seeds=5"):
        dc.DeepCTRLRegressor(validation="cross_fit", max_epochs=2).fit(X, y)
