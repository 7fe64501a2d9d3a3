"""Tables that are not pandas DataFrames: the same rows give the same model, or one clear
error naming the column or the input."""

from decimal import Decimal

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc

pl = pytest.importorskip("polars")
pa = pytest.importorskip("pyarrow")

FAST = {"max_epochs": 3, "n_seeds": 1, "random_state": 0}
RULE = [dc.Monotonic("price", "decreasing")]


def table(n: int = 120) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 9, n).round(2), "quality": rng.normal(size=n)})
    return X, pd.Series(10 - X["price"] + X["quality"], name="sales")


def test_a_record_batch_keeps_its_column_names():
    X, y = table()
    batch = pa.RecordBatch.from_pandas(X, preserve_index=False)
    by_batch = dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(batch, y)
    by_frame = dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(X, y)
    assert list(by_batch.feature_names_in_) == ["price", "quality"]
    np.testing.assert_array_equal(by_batch.predict(batch), by_frame.predict(X))
    swapped = pa.RecordBatch.from_pandas(X[["quality", "price"]], preserve_index=False)
    with pytest.raises(ValueError, match="same order as they were in fit"):
        by_batch.predict(swapped)


@pytest.mark.parametrize(
    "as_decimals",
    [
        lambda X: pa.table(
            {"price": pa.array([Decimal(str(v)) for v in X.price]), "quality": X.quality}
        ),
        lambda X: pl.from_pandas(X).with_columns(pl.col("price").cast(pl.Decimal(10, 2))),
        lambda X: X.assign(price=[Decimal(str(v)) for v in X.price]),
    ],
    ids=["pyarrow", "polars", "pandas objects"],
)
def test_decimal_columns_are_numbers(as_decimals):
    X, y = table()
    floats = dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(X, y)
    decimals = dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(as_decimals(X), y)
    np.testing.assert_array_equal(decimals.predict(X), floats.predict(X))
    np.testing.assert_array_equal(floats.predict(as_decimals(X)), floats.predict(X))


@pytest.mark.parametrize(
    "records",
    [
        lambda X: X.to_records(index=False),
        lambda X: X.to_dict("records"),
    ],
    ids=["record array", "list of dicts"],
)
def test_records_keep_their_names(records):
    X, y = table()
    est = dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(records(X), y)
    assert list(est.feature_names_in_) == ["price", "quality"]
    np.testing.assert_array_equal(
        est.predict(X), dc.DeepCTRLRegressor(rules=RULE, **FAST).fit(X, y).predict(X)
    )


def test_multi_output_targets_are_matched_by_name():
    X, y = table()
    Y = pd.DataFrame({"units": y, "revenue": y * X["price"] / 5})
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing", output="units")], **FAST)
    est.fit(X, Y)
    swapped = pl.from_pandas(Y[["revenue", "units"]])
    pd.testing.assert_frame_equal(est.sweep(X, swapped, [0.0, 1.0]), est.sweep(X, Y, [0.0, 1.0]))
    assert est.score(X, swapped) == est.score(X, Y)
    with pytest.raises(ValueError, match=r"y has the target columns \['a', 'b'\]; the model"):
        est.sweep(X, Y.set_axis(["a", "b"], axis=1))


def test_lazy_targets_are_asked_to_be_collected():
    X, y = table()
    lazy = pl.DataFrame({"sales": y.to_numpy()}).lazy()
    est = dc.DeepCTRLRegressor(**FAST)
    with pytest.raises(ValueError, match=r"^y is a lazy frame \(polars LazyFrame\).*y.collect"):
        est.fit(X, lazy)
    est.fit(X, y)
    with pytest.raises(ValueError, match="^y is a lazy frame"):
        est.sweep(X, lazy)


