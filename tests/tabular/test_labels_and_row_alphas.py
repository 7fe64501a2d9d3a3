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
