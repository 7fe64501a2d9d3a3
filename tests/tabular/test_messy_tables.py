"""Tables as they come: missing values, dates, any data frame, sparse matrices and named
classes, with hand-computed expectations."""

from __future__ import annotations

import datetime
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import scipy.sparse as sp
import torch

import deepctrl as dc
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.rule_checks import check_rule_classes
from deepctrl.tabular.table_rules import Expression, default_perturbation, resolve

pl = pytest.importorskip("polars")
FAST = {"max_epochs": 15, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def test_missing_numbers_take_the_training_mean_and_an_indicator():
    frame = pd.DataFrame({"sqft": [100.0, np.nan, 300.0, 200.0], "rooms": [1.0, 2.0, 3.0, 4.0]})
    enc = TableEncoder.fit(frame)
    col = enc.column("sqft")
    assert (col.mean, col.missing, col.indicator) == (200.0, 1, True)
    assert col.std == pytest.approx(np.std([100.0, 300.0, 200.0]))
    assert enc.encoded_names() == ["sqft", "sqft (missing)", "rooms"]
    out = enc.transform(frame)
    scale = np.std([100.0, 300.0, 200.0])
    np.testing.assert_allclose(out[:, 0], [-100 / scale, 0.0, 100 / scale, 0.0], rtol=1e-6)
    np.testing.assert_array_equal(out[:, 1], [0, 1, 0, 0])
    assert enc.imputed() == {"sqft": 1}
    # a column without missing values in training: imputed at predict, with a warning
    with pytest.warns(
        UserWarning, match="column 'rooms': 1 row has a missing value, which training had none of"
    ):
        again = enc.transform(frame.assign(rooms=[1.0, None, 3.0, 4.0]))
    assert again[1, 2] == 0.0 and again.shape == (4, 3)


@pytest.mark.parametrize("validation", ["holdout", "cross_fit"])
def test_the_summary_counts_missing_values_over_every_row_given(validation):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.normal(size=50), "k": rng.choice(["a", "b"], 50)})
    frame.loc[::10, "x"] = np.nan  # 5 of 50, some of them in the validation rows
    y = frame["x"].fillna(0) + rng.normal(size=50)
    params = {**FAST, "max_epochs": 1, "validation": validation, "n_seeds": 2}
    est = dc.DeepCTRLRegressor(**params).fit(frame, y)
    assert est.n_train_ + (0 if validation == "cross_fit" else est.n_validation_) == 50
    assert "missing values in the 50 rows given: x 5 (filled with the column's mean" in (
        est.summary()
    )


def test_missing_text_is_a_category_of_its_own():
    frame = pd.DataFrame({"color": ["red", None, "", "blue", np.nan]})
    enc = TableEncoder.fit(frame)
    assert enc.encoded_names() == ["color=(missing)", "color=blue", "color=red"]
    np.testing.assert_array_equal(
        enc.transform(frame), [[0, 0, 1], [1, 0, 0], [1, 0, 0], [0, 1, 0], [1, 0, 0]]
    )
    assert enc.column("color").missing == 3


def test_a_boolean_and_a_number_in_one_text_column_stay_two_categories():
    # True == 1 in Python: a dict or pandas' factorize would make them one category
    frame = pd.DataFrame({"c": pd.Series([True, 1, 1, "a", True], dtype=object)})
    encoder = TableEncoder.fit(frame)
    assert encoder.column("c").categories == [1, "True", "a"]
    encoded = encoder.transform(frame)
    assert encoded.argmax(axis=1).tolist() == [1, 0, 0, 2, 1]
    alone = encoder.transform(pd.DataFrame({"c": [True, True]}))  # a boolean column now
    assert alone.argmax(axis=1).tolist() == [1, 1]
    flags = TableEncoder.fit(pd.DataFrame({"f": [True, False, True]}))
    assert flags.transform(pd.DataFrame({"f": [True, False]})).tolist() == [[0, 1], [1, 0]]


