"""What a user hands the estimators and what they answer: column references, labels and
alphas that are refused with one clear line, inputs read the way scikit-learn reads them,
and a summary that names what the model uses."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

import deepctrl as dc

pl = pytest.importorskip("polars")
FAST = {"max_epochs": 4, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def _sales(n: int = 120) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "ads": rng.uniform(0, 5, n)})
    return X, 20 - 1.5 * X["price"].to_numpy() + X["ads"].to_numpy() + rng.normal(0, 0.3, n)


def test_an_integer_that_is_a_position_and_another_columns_name_is_refused():
    X, y = _sales()
    numbered = X.set_axis([1, 2], axis=1)  # a frame whose first column was dropped
    falling = dc.Monotonic(1, "decreasing")
    with pytest.raises(ValueError, match=r"column 1 is ambiguous: position 1 is column '2', and"):
        dc.DeepCTRLRegressor(rules=[falling], **FAST).fit(numbered, y)
    by_name = dc.DeepCTRLRegressor(rules=[dc.Monotonic("1", "decreasing")], **FAST)
    assert "rules: monotonic(1, decreasing): y" in by_name.fit(numbered, y).summary()
    # labels that equal the positions mean the same column either way
    est = dc.DeepCTRLRegressor(rules=[falling], **FAST).fit(X.set_axis([0, 1], axis=1), y)
    assert "monotonic(1, decreasing) on '1': y" in est.summary()


def test_the_summary_names_a_column_given_by_position():
    X, y = _sales()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(0, "decreasing")], **FAST)
    assert "rules: monotonic(0, decreasing) on 'x0': y" in est.fit(X.to_numpy(), y).summary()


def test_missing_class_labels_are_refused_in_one_line():
    X = pd.DataFrame({"a": np.arange(8.0)})
    y = pd.Series(["x", "y", None, "x", "y", "x", np.nan, "x"])
    with pytest.raises(ValueError, match=r"y has 2 missing class label\(s\) \(first at row 2;"):
        dc.DeepCTRLClassifier(**FAST).fit(X, y)
    with pytest.raises(ValueError, match=r"y has only 1 class \('late'\); a classifier needs"):
        dc.DeepCTRLClassifier(**FAST).fit(X, np.array(["late"] * 8))


@pytest.mark.parametrize("blank", ["", "  "])
def test_blank_class_labels_are_missing_labels(blank):
    X = pd.DataFrame({"x": np.arange(40.0)})
    y = np.where(X["x"] > 20, "late", "ontime").astype(object)
    y[7] = blank
    with pytest.raises(ValueError, match=r"y has 1 missing class label\(s\) \(first at row 7;"):
        dc.DeepCTRLClassifier(**FAST).fit(X, y)


def test_a_frame_given_to_a_model_fitted_on_an_array_is_read_by_position():
    X, y = _sales()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(0, "decreasing")], **FAST).fit(X.values, y)
    with pytest.warns(UserWarning, match="X has feature names"):
        from_frame = est.predict(X.set_axis(["p", "q"], axis=1), alpha=1.0)
    np.testing.assert_array_equal(from_frame, est.predict(X.values, alpha=1.0))
    with pytest.raises(ValueError, match="X has 1 features"):
        est.predict(X[["price"]])


def test_a_column_of_python_numbers_is_numeric():
    X, y = _sales()
    rule = [dc.Monotonic("price", "decreasing")]
    as_objects = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X.astype({"price": object}), y)
    as_floats = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y)
    assert as_objects.encoder_.n_encoded == 2
    np.testing.assert_array_equal(as_objects.predict(X), as_floats.predict(X))


def test_target_names_come_from_polars_and_pandas_alike():
    X, y = _sales()
    est = dc.DeepCTRLRegressor(**FAST).fit(X, pl.Series("sales", y))
    assert est.output_names_ == ["sales"]
    targets = pl.DataFrame({"a": y, "b": -y})
    rule = dc.Monotonic("price", "increasing", output="b")
    two = dc.DeepCTRLRegressor(rules=[rule], **FAST).fit(X, targets)
    assert two.output_names_ == ["a", "b"]
    assert "monotonic(price, increasing, on 'b'): b" in two.summary()
    clf = dc.DeepCTRLClassifier(**FAST).fit(X, pl.Series("high", y > np.median(y)))
    assert clf.target_name_ == "high"


def test_saving_an_unfitted_model_says_it_is_not_fitted(tmp_path):
    with pytest.raises(NotFittedError):
        dc.DeepCTRLClassifier().save(tmp_path / "m.deepctrl")


def test_an_alpha_below_zero_is_refused_everywhere():
    X, y = _sales()
    with pytest.raises(ValueError, match=r"alpha must be >= 0 \(0 follows the data, 1 the rule\)"):
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], alpha=-0.5).fit(X, y)
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    with pytest.raises(ValueError, match="alpha must be >= 0 .*got -0.1"):
        est.predict(X, alpha=-0.1)
    with pytest.raises(ValueError, match="a per-row alpha must be >= 0: row 3 has -1"):
        est.predict(X, alpha=np.r_[0.0, 0.5, 1.0, -1.0, np.zeros(len(X) - 4)])
    with pytest.raises(ValueError, match="every alpha must be >= 0"):
        est.sweep(X, y, alphas=[0.0, -1.0])
    # a 0-d array is its number; above 1 extrapolates and is kept
    np.testing.assert_array_equal(est.predict(X, alpha=np.array(0.5)), est.predict(X, alpha=0.5))
    assert est.resolve_alpha(1.5) == 1.5


def test_one_number_for_alphas_asks_for_a_list_and_arrays_are_alphas():
    X, y = _sales()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    calls = [
        lambda a: est.sweep(X, y, alphas=a),
        lambda a: est.select_alpha(X, y, alphas=a),
        lambda a: est.alpha_for_verification(X, 0.5, alphas=a),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=r"alphas must be a sequence .*give \[0.5\]"):
            call(0.5)
        # a grid takes numbers only: its message offers no 'auto' or 'min_error'
        for bad in (float("nan"), float("inf"), "auto"):
            with pytest.raises(ValueError) as caught:
                call([0.0, bad])
            assert str(caught.value) == f"every alpha must be a finite number, got {bad!r}"
    listed = est.sweep(X, y, alphas=[0.0, 0.5])
    pd.testing.assert_frame_equal(est.sweep(X, y, alphas=np.array([0.0, 0.5])), listed)
    pd.testing.assert_frame_equal(est.sweep(X, y, alphas=torch.tensor([0.0, 0.5])), listed)
    tensors = [torch.tensor(0.0), torch.tensor(0.5)]  # a list of 0-d tensors, as dc.sweep takes
    pd.testing.assert_frame_equal(est.sweep(X, y, alphas=tensors), listed)
    np.testing.assert_array_equal(est.predict(X, alpha=torch.tensor(0.5)), est.predict(X, 0.5))


def test_the_summary_says_which_alpha_predict_uses():
    X, y = _sales()
    rule = [dc.Monotonic("price", "decreasing")]
    fixed = dc.DeepCTRLRegressor(rules=rule, alpha=0.37, **FAST).fit(X, y)
    assert fixed.summary().splitlines()[-1] == "predict uses alpha 0.37 (alpha=0.37)"
    chosen = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y)
    assert "predict uses" not in chosen.summary()
    chosen.select_alpha(X, y, alphas=[0.123])
    assert chosen.summary().splitlines()[-1] == "predict uses alpha 0.123 (chosen by select_alpha)"


def test_exporting_a_model_fitted_on_an_array_warns_of_nothing(tmp_path, recwarn):
    pytest.importorskip("onnxruntime")
    X, y = _sales()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(0, "decreasing")], **FAST)
    est.set_params(validation_fraction=0.3).fit(X.values, y)  # 36 validation rows: no warning
    est.to_onnx(tmp_path / "m.onnx", X.values[:20])
    assert [str(w.message) for w in recwarn] == []


def test_a_bad_date_and_an_unseen_class_are_named():
    X = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=60).strftime("%Y-%m-%d")})
    X["x"] = np.arange(60.0)
    y = pd.Series(np.where(X["x"] > 30, "late", "ontime"), name="status")
    est = dc.DeepCTRLClassifier(**FAST).fit(X, y)
    bad = X.assign(day=["2024-02-01", "soon", *X["day"][2:]])
    with pytest.raises(ValueError, match=r"column 'day' holds a value that is not an ISO 8601 "):
        est.predict(bad)
    with pytest.raises(ValueError, match=r"date: 'soon' \(row 1\)$"):
        est.predict(bad)
    with pytest.raises(ValueError, match=r"^y \(column 'status'\) has 1 rows with classes not"):
        est.sweep(X, y.where(X["x"] != 5, "lost"))
    # labels of another type than the model's classes: named, not a comparison TypeError
    numbers = pd.Series(np.where(X["x"] > 30, 1, 0), name="status")
    message = r"has 60 rows with classes not seen in training, e\.g\. 0 \(the model's classes"
    with pytest.raises(ValueError, match=message):
        est.sweep(X, numbers)
    as_text = pd.Series(y.to_numpy(), name="status", dtype=object)
    assert est.sweep(X, as_text, [0.0])["accuracy"][0] == est.sweep(X, y, [0.0])["accuracy"][0]
    regressor = dc.DeepCTRLRegressor(**FAST).fit(X[["x"]], X["x"])
    with pytest.raises(ValueError, match=r"^y \(column 'status'\) holds text \('late'\), but a"):
        regressor.sweep(X[["x"]], y.sort_values(ascending=True))
    for labels in (["late"] * len(X), np.array(["late"] * len(X))):  # unnamed: a list, an array
        with pytest.raises(ValueError, match=r"^y holds text \('late'\), but a regressor"):
            dc.DeepCTRLRegressor(**FAST).fit(X[["x"]], labels)


def test_set_params_alpha_on_a_fitted_estimator_is_the_alpha_predict_uses():
    X, y = _sales()
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    at_one = est.predict(X, alpha=1.0)
    assert est.set_params(alpha=1.0) is est and est.alpha_ == 1.0
    np.testing.assert_array_equal(est.predict(X), at_one)
    est.set_params(alpha="min_error")
    assert est.alpha_ == est.min_error_alpha_
    with pytest.raises(ValueError, match="alpha"):
        est.set_params(alpha=-1.0)
    assert est.alpha == "min_error" and est.get_params()["alpha"] == "min_error"  # unchanged
    unfitted = dc.DeepCTRLRegressor().set_params(alpha=0.5)
    assert unfitted.alpha == 0.5 and not hasattr(unfitted, "alpha_")


def test_assigning_alpha_on_a_fitted_estimator_is_set_params(tmp_path):
    X, y = _sales()
    rule = [dc.Monotonic("price", "decreasing")]
    est = dc.DeepCTRLRegressor(rules=rule, alpha=0.3, **FAST).fit(X, y)
    at_new = est.predict(X, alpha=0.37)
    est.alpha = 0.37
    assert est.alpha_ == 0.37 and est.get_params()["alpha"] == 0.37
    np.testing.assert_array_equal(est.predict(X), at_new)
    assert est.summary().splitlines()[-1] == "predict uses alpha 0.37 (alpha=0.37)"
    back = dc.DeepCTRLRegressor.load(est.save(tmp_path / "m.deepctrl"))
    assert (back.alpha, back.alpha_) == (0.37, 0.37)
    np.testing.assert_array_equal(back.predict(X), at_new)
    est.alpha = "min_error"
    assert est.alpha_ == est.min_error_alpha_
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        est.alpha = -1.0
    assert (est.alpha, est.alpha_) == ("min_error", est.min_error_alpha_)  # both unchanged
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        est.set_params(alpha=-1.0, beta=0.5)
    assert est.beta == 0.1  # a bad alpha sets no parameter
    chosen = est.select_alpha(X, y, alphas=[0.25])  # sets alpha_ and leaves alpha
    assert (est.alpha, est.alpha_, chosen) == ("min_error", 0.25, 0.25)
    again = pickle.loads(pickle.dumps(est))
    assert (again.alpha, again.alpha_) == ("min_error", 0.25)
    earlier = dict(est.__getstate__())  # as pickled before alpha was a property
    earlier["alpha"] = earlier.pop("_alpha")
    old = dc.DeepCTRLRegressor.__new__(dc.DeepCTRLRegressor)
    old.__setstate__(earlier)
    assert (old.alpha, old.alpha_, "alpha" in vars(old)) == ("min_error", 0.25, False)
    twin = clone(est)
    assert twin.alpha == "min_error" and not hasattr(twin, "alpha_")
    twin.alpha = -1.0  # unfitted: checked by fit, as scikit-learn does
    with pytest.raises(ValueError, match="alpha must be >= 0"):
        twin.fit(X, y)


def test_labels_recoded_by_a_meta_estimator_get_a_hint():
    X, y = _sales()
    recoded = (y > np.median(y)).astype(int)  # what cross_val_predict hands the estimator
    named = dc.DeepCTRLClassifier(rules=[dc.Monotonic("price", "decreasing", output="high")])
    with pytest.raises(
        ValueError,
        match=r"may have recoded the labels.*\(output=0 for the first, output=1 for the second\)",
    ):
        named.set_params(**FAST).fit(X, recoded)


@pytest.mark.parametrize(("dtype", "label"), [("boolean", True), ("Int64", 1)])
def test_nullable_targets_keep_their_labels(dtype, label):
    X, y = _sales()
    target = pd.Series(y > np.median(y), dtype="boolean").astype(dtype)
    rule = dc.Monotonic("price", "decreasing", output=label)
    est = dc.DeepCTRLClassifier(rules=[rule], **FAST).fit(X, target)
    assert est.classes_.tolist() == [0, 1] and type(est.classes_[1].item()) is type(label)
    assert type(est.predict(X)[0].item()) is type(label)


def test_an_integer_output_of_a_classifier_with_whole_number_classes_names_a_label():
    X, y = _sales()
    classes = np.array([1, 2, 5])[np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))]
    by_label = dc.DeepCTRLClassifier(rules=[dc.Monotonic("price", "decreasing", output=5)])
    assert "on 5): P('5')" in by_label.set_params(**FAST).fit(X, classes).summary()
    by_position = dc.DeepCTRLClassifier(rules=[dc.Monotonic("price", "decreasing", output=0)])
    with pytest.raises(ValueError, match=r"\(classes: 1, 2, 5\); with whole-number classes"):
        by_position.set_params(**FAST).fit(X, classes)


def test_a_default_alpha_chosen_on_few_rows_is_warned_about():
    X, y = _sales(60)
    few = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST)
    with pytest.warns(UserWarning, match="chosen on only 12 validation rows, so how well"):
        few.fit(X, y)
    with pytest.warns(UserWarning, match="chosen on the training rows, so how well"):
        few.set_params(validation_fraction=0.0).fit(X, y)
    # rows in time order: cross-fitting would give up validating on the latest rows
    with pytest.warns(UserWarning, match=r"uncertain; a larger validation_fraction \(--val-fr"):
        few.set_params(validation="last").fit(X, y)
    with warnings.catch_warnings():  # without rules, cross-fitted, or alpha fixed: nothing
        warnings.simplefilter("error")
        dc.DeepCTRLRegressor(**FAST).fit(X, y)
        few.set_params(validation_fraction=0.2, alpha=1.0).fit(X, y)
        few.set_params(validation="cross_fit", n_seeds=2, alpha="auto").fit(X, y)


def test_a_validation_fraction_that_leaves_almost_nothing_to_train_on():
    X = pd.DataFrame({"x": np.arange(100.0)})
    y = X["x"] * 2
    with pytest.raises(ValueError, match=r"validation_fraction=0.995 leaves 0 of 100 rows to"):
        dc.DeepCTRLRegressor(**FAST, validation_fraction=0.995).fit(X, y)
    with pytest.warns(UserWarning, match="trains on 30 rows and validates on 70: fewer rows"):
        est = dc.DeepCTRLRegressor(**FAST, validation_fraction=0.7).fit(X, y)
    assert est.n_validation_ == 70
    labels = np.where(X["x"] > 50, "hi", "lo")
    with pytest.raises(ValueError, match=r"leaves 1 of 100 rows to train on"):
        dc.DeepCTRLClassifier(**FAST, validation_fraction=0.99).fit(X, labels)


def test_verification_ratios_are_exact_shares_of_rows():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x": rng.uniform(1, 2, 300)})  # no zeros: every row is judged
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "decreasing")], **FAST)
    est.fit(X, X["x"] * 3 + rng.normal(0, 0.1, 300))
    for alpha in (0.0, 0.5, 1.0):
        ratio = est.verification_ratio(X, alpha=alpha)
        assert abs(ratio * 300 - round(ratio * 300)) < 1e-9  # k of 300 rows, no float32 residue
    table = est.sweep(X, alphas=[0.0, 1.0])
    assert all(abs(r * 300 - round(r * 300)) < 1e-9 for r in table["verification_ratio"])


def test_a_lazy_frame_is_asked_to_be_collected():
    X, y = _sales()
    with pytest.raises(ValueError, match=r"X is a lazy frame \(polars LazyFrame\).*X.collect\(\)"):
        dc.DeepCTRLRegressor(**FAST).fit(pl.from_pandas(X).lazy(), y)


def test_cells_holding_records_are_named():
    X = pd.DataFrame({"price": np.arange(20.0), "meta": [{"a": 1}] * 20})
    with pytest.raises(ValueError, match="X: column 'meta' holds records, not single values"):
        dc.DeepCTRLRegressor(**FAST).fit(X, np.arange(20.0))


def test_rare_classes_and_labels_that_differ_only_in_spaces_or_case_are_warned_about():
    X, y = _sales(200)
    labels = np.where(y > np.median(y), "yes", "no").astype(object)
    labels[0], labels[1] = " yes", "Yes"
    with pytest.warns(UserWarning) as seen:
        dc.DeepCTRLClassifier(class_weight="balanced", **FAST).fit(X, labels)
    messages = [str(w.message) for w in seen]
    assert (
        "class ' yes' has 1 of 200 rows, too few to learn or to validate on; with "
        "class_weight='balanced' each of its rows weighs as much as 50 average rows: merge it "
        "into another class or drop its rows"
    ) in messages
    assert (
        "classes ' yes' and 'Yes' and 'yes' differ only in spaces or case, so they are "
        "different classes: write each label one way"
    ) in messages
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # five rows of every class: no warning
        labels = np.where(y > np.median(y), "yes", "no")
        dc.DeepCTRLClassifier(**FAST).fit(X, labels)


def test_a_label_written_with_its_accents_as_separate_marks_is_one_class():
    X, y = _sales(200)
    composed, marks = "K\u00f6ln", "Ko\u0308ln"  # alike to the eye, as macOS writes the second
    labels = np.where(y > np.median(y), composed, "Bonn").astype(object)
    labels[:30][labels[:30] == composed] = marks
    assert 0 < (labels == marks).sum() < (labels == composed).sum()
    with pytest.warns(UserWarning, match="label 'Köln' is written 2 ways") as seen:
        est = dc.DeepCTRLClassifier(**FAST).fit(X, labels)
    assert len([w for w in seen if "written 2 ways" in str(w.message)]) == 1
    assert est.classes_.tolist() == ["Bonn", composed]  # the spelling most rows use
    assert set(est.predict(X).tolist()) == {"Bonn", composed}
    assert est.predict_proba(X).shape == (200, 2)
    ruled = dc.DeepCTRLClassifier(  # a rule and class weights may spell the label either way
        rules=[dc.Monotonic("price", "decreasing", output=marks)],
        class_weight={marks: 2.0, "Bonn": 1.0},
        **FAST,
    )
    with pytest.warns(UserWarning, match="written 2 ways"):
        ruled.fit(X, labels)
    assert ruled.rule_.output == 0 and ruled.rule_.direction == "decreasing"


def test_a_code_held_as_a_number_and_as_text_is_one_category():
    # pandas' read_csv types a large file's chunks apart: 3 in early rows, "3" in later ones
    rng = np.random.default_rng(0)
    code = rng.choice(["1", "2", "3"], 200)
    X = pd.DataFrame({"price": rng.uniform(1, 10, 200), "code": code})
    y = X["price"].to_numpy() + code.astype(int)
    mixed = X.assign(code=[int(c) if i < 100 else c for i, c in enumerate(code)])
    with pytest.warns(UserWarning, match=r"column 'code' holds 3 categories both as a number"):
        est = dc.DeepCTRLRegressor(**FAST).fit(mixed, y)
    assert est.encoder_.column("code").categories == [1, 2, 3]  # 3 inputs, not 6
    as_number, as_text = (
        est.predict(pd.DataFrame({"price": [5.0], "code": pd.Series([v], dtype=object)}))[0]
        for v in (3, "3")
    )
    assert as_number == as_text


def test_a_rule_column_a_transformer_renamed_or_dropped_gets_a_hint():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = _sales()
    rule = dc.Monotonic("price", "decreasing")
    unnamed = make_pipeline(StandardScaler(), dc.DeepCTRLRegressor(rules=[rule], **FAST))
    with pytest.raises(ValueError, match=r"the table came without column names .* by position"):
        unnamed.fit(X, y)
    scaled = ColumnTransformer([("num", StandardScaler(), ["price", "ads"])])
    renamed = make_pipeline(scaled, dc.DeepCTRLRegressor(rules=[rule], **FAST))
    renamed.set_output(transform="pandas")
    with pytest.raises(ValueError, match="a transformer renamed it: write 'num__price'"):
        renamed.fit(X, y)


def test_rules_the_model_cannot_change_or_that_count_twice_are_refused():
    from deepctrl.tabular.table_rules import Expression

    X, y = _sales()
    cases = [
        ([dc.Monotonic("price", "decreasing"), Expression("price <= 7")], "names no output (y)"),
        (
            [dc.rules.Threshold("price", 5.0, direction="decreasing")] * 2,
            "are the same rule, which would count",
        ),
        ([Expression("y <= 3 * price"), Expression("y <= 3 * price")], "are the same rule"),
    ]
    for rules, message in cases:
        with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
            dc.DeepCTRLRegressor(rules=rules, **FAST).fit(X, y)
    with pytest.raises(ValueError, match="a name such as 'class' goes in backticks"):
        Expression("y <= 12 + class")


@pytest.mark.parametrize(
    "other", ["y <= 3*price+25", "3 * price + 25 >= y", "`y` <= 3.0*price + 25"]
)
def test_an_expression_given_twice_in_another_spelling_is_refused(other):
    from deepctrl.tabular.table_rules import Expression

    X, y = _sales()
    rules = [Expression("y <= 3 * price + 25"), Expression(other)]
    with pytest.raises(ValueError, match=r"\(y <= 3 \* price \+ 25\) and .* are the same rule"):
        dc.DeepCTRLRegressor(rules=rules, **FAST).fit(X, y)


def test_expressions_that_differ_in_tau_or_strictness_are_not_the_same_rule():
    from deepctrl.tabular.table_rules import Expression

    X, y = _sales()
    rules = [Expression("y <= 3 * price"), Expression("y < 3*price"), Expression("y <= 3*price", 1)]
    summary = dc.DeepCTRLRegressor(rules=rules, **FAST).fit(X, y).summary()
    assert "penalty(y <= 3 * price), penalty(y < 3*price), penalty(y <= 3*price" in summary


@pytest.mark.parametrize("word", ["lambda", "in", "is", "if", "else", "True", "None"])
def test_a_column_named_as_a_python_word_gets_the_backtick_hint(word):
    from deepctrl.tabular.table_rules import Expression

    with pytest.raises(ValueError, match=f"a name such as '{word}' goes in backticks$"):
        Expression(f"y <= {word} + 3")
    X, y = _sales()
    X[word] = X["ads"]
    model = dc.DeepCTRLRegressor(rules=[Expression(f"y <= `{word}` + 30")], **FAST).fit(X, y)
    assert f"penalty(y <= `{word}` + 30)" in model.summary()


@pytest.mark.parametrize("text", ["y <= x and x > 0", "y <= not x"])
def test_logic_words_get_no_backtick_hint(text):
    from deepctrl.tabular.table_rules import Expression

    with pytest.raises(ValueError) as caught:
        Expression(text)
    assert "backticks" not in str(caught.value)


def test_a_model_file_with_rules_refused_since_it_was_written_still_loads():
    """Refusals added to fitting (a rule twice, an expression naming no output, weights
    beyond the limits) do not apply to a model file's rules."""
    from deepctrl.tabular.encoding import TableEncoder
    from deepctrl.tabular.model_outputs import Outputs
    from deepctrl.tabular.stored_rules import rules_config, rules_from_config
    from deepctrl.tabular.table_rules import Expression, resolve

    X, _ = _sales()
    enc, outputs = TableEncoder.fit(X), Outputs.regression(["y"])
    twice = [dc.rules.Threshold("price", 5.0, direction="decreasing")] * 2
    unmoved = [dc.Monotonic("price", "decreasing"), Expression("price <= 7")]
    steps = dc.rules.Additive(2.0)
    wider = [twice[0], dc.rules.Threshold("price", 5.0, direction="decreasing", perturbation=steps)]
    for rules in (twice, unmoved, wider):
        with pytest.raises(ValueError):
            resolve(rules, enc, outputs)
        assert len(resolve(rules, enc, outputs, strict=False).leaves()) == 2
    stored = rules_config(unmoved)
    for item, weight in zip(stored, (2e6, 0.0), strict=True):
        item["weight"] = weight
    (loaded,) = rules_from_config(stored)
    assert loaded.weights == [2e6, 0.0]
    assert resolve([loaded], enc, outputs, strict=False).weights == [1.0, 0.0]  # their ratio
    inner = dc.rules.AllOf(unmoved, [1.0, 2000.0])
    with pytest.raises(ValueError, match="AllOf weight 2e.06 \\(of a rule, nested weights"):
        dc.rules.AllOf([inner, twice[0]], [1000.0, 1.0])


def test_a_nullable_target_given_as_its_array_keeps_its_labels():
    X = pd.DataFrame({"a": np.arange(40.0)})
    flags = pd.array([i % 2 == 0 for i in range(40)], dtype="boolean")
    est = dc.DeepCTRLClassifier(**FAST).fit(X, flags)
    assert est.classes_.dtype == bool and est.classes_.tolist() == [False, True]
    counts = pd.array([i % 2 for i in range(40)], dtype="Int64")
    classes = dc.DeepCTRLClassifier(**FAST).fit(X, counts).classes_
    assert classes.dtype.kind == "i" and classes.tolist() == [0, 1]  # not 0.0 and 1.0