@pytest.mark.parametrize(
    ("column", "kind"),
    [
        (pl.Series("vec", [[1.0, 2.0]] * 120, dtype=pl.Array(pl.Float64, 2)), "lists"),
        (pl.Series("vec", [{"a": 1, "b": 2}] * 120), "records"),
    ],
)
def test_nested_polars_columns_are_named(column, kind):
    X, y = table()
    frame = pl.from_pandas(X).with_columns(column)
    with pytest.raises(ValueError, match=f"^X: column 'vec' holds {kind}, not single values"):
        dc.DeepCTRLRegressor(**FAST).fit(frame, y)


def test_wide_integers_are_numbers():
    X, y = table()
    X = X.assign(count=np.arange(len(X)))
    wide = pl.from_pandas(X).with_columns(pl.col("count").cast(pl.Int128))
    est = dc.DeepCTRLRegressor(**FAST).fit(wide, y)
    np.testing.assert_array_equal(est.predict(wide), est.predict(X))


def test_a_rule_test_takes_the_tables_the_estimators_take():
    X, y = table(200)
    est = dc.DeepCTRLRegressor(rules=RULE, **FAST)
    kwargs = {"folds": 2, "min_rows": 20, "progress": False}
    by_pandas = dc.rule_test(est, X, y, **kwargs).to_dict()
    for other in (pl.from_pandas(X), pa.Table.from_pandas(X, preserve_index=False)):
        assert dc.rule_test(est, other, y, **kwargs).to_dict() == by_pandas


def test_masked_entries_are_missing_values():
    X, y = table()
    values = X.to_numpy()
    hidden = values.copy()
    hidden[:5, 1] = 1e6  # what lies beneath the mask must not reach the model
    mask = np.zeros_like(values, dtype=bool)
    mask[:5, 1] = True
    with_nan = values.copy()
    with_nan[:5, 1] = np.nan
    rule = [dc.Monotonic(0, "decreasing")]
    masked = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(np.ma.masked_array(hidden, mask), y)
    by_nan = dc.DeepCTRLRegressor(rules=rule, **FAST).fit(with_nan, y)
    np.testing.assert_array_equal(masked.predict(with_nan), by_nan.predict(with_nan))
    np.testing.assert_array_equal(
        masked.predict(np.ma.masked_array(hidden, mask)), by_nan.predict(with_nan)
    )


def test_a_masked_target_or_weight_is_missing():
    X, y = table()
    mask = np.zeros(len(y), dtype=bool)
    mask[3] = True
    labels = np.ma.masked_array((y > y.median()).astype(int).to_numpy(), mask)
    with pytest.raises(ValueError, match="y contains NaN"):
        dc.DeepCTRLRegressor(**FAST).fit(X, np.ma.masked_array(y.to_numpy(), mask))
    with pytest.raises(ValueError, match="1 missing class label.*row 3"):
        dc.DeepCTRLClassifier(**FAST).fit(X, labels)
    words = np.ma.masked_array(np.where(y > y.median(), "high", "low"), mask)
    for text in (words, words.astype(object)):  # not the fill value '?' taken for a class
        with pytest.raises(ValueError, match="1 missing class label.*row 3"):
            dc.DeepCTRLClassifier(**FAST).fit(X, text)
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        dc.DeepCTRLRegressor(**FAST).fit(
            X, y, sample_weight=np.ma.masked_array(np.ones(len(y)), mask)
        )


def test_masked_text_entries_are_missing_categories():
    X, y = table()
    shop = np.where(np.arange(len(X)) % 3 == 0, "north", "south").astype(object)
    mask = np.zeros(len(X), dtype=bool)
    mask[:6] = True
    masked = np.ma.masked_array(
        np.column_stack([X.price.to_numpy(), shop]),
        mask=np.column_stack([np.zeros_like(mask), mask]),
    )
    missing = np.column_stack([X.price.to_numpy(), np.where(mask, None, shop)])
    a = dc.DeepCTRLRegressor(**FAST).fit(masked, y)
    b = dc.DeepCTRLRegressor(**FAST).fit(missing, y)
    np.testing.assert_array_equal(a.predict(missing), b.predict(missing))