def test_rows_whose_ruled_value_is_missing_are_not_counted_as_judged():
    rng = np.random.default_rng(0)
    n = 200
    dist = rng.uniform(1, 10, n)
    X = pd.DataFrame({"dist": dist, "z": rng.normal(size=n)})
    X.loc[: n // 4, "dist"] = np.nan  # imputed with the mean and an indicator input
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("dist", "increasing")], max_epochs=3, n_seeds=1, random_state=0
    ).fit(X, 2 * dist + rng.normal(size=n))
    rule = est.rule_
    assert rule.leaves()[0].missing_input == est.encoder_.column("dist").start + 1
    encoded = torch.as_tensor(est.encoder_.transform(X))
    perturbed = rule.perturb(encoded, torch.Generator().manual_seed(0))
    ctx = dc.rules.Context(encoded, torch.zeros(n, 1), perturbed, torch.zeros(n, 1))
    judged = rule.judged(ctx).numpy()
    assert not judged[: n // 4 + 1].any() and judged[n // 4 + 1 :].all()
    assert rule.applicable(ctx).all()  # training still raises the imputed value
    empty = X.assign(dist=np.nan)
    table = est.sweep(empty, alphas=[0.0, 1.0])
    assert np.isnan(table["verification_ratio"]).all()  # no row has a value to raise


def test_rows_missing_a_column_an_expression_reads_are_not_judged():
    rng = np.random.default_rng(0)
    n = 200
    price = rng.uniform(2, 8, n)
    X = pd.DataFrame({"price": price, "quality": rng.uniform(0, 1, n)})
    X.loc[: n // 4, "price"] = np.nan  # the expression would see the mean filled in
    est = dc.DeepCTRLRegressor(rules=Expression("y <= price + 16"), **FAST)
    est.fit(X, 20 - price + rng.normal(size=n))
    leaf = est.rule_.leaves()[0]
    assert leaf.missing_inputs == [est.encoder_.column("price").start + 1]
    assert est.sweep(X.iloc[: n // 4 + 1], alphas=[0.0]).attrs["judged_rows"] == (0, n // 4 + 1)
    assert est.sweep(X, alphas=[0.0]).attrs["judged_rows"] == (n - n // 4 - 1, n)
    other = dc.DeepCTRLRegressor(rules=Expression("y <= quality + 16"), **FAST)
    other.fit(X, 20 - price + rng.normal(size=n))  # a column with a value on every row
    assert other.sweep(X, alphas=[0.0]).attrs["judged_rows"] == (n, n)


def test_a_date_column_becomes_days_and_the_cycles_that_vary():
    days = pd.date_range("2023-01-02", periods=800, freq="D")  # 2023-01-02 was a Monday
    frame = pd.DataFrame({"day": days})
    col = TableEncoder.fit(frame).column("day")
    # days since the first date, the year cycle (span >= 365 days), the weekday cycle;
    # no time-of-day cycle (every date is at midnight)
    assert col.kind == "date" and col.parts == ["year", "week"] and col.width == 5
    assert col.origin.startswith("2023-01-02") and col.mean == pytest.approx(399.5)
    out = TableEncoder([col]).transform(frame)
    np.testing.assert_allclose(
        out[:, 0], (np.arange(800) - 399.5) / np.std(np.arange(800)), rtol=1e-5
    )
    # Monday has weekday phase 0: sin 0, cos 1; Wednesday 2/7 of a turn
    np.testing.assert_allclose(out[0, 3:5], [0.0, 1.0], atol=1e-6)
    np.testing.assert_allclose(
        out[2, 3:5], [np.sin(4 * np.pi / 7), np.cos(4 * np.pi / 7)], atol=1e-6
    )
    # a date after the training range is a larger number of days, not an unknown category
    later = TableEncoder([col]).transform(pd.DataFrame({"day": [pd.Timestamp("2026-01-02")]}))
    assert later[0, 0] == pytest.approx((1096 - 399.5) / np.std(np.arange(800)), rel=1e-5)


def test_encoding_chosen_rows_equals_encoding_all_then_taking_them():
    # the fit encodes its training and validation rows this way, as one table in their order
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "price": np.where(rng.random(40) < 0.2, np.nan, rng.normal(5, 2, 40)),
            "color": rng.choice(["red", "blue", None], 40),
            "day": pd.Timestamp("2023-01-01") + pd.to_timedelta(rng.integers(0, 900, 40), "D"),
        }
    )
    enc = TableEncoder.fit(frame)
    rows = rng.permutation(40)[:25]
    np.testing.assert_array_equal(enc.transform(frame, rows), enc.transform(frame)[rows])
    assert enc.transform(frame, rows[:0]).shape == (0, enc.n_encoded)


def test_iso_date_text_is_read_as_dates_and_a_short_span_has_no_year_cycle():
    frame = pd.DataFrame(
        {"when": ["2024-03-01 08:00", "2024-03-02 14:30", None, "2024-03-05T09:15:00"]}
    )
    col = TableEncoder.fit(frame).column("when")
    assert col.kind == "date" and col.parts == ["week", "day"] and col.missing == 1
    assert col.width == 1 + 4 + 1  # days, two cycles, the missing indicator
    assert (
        TableEncoder.fit(pd.DataFrame({"code": ["2024-03", "x"]})).column("code").kind
        == "categorical"
    )


def _frames(frame: pd.DataFrame) -> dict[str, object]:
    return {
        "pandas": frame,
        "polars": pl.from_pandas(frame),
        "pyarrow": pa.Table.from_pandas(frame, preserve_index=False),
    }


def test_pandas_polars_and_pyarrow_tables_give_the_same_predictions():
    rng = np.random.default_rng(0)
    n = 160
    frame = pd.DataFrame(
        {
            "dist_km": rng.uniform(1, 50, n),
            "kind": rng.choice(["a", "b"], n),
            "day": pd.date_range("2024-01-01", periods=n, freq="D"),
        }
    )
    frame.loc[::9, "dist_km"] = np.nan
    y = np.where(frame["dist_km"].fillna(25) + rng.normal(0, 10, n) > 25, "late", "ontime")
    preds = {}
    for name, X in _frames(frame).items():
        est = dc.DeepCTRLClassifier(
            rules=[dc.Monotonic("dist_km", "increasing", output="late")], **FAST
        ).fit(X, y)
        assert list(est.feature_names_in_) == ["dist_km", "kind", "day"]
        preds[name] = est.predict_proba(X, alpha=0.5)
    np.testing.assert_array_equal(preds["polars"], preds["pandas"])
    np.testing.assert_array_equal(preds["pyarrow"], preds["pandas"])


def test_a_pyarrow_dictionary_column_keeps_its_missing_values():
    # a pandas category becomes a dictionary-encoded pyarrow column (as Parquet stores text)
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame({"x": rng.normal(size=n), "c": pd.Categorical(rng.choice(["a", "b"], n))})
    frame.loc[::10, "c"] = None
    y = frame["x"] + 2.0 * frame["c"].isna()
    halves = [pa.Table.from_pandas(part, preserve_index=False) for part in (frame[:60], frame[60:])]
    table = pa.concat_tables(halves)
    assert pa.types.is_dictionary(table.schema.field("c").type)
    est = dc.DeepCTRLRegressor(**FAST).fit(table, y)
    assert est.encoder_.imputed() == {"c": 12}  # the missing values, not other categories
    by_pandas = dc.DeepCTRLRegressor(**FAST).fit(frame, y)
    np.testing.assert_array_equal(est.predict(table), by_pandas.predict(frame))
    np.testing.assert_array_equal(by_pandas.predict(table), by_pandas.predict(frame))


def test_sparse_matrices_are_accepted_with_rules_by_position():
    rng = np.random.default_rng(1)
    dense = rng.uniform(0, 1, (120, 3)) * (rng.uniform(size=(120, 3)) > 0.3)
    y = 2 * dense[:, 0] - dense[:, 2]
    rule = dc.Monotonic(0, "increasing")
    est = dc.DeepCTRLRegressor(rules=[rule], **FAST).fit(sp.csr_matrix(dense), y)
    again = dc.DeepCTRLRegressor(rules=[rule], **FAST).fit(dense, y)
    np.testing.assert_array_equal(est.predict(sp.csr_matrix(dense)), again.predict(dense))
    assert est.encoder_.names == ["x0", "x1", "x2"]


def test_a_pandas_column_transformer_feeds_named_rules():
    from sklearn.compose import ColumnTransformer
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rng = np.random.default_rng(2)
    X = rng.uniform(1, 5, (150, 2))  # a numpy array: the transformer names its columns
    y = 3 * X[:, 0] + rng.normal(0, 0.1, 150)
    prep = ColumnTransformer([("num", StandardScaler(), [0, 1])]).set_output(transform="pandas")
    rule = dc.Monotonic("num__x0", "increasing")
    model = make_pipeline(prep, dc.DeepCTRLRegressor(rules=[rule], **FAST)).fit(X, y)
    est = model[-1]
    assert est.encoder_.names == ["num__x0", "num__x1"] and est.rule_.feature == 0
    assert est.verification_ratio(prep.transform(X), alpha=1.0) >= 0.95


def test_a_rule_acts_on_the_class_it_names():
    rng = np.random.default_rng(3)
    n = 400
    X = pd.DataFrame({"dist_km": rng.uniform(1, 50, n), "load": rng.uniform(0, 1, n)})
    y = np.where(X["dist_km"] / 50 + rng.normal(0, 0.2, n) > 0.5, "late", "ontime")
    outputs = Outputs.classification(["late", "ontime"])
    enc = TableEncoder.fit(X)
    named = resolve([dc.Monotonic("dist_km", "increasing", output="late")], enc, outputs)
    default = resolve([dc.Monotonic("dist_km", "increasing")], enc, outputs)
    # one logit, of P(ontime) = P(classes_[1]): "late rises" is "ontime falls"
    assert (named.output, named.direction) == (0, "decreasing")
    assert (default.output, default.direction) == (0, "increasing")
    by_index = resolve([dc.Monotonic("dist_km", "increasing", output=0)], enc, outputs)
    assert (by_index.output, by_index.direction) == (0, "decreasing")
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("dist_km", "increasing", output="late")], **{**FAST, "max_epochs": 30}
    ).fit(X, y)
    assert "rules: monotonic(dist_km, increasing, on 'late'): P('late')" in est.summary()
    assert est.verification_ratio(X, alpha=1.0) >= 0.95
    step = X.assign(dist_km=X["dist_km"] * 1.05)
    p_late = est.predict_proba(X, alpha=1.0)[:, 0]
    assert (est.predict_proba(step, alpha=1.0)[:, 0] >= p_late).mean() >= 0.95
    unnamed = dc.DeepCTRLClassifier(rules=[dc.Monotonic("dist_km", "increasing")], **FAST)
    with pytest.warns(
        UserWarning, match=r"names no class, so it acts on P\('ontime'\), the second"
    ):
        assert "P('ontime')" in unnamed.fit(X, y).summary()


def test_rules_that_mix_a_named_class_with_the_default_are_refused():
    outputs = Outputs.classification(["leave", "stay"])
    fee, tenure = (
        dc.Monotonic("fee", "increasing", output="leave"),
        dc.Monotonic("tenure", "decreasing"),
    )
    with pytest.raises(ValueError, match=r"act on different classes: P\('leave'\) and P\('stay'\)"):
        check_rule_classes([fee, tenure], outputs)
    with pytest.raises(ValueError, match="give every rule its class"):
        check_rule_classes(dc.rules.AllOf([tenure, fee]), outputs)
    # naming the default class is no mix; a regression target has no classes
    check_rule_classes(
        [dc.Monotonic("fee", "increasing", output="stay"), tenure],
        Outputs.classification(["leave", "stay"]),
    )
    check_rule_classes([fee, tenure], Outputs.regression(["y"]))


@pytest.mark.parametrize(
    ("labels", "warns"),
    [
        (["0", "1"], False),
        (["False", "True"], False),
        (["no", "yes"], False),
        (["-1", "1"], False),
        (["leave", "stay"], True),
        (["1", "2"], True),
        (["a", "b", "c"], True),
    ],
)
def test_a_rule_without_a_class_warns_when_the_labels_do_not_say_which(labels, warns):
    rules = [dc.Monotonic("fee", "increasing")]
    outputs = Outputs.classification(labels)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_rule_classes(rules, outputs)
        check_rule_classes([dc.Monotonic("fee", "increasing", output=labels[0])], outputs)
    assert [str(w.message).split(",")[0] for w in caught] == (
        ["rule monotonic(fee"] if warns else []
    )


def test_default_perturbations_follow_the_column():
    enc = TableEncoder.fit(
        pd.DataFrame(
            {
                "price": [2.5, 4.0, 9.75],
                "count": [0.0, 1.0, 5.0],
                "age": [20.0, 31.0, 45.0],
                "day": pd.date_range("2024-01-01", periods=3),
            }
        )
    )
    price, count, age, day = (default_perturbation(c) for c in enc.columns)
    assert price.config() == {"kind": "relative", "u": 0.1}
    # whole numbers: counted, not measured; a step reaches the next one (0.1 sd is 0.22)
    assert count.config() == {"kind": "additive", "scale": 1.0}
    assert age.config() == {  # 0.1 sd is more than one year
        "kind": "additive",
        "scale": pytest.approx(0.1 * np.std([20.0, 31.0, 45.0])),
    }
    assert day.config() == {"kind": "additive", "scale": pytest.approx(0.1 * np.std([0, 1, 2]))}


def test_a_rule_on_a_date_column_says_sales_rise_over_time():
    rng = np.random.default_rng(4)
    n = 300
    X = pd.DataFrame(
        {"day": pd.date_range("2023-01-01", periods=n, freq="D"), "promo": rng.uniform(0, 1, n)}
    )
    y = 0.02 * np.arange(n) + 2 * X["promo"] + rng.normal(0, 0.3, n)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("day", "increasing")], **{**FAST, "max_epochs": 30}
    ).fit(X, y)
    assert est.verification_ratio(X, alpha=1.0) >= 0.95
    # the rule raises the days since the first date, holding the weekday: two weeks later
    later = X.assign(day=X["day"] + pd.Timedelta(days=14))
    assert (est.predict(later, alpha=1.0) >= est.predict(X, alpha=1.0)).mean() >= 0.95


