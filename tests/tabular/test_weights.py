"""Row weights in the estimators: sample_weight, class_weight, and their routing through
Pipeline and GridSearchCV."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import sklearn
import torch
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

import deepctrl as dc

FAST = {"max_epochs": 10, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def table(n: int = 240, seed: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "quality": rng.uniform(0, 1, n)})
    return X, pd.Series(10 - X["price"] + 2 * X["quality"] + rng.normal(0, 0.3, n), name="y")


def test_weighted_validation_metrics_equal_repeated_rows():
    X, y = table()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    w = np.arange(len(X)) % 4  # 0, 1, 2, 3, ...
    repeated = X.loc[X.index.repeat(w)], y.loc[y.index.repeat(w)]

    def metrics(X, y, w=None):
        return est._metrics(
            torch.from_numpy(est._model_outputs(X, 0.5)), torch.tensor(y.to_numpy()[:, None]), w
        )

    weighted = metrics(X, y, torch.from_numpy(w))
    assert weighted == pytest.approx(metrics(*repeated), rel=1e-12)


def test_rows_of_weight_zero_have_no_influence():
    X, y = table()
    w = np.where(np.arange(len(X)) % 3 == 0, 0.0, 1.5)
    noisy = y.where(w > 0, 1e3)  # the zero-weight rows' targets are nonsense
    rule = [dc.Monotonic("price", "decreasing")]
    a = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y, sample_weight=w)
    b = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, noisy, sample_weight=w)
    np.testing.assert_array_equal(a.predict(X), b.predict(X))
    assert a.target_mean_ == pytest.approx(np.average(y, weights=w))


def test_rows_of_weight_zero_are_left_out_as_if_absent_also_from_the_encoding():
    X, y = table()
    sentinels = pd.DataFrame({"price": [1e6] * 5, "quality": [0.5] * 5})
    X_all = pd.concat([X, sentinels], ignore_index=True)
    y_all = pd.concat([y, pd.Series([0.0] * 5, name="y")], ignore_index=True)
    w = np.r_[np.ones(len(X)), np.zeros(5)]
    rule = [dc.Monotonic("price", "decreasing")]
    weighted = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X_all, y_all, sample_weight=w)
    without = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y)
    np.testing.assert_array_equal(weighted.predict(X), without.predict(X))
    assert weighted.alpha_ == without.alpha_ and weighted.n_train_ == without.n_train_


def test_rows_of_weight_zero_are_not_counted_in_balanced_class_weights():
    X, y = table()
    labels = np.where(y > y.median(), "high", "low")
    w = np.where((labels == "low") & (np.arange(len(X)) % 5 < 3), 0.0, 1.0)  # most lows away
    kept = w > 0
    balanced = {**FAST, "class_weight": "balanced"}
    weighted = dc.DeepCTRLClassifier(**balanced).fit(X, labels, sample_weight=w)
    without = dc.DeepCTRLClassifier(**balanced).fit(X[kept].reset_index(drop=True), labels[kept])
    np.testing.assert_array_equal(weighted.predict_proba(X), without.predict_proba(X))


def test_a_class_rare_among_the_rows_that_train_is_warned_about():
    X, y = table()
    labels = np.where(y > y.median(), "high", "low")
    w = np.where(labels == "low", 0.0, 1.0)
    w[np.flatnonzero(labels == "low")[:3]] = 1.0  # 3 of the 120 lows train
    with pytest.warns(UserWarning, match=r"class 'low' has 3 of 123 rows, too few to learn"):
        dc.DeepCTRLClassifier(**FAST).fit(X, labels, sample_weight=w)


def test_equal_weights_train_as_no_weights():
    X, y = table()
    rule = [dc.Monotonic("price", "decreasing")]
    plain = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y)
    equal = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y, sample_weight=np.full(len(X), 2.0))
    np.testing.assert_array_equal(plain.predict(X), equal.predict(X))


def test_only_the_ratios_of_rule_weights_count():
    X, y = table()
    rules = [dc.Monotonic("price", "decreasing"), dc.Monotonic("quality", "increasing")]

    def predictions(rules):
        est = dc.DeepCTRLRegressor(rules=rules, **FAST).fit(X, y)
        return np.stack([est.predict(X, alpha=a) for a in (0.0, 0.5, 1.0)])

    np.testing.assert_array_equal(
        predictions(dc.rules.AllOf(rules, [1.0, 2.0])),
        predictions(dc.rules.AllOf(rules, [2.0, 4.0])),
    )
    np.testing.assert_array_equal(
        predictions(rules[:1]), predictions(dc.rules.AllOf(rules[:1], [0.5]))
    )
    unequal = predictions(dc.rules.AllOf(rules, [1.0, 2.0]))
    assert np.abs(unequal - predictions(rules)).max() > 1e-3  # the ratio itself does count


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (np.full(240, -1.0), "Negative values in data passed to .sample_weight."),
        (np.ones(10), "sample_weight.shape == \\(10,\\), expected \\(240,\\)"),
        (np.zeros(240), "the sample weights are all zero"),  # in every scikit-learn
    ],
)
def test_bad_weights_are_refused(weights, message):
    X, y = table()
    with pytest.raises(ValueError, match=message):
        dc.DeepCTRLRegressor(**FAST).fit(X, y, sample_weight=weights)


def rare_events(n: int = 1500, seed: int = 1) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"dose": rng.uniform(0, 1, n), "age": rng.uniform(20, 80, n)})
    logit = -6.5 + 6 * X["dose"] + rng.logistic(0, 0.5, n)
    return X, np.where(logit > 0, "event", "none")


def test_balanced_classes_predict_the_rare_class():
    X, y = rare_events()
    assert 0.02 < (y == "event").mean() < 0.06
    kw = {**FAST, "max_epochs": 30}
    with pytest.warns(UserWarning, match="is predicted for none") as seen:
        plain = dc.DeepCTRLClassifier(**kw).fit(X, y)
    (said,) = [str(w.message) for w in seen if "is predicted for none" in str(w.message)]
    assert said.startswith(
        f"class 'event' is predicted for none of the {plain.n_validation_} validation rows at "
        f"alpha {plain.alpha_:g}, though "
    )
    assert said.endswith(
        "class_weight='balanced' (deepctrl fit --class-weight balanced) weighs the classes alike"
    )
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=".*is predicted for none")
        balanced = dc.DeepCTRLClassifier(class_weight="balanced", **kw).fit(X, y)
    events = y == "event"
    recall = (balanced.predict(X)[events] == "event").mean()
    assert recall > 0.7 > (plain.predict(X)[events] == "event").mean()
    # a dict of class weights is the same as those weights given per row
    by_class = dc.DeepCTRLClassifier(class_weight={"event": 10.0, "none": 1.0}, **FAST).fit(X, y)
    per_row = dc.DeepCTRLClassifier(**FAST).fit(X, y, sample_weight=np.where(events, 10.0, 1.0))
    np.testing.assert_array_equal(by_class.predict_proba(X), per_row.predict_proba(X))
    with pytest.raises(ValueError, match="class_weight names 'boom', which is not a class"):
        dc.DeepCTRLClassifier(class_weight={"boom": 2.0}, **FAST).fit(X, y)
    with pytest.raises(ValueError, match=r"names 'Event', .*; did you mean 'event'\?"):
        dc.DeepCTRLClassifier(class_weight={"Event": 2.0}, **FAST).fit(X, y)
    with pytest.raises(ValueError, match=r"output 'Event' is not a class .*; did you mean 'event'"):
        rule = dc.Monotonic(X.columns[0], "increasing", output="Event")
        dc.DeepCTRLClassifier(rules=[rule], **FAST).fit(X, y)
    codes = np.where(events, 1, 0)  # whole-number labels named by their text, as rules do
    by_text = dc.DeepCTRLClassifier(class_weight={"1": 10.0}, **FAST).fit(X, codes)
    by_number = dc.DeepCTRLClassifier(class_weight={1: 10.0}, **FAST).fit(X, codes)
    np.testing.assert_array_equal(by_text.predict_proba(X), by_number.predict_proba(X))


def test_sample_weight_passes_through_pipeline_and_grid_search():
    X, y = table()
    w = 1.0 + (np.arange(len(X)) % 5)
    direct = dc.DeepCTRLRegressor(**FAST).fit(X, y, sample_weight=w).predict(X)
    pipe = Pipeline([("model", dc.DeepCTRLRegressor(**FAST))])
    np.testing.assert_array_equal(pipe.fit(X, y, model__sample_weight=w).predict(X), direct)
    search = GridSearchCV(dc.DeepCTRLRegressor(**FAST), {"beta": [0.1]}, cv=2)
    search.fit(X, y, sample_weight=w)  # passed to fit without metadata routing
    with sklearn.config_context(enable_metadata_routing=True):
        routed = dc.DeepCTRLRegressor(**FAST).set_fit_request(sample_weight=True)
        routed.set_score_request(sample_weight=True)  # the folds are scored weighted too
        search = GridSearchCV(routed, {"beta": [0.1]}, cv=2, refit=True)
        search.fit(X, y, sample_weight=w)
        np.testing.assert_array_equal(search.best_estimator_.predict(X), direct)


@pytest.mark.parametrize("labels", [np.array([0, 1]), np.array([False, True])])
def test_class_weights_and_numpy_sizes_survive_a_model_file(labels, tmp_path):
    X, y = table()
    classes = labels[(y > y.median()).astype(int).to_numpy()]
    weights = {np.unique(labels)[0]: 1.0, np.unique(labels)[1]: 3.0}  # numpy keys
    est = dc.DeepCTRLClassifier(
        class_weight=weights, hidden_size=np.int64(16), **{**FAST, "max_epochs": 3}
    ).fit(X, classes)
    again = dc.DeepCTRLClassifier.load(est.save(tmp_path / "m.safetensors"))
    assert again.class_weight == {labels[0].item(): 1.0, labels[1].item(): 3.0}
    assert again.hidden_size == 16 and again.network_["hidden"] == 16
    np.testing.assert_array_equal(again.predict_proba(X), est.predict_proba(X))
    refit = sklearn.base.clone(again).fit(X, classes)
    np.testing.assert_array_equal(refit.predict_proba(X), est.predict_proba(X))


def test_negative_class_weights_are_named():
    X, y = table()
    labels = (y > y.median()).astype(int)
    with pytest.raises(ValueError, match="class_weight must give every class a finite weight"):
        dc.DeepCTRLClassifier(class_weight={0: -1.0, 1: 1.0}, **FAST).fit(X, labels)


def test_sweep_and_select_alpha_weigh_the_errors_as_fit_does():
    """A sweep with weights equals the sweep of the rows repeated as often as their weight
    (the verification ratio aside: it counts rows), and select_alpha picks on it."""
    X, y = table()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    w = np.arange(len(X)) % 4
    repeated = X.loc[X.index.repeat(w)], y.loc[y.index.repeat(w)]
    weighted = est.sweep(X, y, [0.0, 0.5, 1.0], sample_weight=w)
    plain = est.sweep(*repeated, [0.0, 0.5, 1.0])
    for metric in ("mse", "mae"):
        assert weighted[metric].tolist() == pytest.approx(plain[metric].tolist(), rel=1e-9)
    at_zero = est.predict(X, alpha=0.0)
    assert weighted["mse"][0] == pytest.approx(np.average((at_zero - y) ** 2, weights=w), rel=1e-6)
    grid = [0.0, 0.5, 1.0]
    alpha = est.select_alpha(X, y, alphas=grid, objective="min_error", sample_weight=w)
    assert alpha == grid[int(np.argmin(weighted["mse"]))]
    with pytest.raises(ValueError, match="sample_weight weighs the error metrics: give y"):
        est.sweep(X, sample_weight=w)


def test_a_rule_test_does_not_advise_refitting_with_class_weights():
    """A rule test's fold that never predicts the rare class says the verdict does not need
    it, instead of pointing to `deepctrl fit --class-weight`."""
    X, y = rare_events()
    rule = dc.Monotonic(X.columns[0], "increasing", output="event")
    est = dc.DeepCTRLClassifier(rules=[rule], **{**FAST, "max_epochs": 3})
    with pytest.warns(UserWarning, match="is predicted for none") as seen:
        dc.rule_test(est, X, pd.Series(y), folds=2, progress=False)
    said = [str(w.message) for w in seen if "is predicted for none" in str(w.message)]
    assert said and all(
        s.endswith(
            "the verdicts compare held-out log losses, which do not need the class to be predicted"
        )
        and "--class-weight" not in s
        for s in said
    )
