"""Labels of mixed types, a class that weighs nothing, and a per-row alpha given as a
pandas Series (matched to X's rows by index)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

import deepctrl as dc

FAST = {"max_epochs": 2, "n_seeds": 1, "random_state": 0}


def _table(n: int = 80) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.uniform(0, 10, n), "x2": rng.normal(size=n)})
    y = pd.Series(np.where(X.x1 + rng.normal(size=n) > 5, "yes", "no"), name="y")
    return X, y


@pytest.mark.filterwarnings("ignore:the default alpha will be chosen")
def test_a_per_row_alpha_series_is_matched_to_the_rows_by_index():
    X, y = _table()
    model = dc.DeepCTRLClassifier(rules=[dc.Monotonic("x1", "increasing")], **FAST).fit(X, y)
    strength = pd.Series(np.where(X.x1 > 5, 1.0, 0.0), index=X.index)
    shuffled = X.sample(frac=1, random_state=1)
    by_index = model.predict_proba(shuffled, alpha=strength)
    by_position = model.predict_proba(shuffled, alpha=strength.loc[shuffled.index].to_numpy())
    np.testing.assert_array_equal(by_index, by_position)
    high = X[X.x2 > 0]  # a filtered copy: the whole table's Series still fits it
    np.testing.assert_array_equal(
        model.predict_proba(high, alpha=strength),
        model.predict_proba(high, alpha=strength.loc[high.index].to_numpy()),
    )
    with pytest.raises(ValueError, match="a per-row alpha given as a Series must hold X's index"):
        model.predict_proba(shuffled, alpha=strength.set_axis(strength.index + 1000))
    with pytest.raises(ValueError, match="one value per row"):
        model.predict_proba(X, alpha=strength.loc[high.index])


@pytest.mark.filterwarnings("ignore:the default alpha will be chosen")
def test_an_alpha_series_beside_repeated_index_labels_names_them():
    X, y = _table()
    model = dc.DeepCTRLClassifier(rules=[dc.Monotonic("x1", "increasing")], **FAST).fit(X, y)
    batch = X.head(6).set_axis([0, 1, 2, 0, 1, 2])
    strength = pd.Series(np.linspace(0, 1, 6), index=batch.index)
    with pytest.raises(ValueError, match=r"X repeats index labels \(such as 2\), so a per-row"):
        model.predict_proba(batch.iloc[::-1], alpha=strength)


def test_float_classes_sent_as_their_float_text_are_found():
    """`astype(str)` writes the class 2.0 as "2.0": it finds its class in the sweep's
    errors, as "2" does."""
    X, y = _table()
    codes = (y == "yes").map({True: 2.0, False: 0.0})
    model = dc.DeepCTRLClassifier(**FAST).fit(X, codes)
    as_text = model.sweep(X, codes.astype(str), alphas=[0.0])
    pd.testing.assert_frame_equal(as_text, model.sweep(X, codes, alphas=[0.0]))


@pytest.mark.parametrize("as_series", [False, True])
def test_labels_mixing_numbers_and_text_are_one_clear_error(as_series):
    X, _ = _table(6)
    labels = np.array([0, "yes", 0, "yes", 1, "no"], dtype=object)
    y = pd.Series(labels) if as_series else labels
    with pytest.raises(ValueError, match=r"^y mixes numbers and text \(such as 0 and 'yes'\)"):
        dc.DeepCTRLClassifier(**FAST).fit(X, y)


def test_a_class_of_zero_total_weight_is_warned_about():
    X, y = _table()
    weight = np.where(y == "yes", 0.0, 1.0)
    with pytest.warns(UserWarning, match="class 'yes' has a total sample weight of 0"):
        dc.DeepCTRLClassifier(**FAST).fit(X, y, sample_weight=weight)


def test_two_rules_on_the_two_classes_of_a_binary_target_say_why_they_clash():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x1": rng.normal(size=200)})
    y = np.where(X["x1"] + rng.normal(size=200) > 0, "yes", "no")
    why = "(P('no') = 1 - P('yes'): a rule on one of two classes is the opposite rule on the other)"
    for direction, says in (
        ("increasing", "cannot both rise and fall with 'x1' "),
        ("decreasing", "say the same of 'x1' and P('yes') "),
    ):
        rules = [
            dc.Monotonic("x1", "increasing", output="yes"),
            dc.Monotonic("x1", direction, output="no"),
        ]
        with pytest.raises(ValueError) as caught:
            dc.DeepCTRLClassifier(rules=rules, max_epochs=1).fit(X, y)
        assert says + why in str(caught.value)


def test_a_class_taken_from_classes_names_the_rules_class(tmp_path):
    # with boolean labels classes_ holds np.True_, which a rule takes as the class True
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(0, 1, 120)})
    late = X["price"].to_numpy() + rng.normal(0, 0.3, 120) > 0.5
    first = dc.DeepCTRLClassifier(**FAST).fit(X, late)
    rule = dc.Monotonic("price", "increasing", output=first.classes_[1])
    assert rule.output is True
    est = dc.DeepCTRLClassifier(rules=[rule], device=torch.device("cpu"), **FAST).fit(X, late)
    est.save(tmp_path / "m.deepctrl")  # a torch.device is written as its name
    loaded = dc.DeepCTRLClassifier.load(tmp_path / "m.deepctrl")
    assert loaded.get_params()["device"] == "cpu"
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_the_log_loss_of_confidently_wrong_rows_is_scikit_learns():
    # a probability of 1e-26 for a row's class costs 36 (float64 clipping), not 16
    from sklearn.metrics import log_loss

    X = pd.DataFrame({"x": np.linspace(0, 1, 40)})
    est = dc.DeepCTRLClassifier(**FAST).fit(X, np.repeat([0, 1], 20))
    logits = torch.tensor([[-60.0], [40.0], [0.3], [-0.2]], dtype=torch.float64)
    labels = torch.tensor([1, 0, 1, 0])
    got = est._metrics(logits, labels)["bce"]
    want = log_loss(labels.numpy(), est._proba(logits.numpy()), labels=[0, 1])
    assert got == pytest.approx(want, rel=1e-12)
    assert got == pytest.approx((2 * 36.04365338911715 + 0.554355 + 0.598139) / 4, rel=1e-5)


def test_one_alpha_per_row_where_one_alpha_is_taken_is_one_short_line():
    X = pd.DataFrame({"x": np.linspace(0, 1, 600)})
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing")], **FAST)
    est.fit(X, X["x"].to_numpy())
    with pytest.raises(ValueError) as error:
        est.verification_ratio(X, alpha=np.zeros(600))
    assert str(error.value) == (
        "alpha must be a finite number, 'auto' or 'min_error', got ndarray of 600 values (one "
        "alpha per row is for predict and predict_proba)"
    )