def test_a_date_rule_over_more_than_a_year_holds_against_the_data_trend():
    # the data fall over 540 days; "rises over time" must hold at alpha 1 week after week,
    # which a time-of-year input, free of the rule, would let the network dodge
    rng = np.random.default_rng(0)
    days = rng.integers(0, 540, 1000)
    when = pd.Timestamp("2023-01-01") + pd.to_timedelta(days, "D")
    X = pd.DataFrame({"day": when.strftime("%Y-%m-%d"), "x": rng.normal(size=1000)})
    y = 10 - 0.01 * days + (when.dayofweek >= 5) + rng.normal(0, 0.3, 1000)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("day", "increasing")], **{**FAST, "max_epochs": 40}
    ).fit(X, y)
    assert est.encoder_.column("day").parts == ["week"]  # no time of year beside the rule
    mondays = pd.date_range("2023-01-02", periods=78, freq="7D").strftime("%Y-%m-%d")
    grid = pd.DataFrame({"day": mondays, "x": 0.0})
    assert (np.diff(est.predict(grid, alpha=1.0)) >= 0).mean() >= 0.95
    assert (np.diff(est.predict(grid, alpha=0.0)) < 0).mean() >= 0.8  # the data's trend
    plain = TableEncoder.fit(X)  # without a rule the date keeps its time of year
    assert plain.column("day").parts == ["year", "week"]


def test_the_default_alpha_keeps_the_rule_where_the_lowest_error_drops_it():
    # the training labels rise with price; the rule says demand falls with price
    rng = np.random.default_rng(5)
    n = 400
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "quality": rng.uniform(0, 1, n)})
    y = 0.8 * X["price"] + 3 * X["quality"] + rng.normal(0, 0.5, n)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("price", "decreasing")], **{**FAST, "max_epochs": 30}
    ).fit(X, y)
    table = pd.DataFrame(est.validation_sweep_)
    kept = table[table["verification_ratio"] >= 0.99]
    assert len(kept) and est.selected_alpha_ == kept.loc[kept["mse"].idxmin(), "alpha"]
    assert est.min_error_alpha_ == table.loc[table["mse"].idxmin(), "alpha"]
    assert est.min_error_alpha_ < est.selected_alpha_  # the error alone drops the rule
    np.testing.assert_array_equal(est.predict(X), est.predict(X, alpha=est.selected_alpha_))
    old = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("price", "decreasing")], alpha="min_error", **{**FAST, "max_epochs": 30}
    ).fit(X, y)
    assert old.alpha_ == est.min_error_alpha_
    lines = est.summary().splitlines()
    assert lines[-2].startswith(f"default alpha: alpha {est.selected_alpha_:g} (validation mse ")
    assert lines[-1].startswith(f"lowest validation error: alpha {est.min_error_alpha_:g} ")


def test_predict_takes_one_alpha_per_row():
    rng = np.random.default_rng(6)
    X = pd.DataFrame({"price": rng.uniform(1, 10, 200), "quality": rng.uniform(0, 1, 200)})
    y = np.where(X["price"] + rng.normal(0, 2, 200) > 5, "sold", "kept")
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("price", "decreasing", output="sold")], **FAST
    ).fit(X, y)
    alphas = np.tile([0.0, 0.4, 1.0, 1.3], 50)  # above 1 extrapolates, as a scalar would
    per_row = est.predict_proba(X, alpha=alphas)
    for value in (0.0, 0.4, 1.0, 1.3):
        rows = alphas == value
        np.testing.assert_allclose(
            per_row[rows], est.predict_proba(X, alpha=value)[rows], atol=1e-6
        )
    np.testing.assert_array_equal(
        est.predict(X, alpha=alphas), est.classes_[per_row.argmax(axis=1)]
    )
    with pytest.raises(ValueError, match=r"one value per row: got shape \(3,\) for 200 rows"):
        est.predict(X, alpha=[0.1, 0.2, 0.3])
    with pytest.raises(ValueError, match="finite numbers"):
        est.predict(X, alpha=np.full(200, np.nan))


def test_a_class_missing_after_recoding_hints_at_positions_except_on_the_command_line():
    recoded = Outputs.classification(["0", "1"])
    with pytest.raises(ValueError, match="output=0 for the first, output=1 for the second"):
        recoded.find("yes")
    with pytest.raises(ValueError) as caught:
        Outputs.classification(["0", "1"], recoded_hint=False).find("2")
    assert str(caught.value) == "output '2' is not a class of this model (classes: 0, 1)"


def test_dates_beyond_what_nanoseconds_hold_are_refused_and_python_dates_read():
    frame = pd.DataFrame({"ends": ["2024-01-02", "9999-12-31", None], "x": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"'9999-12-31' \(row 1\); leave such dates empty"):
        TableEncoder.fit(frame)
    days = pd.Series([datetime.date(2024, 1, 1), None, datetime.date(2024, 1, 11)], name="d")
    enc = TableEncoder.fit(pd.DataFrame({"d": days}))  # as a Parquet date column reads
    assert enc.column("d").kind == "date"
    assert enc.transform(pd.DataFrame({"d": days}))[:, 0].tolist() == [-1.0, 0.0, 1.0]


@pytest.mark.parametrize("scale", [1e-15, 1e-9, 1.0, 1e12, 1e200])
def test_columns_of_any_magnitude_are_standardized(scale):
    values = np.array([1.0, 2.0, 3.0, 4.0]) * scale
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = TableEncoder.fit(pd.DataFrame({"v": values}))
        out = enc.transform(pd.DataFrame({"v": values}))[:, 0]
    np.testing.assert_allclose(out, [-1.5, -0.5, 0.5, 1.5] / np.sqrt(1.25), rtol=1e-6)


def test_a_column_missing_on_every_row_is_imputed_as_in_a_batch():
    # one row of a request: an all-None object column is no text, an all-NaN float column
    # no date; each is that column's missing value, as it would be among other rows
    rng = np.random.default_rng(0)
    n = 120
    frame = pd.DataFrame(
        {
            "dist": rng.uniform(1, 50, n),
            "carrier": rng.choice(["a", "b"], n),
            "day": pd.date_range("2024-01-01", periods=n).strftime("%Y-%m-%d"),
        }
    )
    frame.loc[::10, "dist"] = np.nan
    est = dc.DeepCTRLRegressor(**FAST).fit(frame, frame["dist"].fillna(20) + rng.normal(size=n))
    alone = [{"dist": None, "carrier": "a", "day": "2024-03-01"}]
    batch = pd.concat([frame.iloc[:3], pd.DataFrame(alone)], ignore_index=True)
    np.testing.assert_allclose(est.predict(pd.DataFrame(alone)), est.predict(batch)[-1:], rtol=1e-6)
    no_day = pd.DataFrame([{"dist": 12.0, "carrier": "a", "day": np.nan}])
    with pytest.warns(UserWarning, match="column 'day': 1 row has a missing value"):
        got = est.predict(no_day)
    with pytest.warns(UserWarning, match="column 'day': 1 row has a missing value"):
        among = est.predict(pd.concat([frame.iloc[:3], no_day], ignore_index=True))
    np.testing.assert_allclose(got, among[-1:], rtol=1e-6)
    with pytest.raises(ValueError, match="column 'dist' must be numeric, but row 0 holds 'x'"):
        est.predict(pd.DataFrame([{"dist": "x", "carrier": "a", "day": "2024-03-01"}]))


def test_rules_that_cannot_hold_together_are_refused():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(1, 5, 60), "z": rng.normal(size=60)})
    y = X["x"] + rng.normal(0, 0.5, 60)
    fast = {"max_epochs": 1, "n_seeds": 1}
    up, down = dc.rules.Threshold("x", 3.0), dc.rules.Threshold("x", 3.0, direction="decreasing")
    with pytest.raises(ValueError, match="cannot be both higher and lower above 3"):
        dc.DeepCTRLRegressor(rules=[up, down], **fast).fit(X, y)
    with pytest.raises(ValueError, match="cannot both rise with 'x' and be lower above 3"):
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing"), down], **fast).fit(X, y)
    labels = rng.choice(["a", "b", "c"], 60)
    every = [dc.Monotonic("x", "increasing", output=k) for k in "abc"]
    with pytest.raises(ValueError, match="probability of every class rise with 'x', which cannot"):
        dc.DeepCTRLClassifier(rules=every, **fast).fit(X, labels)
    two = every[:2]  # two of three classes may rise together
    dc.DeepCTRLClassifier(rules=two, **fast).fit(X, labels)
    dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing"), up], **fast).fit(X, y)
    lower = [dc.rules.Threshold("x", 3.0, direction="decreasing", output=k) for k in "abc"]
    with pytest.raises(ValueError, match="every class lower above 3 of 'x', which cannot be"):
        dc.DeepCTRLClassifier(rules=lower, **fast).fit(X, labels)
    dc.DeepCTRLClassifier(rules=lower[:2], **fast).fit(X, labels)
    wider = dc.rules.Threshold("x", 3.0, perturbation=dc.rules.Additive(2.0))
    with pytest.raises(ValueError, match=r"say the same of 'x' and \S+ above 3: give it once"):
        dc.DeepCTRLRegressor(rules=[up, wider], **fast).fit(X, y)


def test_a_rule_on_a_count_holds_from_one_whole_number_to_the_next():
    # the data fall with stops; at alpha 1 the model must rise from 0 stops to 1, 1 to 2
    # (with steps of a tenth of a stop, these defaults learned a sawtooth: 0 % of the rows
    # rose from 0 stops to 1 or from 1 to 2, at a verification ratio of 100 %)
    rng = np.random.default_rng(6)
    X = pd.DataFrame({"stops": rng.poisson(1.0, 1500), "q": rng.uniform(0, 1, 1500)})
    y = 10 - 1.5 * X["stops"] + 2 * X["q"] + rng.normal(0, 0.5, 1500)
    rule = [dc.Monotonic("stops", "increasing")]
    est = dc.DeepCTRLRegressor(rules=rule, random_state=0).fit(X, y)
    for k in (0, 1, 2):
        lower = est.predict(X.assign(stops=k), alpha=1.0)
        higher = est.predict(X.assign(stops=k + 1), alpha=1.0)
        assert np.mean(higher > lower) >= 0.95, k


@pytest.mark.parametrize(("scale", "target_scale"), [(1e-13, 1e-13), (1e290, 1e140)])
def test_targets_and_columns_of_any_magnitude_are_scaled(scale, target_scale):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 200) * scale, "q": rng.uniform(0, 1, 200)})
    y = (2 * X["x"] / scale + X["q"] + rng.normal(0, 0.1, 200)) * target_scale
    rule = [dc.Monotonic("x", "increasing")]
    with warnings.catch_warnings():
        warnings.simplefilter("error", UserWarning)  # not "constant"
        est = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(X, y)
    pred = est.predict(X, alpha=1.0)
    assert np.isfinite(pred).all() and est.verification_ratio(X, alpha=1.0) > 0.9
    assert np.corrcoef(pred / target_scale, y / target_scale)[0, 1] > 0.9  # target's units


def test_repeated_date_text_reads_as_each_row_would_alone():
    # long columns read each distinct text once; every row must get its own value back
    from deepctrl.tabular.column_kinds import DISTINCT_SAMPLE, column_kind
    from deepctrl.tabular.date_columns import date_values, has_zone

    texts = ["2024-03-30T23:30+01:00", " 2024-03-31T03:00+02:00", "", None, "2024-12-01"]
    rows = pd.Series([texts[i % 5] for i in range(3 * DISTINCT_SAMPLE + 7)], dtype="str")
    assert column_kind(rows) == "date" and has_zone(rows)
    alone = {t: (date_values(pd.Series([t])), date_values(pd.Series([t]), True)) for t in texts}
    for local in (False, True):
        expected = np.concatenate([alone[texts[i % 5]][local] for i in range(len(rows))])
        np.testing.assert_array_equal(date_values(rows, local=local), expected)
    # hand-checked: 23:30+01:00 is 22:30 UTC; the wall clock keeps 23:30
    assert str(date_values(rows)[0]) == "2024-03-30T22:30:00.000000000"
    assert str(date_values(rows, local=True)[1]) == "2024-03-31T03:00:00.000000000"
    # one row beyond the sample that is not a date makes the column text
    assert column_kind(pd.concat([rows, pd.Series(["soon"])], ignore_index=True)) == "categorical"


def test_timestamps_naming_one_instant_in_two_zones_keep_their_wall_clocks():
    # equal as instants (so a hash would merge them), different on the wall clock
    berlin = pd.Timestamp("2024-01-01 00:00", tz="Europe/Berlin")
    london = pd.Timestamp("2023-12-31 23:00", tz="Europe/London")
    from deepctrl.tabular.date_columns import date_values

    column = pd.Series([berlin, london] * 6000, dtype=object)
    local = date_values(column, local=True)
    assert [str(v) for v in local[:2]] == [
        "2024-01-01T00:00:00.000000000",
        "2023-12-31T23:00:00.000000000",
    ]
    assert len(set(date_values(column).tolist())) == 1  # one instant in UTC


def test_pyarrow_zoned_times_are_read_at_their_wall_clock_time_as_pandas_ones():
    kolkata = pd.date_range("2024-01-01", periods=120, freq="5h", tz="Asia/Kolkata")
    arrow = pd.Series(kolkata).astype(pd.ArrowDtype(pa.timestamp("us", tz="Asia/Kolkata")))
    from deepctrl.tabular.date_columns import date_values, has_zone

    assert has_zone(arrow)
    assert str(date_values(arrow, local=True)[0]) == "2024-01-01T00:00:00.000000000"
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"t": kolkata, "x": rng.normal(size=120)})
    y = kolkata.hour.to_numpy() / 4 + X["x"]
    est = dc.DeepCTRLRegressor(**FAST).fit(X, y)
    same = est.predict(X.assign(t=arrow.to_numpy()))
    np.testing.assert_array_equal(est.predict(X.assign(t=arrow)), est.predict(X))
    assert same.shape == (120,)
    fitted_on_arrow = dc.DeepCTRLRegressor(**FAST).fit(X.assign(t=arrow), y)
    assert fitted_on_arrow.encoder_.column("t").origin == "2024-01-01T00:00:00.000000000"


def test_a_pyarrow_dictionary_column_is_categories_at_fit_as_at_predict():
    rng = np.random.default_rng(1)
    size = pd.Series(rng.choice(["S", "M", "L"], 80))
    arrow = pd.Series(
        pa.array(size).dictionary_encode(),
        dtype=pd.ArrowDtype(pa.dictionary(pa.int32(), pa.string())),
    )
    X = pd.DataFrame({"size": arrow, "x": rng.normal(size=80)})
    est = dc.DeepCTRLRegressor(**FAST).fit(X, X["x"] + (size == "L"))
    assert est.encoder_.column("size").categories == ["L", "M", "S"]
    np.testing.assert_array_equal(est.predict(X), est.predict(X.assign(size=size)))


def test_a_category_with_its_accents_as_separate_marks_is_the_same_category():
    # "Köln" typed with one ö and written with an o and a combining diaeresis (as macOS may
    # write text) look alike and compare unequal in Python
    composed, marks = "K\u00f6ln", "Ko\u0308ln"
    frame = pd.DataFrame({"city": [composed, marks, "Bonn", marks]})
    encoder = TableEncoder.fit(frame)
    assert encoder.column("city").categories == ["Bonn", composed]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "category not seen in training"
        encoded = encoder.transform(pd.DataFrame({"city": [marks, composed, "Bonn"]}))
    assert encoded.tolist() == [[0, 1], [0, 1], [1, 0]]
    declared = pd.Series(frame["city"], dtype=pd.CategoricalDtype([marks, "Bonn", composed]))
    assert TableEncoder.fit(pd.DataFrame({"city": declared})).column("city").categories == [
        composed,
        "Bonn",
    ]


@pytest.mark.parametrize(
    "column",
    [
        pd.Series([np.nan] * 4),
        pd.Series([None] * 4, dtype=object),
        pd.Series([None, "", " ", None], dtype=object),
        pd.Series([pd.NaT] * 4),
    ],
)
def test_a_column_with_no_value_is_refused_whatever_its_type(column):
    with pytest.raises(ValueError, match="^column 'z' has no (values|dates), only missing"):
        TableEncoder.fit(pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "z": column}))
    if pl is not None:
        frame = pl.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "z": [None] * 4})  # polars' Null
        with pytest.raises(ValueError, match="^column 'z' has no values, only missing ones"):
            dc.DeepCTRLRegressor(**FAST).fit(frame, [1.0, 2.0, 3.0, 4.0])
