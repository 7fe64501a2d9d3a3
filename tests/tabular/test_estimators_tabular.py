"""Preprocessing of tables and text penalties for the estimators."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import torch

import deepctrl as dc
from deepctrl.core.rules import Additive, Relative, Standardized
from deepctrl.core.rules.expression import parse
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.frames import as_frame
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.stored_rules import rules_config, rules_from_config
from deepctrl.tabular.table_rules import Expression, resolve


def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "price": [2.0, 4.0, 6.0, 8.5],
            "color": ["red", "blue", "red", "green"],
            "member": [True, False, True, True],
            "size": pd.Categorical(["S", "M", "S", "L"], categories=["S", "M", "L", "XL"]),
        }
    )


def test_encoder_standardizes_numeric_and_one_hot_encodes_the_rest():
    enc = TableEncoder.fit(frame())
    assert enc.encoded_names() == [
        "price",
        "color=blue",
        "color=green",
        "color=red",
        "member=False",
        "member=True",
        "size=S",
        "size=M",
        "size=L",
        "size=XL",
    ]
    out = enc.transform(frame())
    std = np.std([2.0, 4.0, 6.0, 8.5])  # population std
    np.testing.assert_allclose(out[:, 0], (np.array([2, 4, 6, 8.5]) - 5.125) / std, rtol=1e-6)
    np.testing.assert_array_equal(out[:, 1:4], [[0, 0, 1], [1, 0, 0], [0, 0, 1], [0, 1, 0]])
    np.testing.assert_array_equal(out[:, 4:6], [[0, 1], [1, 0], [0, 1], [0, 1]])
    np.testing.assert_array_equal(
        out[:, 6:], [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0]]
    )
    assert enc.column("color").start == 1 and enc.column("size").width == 4


def test_an_identifier_column_warns():
    with pytest.warns(UserWarning, match="column 'id' has 60 distinct values in 60 rows"):
        TableEncoder.fit(pd.DataFrame({"id": [f"c{i}" for i in range(60)]}))


def test_encoder_config_round_trip_and_unknown_category_warns():
    enc = TableEncoder.from_config(TableEncoder.fit(frame()).config())
    new = frame().assign(color=["purple", "red", "red", "red"])
    with pytest.warns(UserWarning, match="1 row has a category not seen"):
        out = enc.transform(new)
    np.testing.assert_array_equal(out[0, 1:4], [0, 0, 0])


def test_encoder_names_infinite_values():
    with pytest.raises(
        ValueError, match="column 'price' has inf \\(infinite\\) values in 1 of 4 rows"
    ):
        TableEncoder.fit(frame().assign(price=[1.0, np.inf, 0.0, 2.0]))


def test_encoder_errors_name_the_column():
    enc = TableEncoder.fit(frame())
    with pytest.raises(ValueError, match="lacks column\\(s\\) the model needs: member"):
        enc.transform(frame().drop(columns="member"))
    with pytest.raises(ValueError, match="unknown column 'prize'"):
        enc.column("prize")
    with pytest.raises(
        ValueError, match="rule x needs a numeric or date column, but 'color' is categorical"
    ):
        enc.ordered("color", "rule x")
    with pytest.raises(ValueError, match="^column 'price' must be numeric, but row 2 holds '6,5'$"):
        enc.transform(frame().assign(price=[2.0, None, "6,5", 1.0]))
    with pytest.warns(UserWarning) as caught:
        out = enc.transform(frame().assign(color=["red", None, "pink", "pink"]))
    assert [str(w.message) for w in caught] == [
        "column 'color': 2 rows have a category not seen in training (such as 'pink'); 1 row "
        "has a missing value, which training had none of; they are encoded as all zeros"
    ]
    np.testing.assert_array_equal(out[1:, 1:4], np.zeros((3, 3)))
    with_missing = TableEncoder.fit(frame().assign(color=["red", None, "blue", "red"]))
    with pytest.warns(UserWarning) as caught:
        with_missing.transform(frame().assign(color=["red", None, "pink", "red"]))
    assert [str(w.message) for w in caught] == [
        "column 'color': 1 row has a category not seen in training (such as 'pink'); they "
        "are encoded as all zeros"
    ]


def test_expression_residual_and_strictness():
    cmp = parse("2 * y >= max(`unit price`, 1) - abs(z)")
    env = {
        "y": torch.tensor([1.0, 3.0]),
        "unit price": torch.tensor([4.0, 0.5]),
        "z": torch.tensor([-1.0, 0.0]),
    }
    # residual of a >= b is b - a: (max(4,1) - 1) - 2 = 1; (max(0.5,1) - 0) - 6 = -5
    assert cmp.residual(env).tolist() == [1.0, -5.0]
    assert not cmp.strict and parse("y < 1").strict
    assert cmp.names == ["y", "unit price", "z"]


@pytest.mark.parametrize(
    "text",
    [
        "y",
        "y <= __import__('os')",
        "y.real <= 1",
        "y <= 1 <= 2",
        "open('f') <= 1",
        "3 <= 4",
        "y <= ",
    ],
)
def test_expression_rejects_anything_but_arithmetic(text):
    with pytest.raises(ValueError, match="penalty expression"):
        parse(text)


def test_expressions_too_long_to_evaluate_are_refused():
    assert parse("y <= " + " + ".join(["x"] * 200)).names == ["y", "x"]
    for text in ("y <= " + " + ".join(["x"] * 1000), "y <= " + "-" * 3000 + "x"):
        with pytest.raises(ValueError, match="too long: at most 500 parts"):
            parse(text)


def test_resolve_translates_columns_perturbations_and_thresholds():
    enc = TableEncoder.fit(frame())
    col = enc.column("price")
    rules = [
        dc.Monotonic("price", "decreasing"),
        dc.rules.Threshold("price", 5.0, direction="decreasing", perturbation=Additive(1.0)),
    ]
    resolved = resolve(rules, enc, Outputs.regression(["y"]))
    mono, thr = resolved.leaves()
    assert mono.feature == 0 and thr.feature == 0
    assert isinstance(mono.perturbation, Standardized)
    assert isinstance(mono.perturbation.inner, Relative)
    assert thr.threshold == pytest.approx((5.0 - col.mean) / col.std)
    # raw 8.0 rises by at most 10 % = 0.8 raw units = 0.8 / std encoded units
    x = torch.full((1000,), (8.0 - col.mean) / col.std)
    delta = mono.perturbation.delta(x, torch.Generator().manual_seed(0))
    assert 0.7 / col.std < float(delta.max()) <= 0.8 / col.std + 1e-6
    assert rules[0].feature == "price"  # the user's rule is untouched


def test_named_penalty_sees_raw_units():
    enc = TableEncoder.fit(frame())
    outputs = Outputs.regression(["y"], mean=[10.0], std=[2.0])
    rule = resolve([Expression("y <= price + 1")], enc, outputs)
    x = torch.from_numpy(enc.transform(frame()))
    y_hat = torch.tensor([[0.0], [1.0], [-1.0], [0.5]])  # raw y: 10, 12, 8, 11
    residual = rule.fn(x, y_hat)
    np.testing.assert_allclose(residual.numpy(), [10 - 3, 12 - 5, 8 - 7, 11 - 9.5], atol=1e-5)
    code = resolve([dc.rules.Penalty(lambda cols, out: out["y"] - cols["price"])], enc, outputs)
    np.testing.assert_allclose(code.fn(x, y_hat).numpy(), [8, 8, 2, 2.5], atol=1e-5)


class SquaredPenalty(dc.rules.Penalty):
    """A penalty class of one's own: its loss squares the violation."""

    def loss(self, ctx):
        return torch.relu(self.violation(ctx)) ** 2


def test_a_penalty_class_of_ones_own_keeps_its_loss_in_the_estimators():
    enc = TableEncoder.fit(frame())
    outputs = Outputs.regression(["y"], mean=[10.0], std=[2.0])
    own = SquaredPenalty(lambda cols, out: out["y"] - cols["price"], tau=0.5)
    rule = resolve([own], enc, outputs)
    assert type(rule) is SquaredPenalty and rule.tau == 0.5
    x = torch.from_numpy(enc.transform(frame()))
    y_hat = torch.tensor([[0.0], [1.0], [-1.0], [0.5]])  # residuals 8, 8, 2, 2.5 (tau 0.5)
    np.testing.assert_allclose(rule.fn(x, y_hat).numpy(), [8, 8, 2, 2.5], atol=1e-5)
    assert own.fn is not rule.fn  # the user's rule is untouched
    calls = []

    class Counting(SquaredPenalty):
        def loss(self, ctx):
            calls.append(1)
            return super().loss(ctx)

    X = pd.DataFrame({"price": np.linspace(1, 9, 40)})
    rule = Counting(lambda c, o: o["y"] - c["price"])
    dc.DeepCTRLRegressor(rules=rule, max_epochs=1).fit(X, X.price.to_numpy())
    assert calls


def test_classifier_outputs_by_name():
    out = Outputs.classification(["no", "yes"])
    assert out.n_model_outputs == 1
    named = out.raw(torch.log(torch.tensor([[0.25 / 0.75]])))  # the logit of 0.25
    assert named["proba_yes"].item() == pytest.approx(0.25)
    assert named["proba_no"].item() == pytest.approx(0.75)
    multi = Outputs.classification(["a", "b", "c"]).raw(torch.log(torch.tensor([[0.2, 0.3, 0.5]])))
    assert multi["proba_c"].item() == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("rule", "message"),
    [
        (
            dc.Monotonic("color", "increasing"),
            "needs a numeric or date column, but 'color' is categorical",
        ),
        (dc.Monotonic("nope", "increasing"), "unknown column 'nope'"),
        (dc.Monotonic("price", "increasing", output=1), "output 1 is not a target of this model"),
        (Expression("y <= color"), "column 'color' is categorical"),
        (Expression("y <= weight"), "unknown name 'weight'"),
    ],
)
def test_resolve_errors(rule, message):
    with pytest.raises(ValueError, match=message):
        resolve([rule], TableEncoder.fit(frame()), Outputs.regression(["y"]))


def test_an_integer_output_names_a_whole_number_class_never_a_position():
    for labels in (np.array([1, 2, 5]), ["1", "2", "5"]):  # the estimators pass text
        classes = Outputs.classification(labels)
        assert [classes.find(v) for v in (1, np.int64(2), 5, "5")] == [0, 1, 2, 2]
        with pytest.raises(ValueError, match="an output names a class, not a position"):
            classes.find(0)
    assert Outputs.classification(["a", "b", "c"]).find(2) == 2


def test_an_integer_output_names_a_class_of_whole_numbers_written_with_a_decimal_point():
    for labels in (np.array([1.0, 2.0, 5.0]), ["1.0", "2.0", "5.0"]):  # floats as pandas reads
        classes = Outputs.classification(labels)
        assert [classes.find(v) for v in (1, 2, 2.0, "2", "2.0", np.int64(5), "5")] == [
            0,
            1,
            1,
            1,
            1,
            2,
            2,
        ]
        with pytest.raises(ValueError, match="an output names a class, not a position"):
            classes.find(0)
    assert Outputs.classification(["0.5", "1.5", "2.5"]).find(2) == 2  # no whole numbers


def test_relative_perturbation_on_a_column_around_zero_warns():
    enc = TableEncoder.fit(pd.DataFrame({"x": [-1.0, 0.0, 1.0, 0.5]}))  # std 0.740
    with pytest.warns(UserWarning) as record:
        resolve(
            [dc.Monotonic("x", "increasing", perturbation=Relative(0.1))],
            enc,
            Outputs.regression(["y"]),
        )
    assert str(record[0].message).endswith(
        "consider an additive one of 0.074, the default for this column: leave the "
        "perturbation out (or perturbation=dc.rules.Additive(0.074); in a rules file, "
        "additive = 0.074)"
    )
    # a 0/1 flag: a tenth of its spread could hold from 0 to 0.05 and fall from 0 to 1
    flags = TableEncoder.fit(pd.DataFrame({"promo": [0, 1, 1, 0, 1]}))
    with pytest.warns(UserWarning) as record:
        resolve(
            [dc.Monotonic("promo", "decreasing", perturbation=Relative(0.1))],
            flags,
            Outputs.regression(["y"]),
        )
    assert "consider an additive one of 1, the default for this column (whole numbers step " in (
        str(record[0].message)
    )


def test_rules_config_round_trip_and_code_penalty_refused():
    rules = [
        dc.Monotonic("price", "decreasing", perturbation=Additive(0.5)),
        dc.rules.AllOf([Expression("y >= 0", tau=0.1)], weights=[0.5]),
    ]
    back = rules_from_config(rules_config(rules))
    assert rules_config(back) == rules_config(rules)
    assert back[0].leaves()[1].expression == "y >= 0" and back[0].weights == [1.0, 0.5]
    with pytest.raises(ValueError, match="Penalty rule written in Python cannot be stored"):
        rules_config([dc.rules.Penalty(lambda c, o: o["y"])])


@pytest.mark.parametrize(
    ("column", "message"),
    [
        ("promo", "'promo' is categorical \\(True/False values; write them as 1/0"),
        ("price", "'price' is categorical \\(values such as '\\$1.50', '\\$2', '\\$4.95'\\)"),
        (
            "fee",
            "column 'fee' is constant \\(3\\) in the training rows, so the rule can be neither",
        ),
    ],
)
def test_a_rule_on_a_column_it_cannot_raise_says_why(column, message):
    X = pd.DataFrame(
        {
            "promo": [True, False] * 20,
            "price": ["$4.95", "$2", "$1.50", "$2"] * 10,
            "fee": [3.0] * 40,
            "x": np.arange(40.0),
        }
    )
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(column, "increasing")], max_epochs=1)
    with pytest.raises(ValueError, match=message):
        est.fit(X, np.arange(40.0))


def test_dates_that_are_not_iso_are_named_when_read_as_categories():
    days = pd.date_range("2024-01-01", periods=60)
    iso = days.strftime("%Y-%m-%d").tolist()
    iso[::30] = ["unknown", "unknown"]
    frame = pd.DataFrame(
        {"us": days.strftime("%m/%d/%Y"), "iso": iso, "city": ["Bonn", "Köln"] * 30}
    )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        enc = TableEncoder.fit(frame)
    assert [str(w.message) for w in caught] == [
        "column 'us' looks like dates, but 60 of its 60 distinct values are not ISO 8601 dates "
        "(such as '01/01/2024'), so it is read as categories; write dates as YYYY-MM-DD, and "
        "leave unknown ones empty, to use it as dates",
        "column 'iso' looks like dates, but 1 of its 59 distinct values is not ISO 8601 dates "
        "(such as 'unknown'), so it is read as categories; write dates as YYYY-MM-DD, and "
        "leave unknown ones empty, to use it as dates",
    ]
    assert [c.kind for c in enc.columns] == ["categorical"] * 3


def test_an_expression_without_a_value_on_some_rows_is_refused_naming_one():
    X = pd.DataFrame({"price": np.linspace(1.0, 9.0, 60), "quality": np.tile([0.5, 0.2, 0.8], 20)})
    y = 20 - X["price"].to_numpy()
    for text, n_bad in [("log(price - 4) <= y", 23), ("y / (quality - 0.5) <= 100", 20)]:
        for validation in ("holdout", "cross_fit"):
            est = dc.DeepCTRLRegressor(
                rules=[Expression(text)], validation=validation, n_seeds=2, max_epochs=1
            )
            with pytest.raises(
                ValueError, match=f"is not a finite number on {n_bad} of the 60 rows given to fit"
            ) as caught:
                est.fit(X, y)
            row = int(str(caught.value).split("the first at row ")[1].split(")")[0])
            assert row == 0  # the first in the table (price 1; quality 0.5), not of a shuffle
    dc.DeepCTRLRegressor(rules=[Expression("y <= 2 * price + 30")], max_epochs=1).fit(X, y)


def test_a_value_beyond_float32_is_named_in_the_fit_error():
    X = pd.DataFrame({"price": np.linspace(1.0, 2.0, 40)})
    est = dc.DeepCTRLRegressor(rules=[Expression("y <= price * 1e39")], max_epochs=1)
    with pytest.raises(ValueError, match="is not a finite number on 40 of the 40 rows") as caught:
        est.fit(X, 3 - X["price"].to_numpy())
    assert "or a value there is beyond float32's range (3.4e38)" in str(caught.value)


def test_a_column_name_beyond_ascii_keeps_its_spelling_in_an_expression():
    # the micro sign, which Python's parser would read as a Greek mu
    X = pd.DataFrame({"µg": np.linspace(0.0, 1.0, 40), "x": np.linspace(1.0, 2.0, 40)})
    est = dc.DeepCTRLRegressor(rules=[Expression("y <= 10 * µg + 20")], max_epochs=1)
    est.fit(X, np.linspace(0.0, 5.0, 40))
    assert "penalty(y <= 10 * µg + 20)" in est.summary()


def test_a_threshold_outside_the_training_values_is_refused():
    X = pd.DataFrame({"ap_hi": np.linspace(90.0, 200.0, 40), "x": np.arange(40.0)})
    est = dc.DeepCTRLRegressor(rules=[dc.rules.Threshold("ap_hi", 300.0)], max_epochs=1)
    with pytest.raises(
        ValueError,
        match="the threshold 300 is not inside the training values of 'ap_hi' \\(90 to 200\\)",
    ):
        est.fit(X, X["ap_hi"] / 100)
    est.set_params(rules=[dc.rules.Threshold("ap_hi", 129.5)]).fit(X, X["ap_hi"] / 100)


def test_zoned_dates_are_read_at_the_wall_clock_time_they_show():
    """Weekly dates at local midnight cross a daylight-saving change without gaining a time
    of day, an hour keeps its day-cycle inputs all year, and the same times written without
    a zone encode alike (no warning)."""
    weeks = pd.date_range("2024-01-01", periods=60, freq="W-MON", tz="Europe/Berlin")
    X = pd.DataFrame({"day": weeks.strftime("%Y-%m-%dT%H:%M%z"), "x": np.arange(60.0)})
    enc = TableEncoder.fit(X)
    day = enc.column("day")
    assert (day.zoned, day.clock, day.parts, day.origin[:19]) == (
        True,
        "local",
        ["year"],
        "2024-01-01T00:00:00",
    )
    assert day.high == 59 * 7  # whole weeks, where UTC would give 412.96 days
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        naive = enc.transform(X.assign(day=weeks.strftime("%Y-%m-%d %H:%M")))
    assert np.array_equal(naive, enc.transform(X))
    assert np.array_equal(enc.transform(X.assign(day=weeks)), enc.transform(X))
    hours = pd.date_range("2024-03-01", periods=24 * 60, freq="h", tz="Europe/Berlin")
    clock = TableEncoder.fit(pd.DataFrame({"t": hours}))
    assert clock.column("t").parts == ["week", "day"]
    eight = clock.transform(pd.DataFrame({"t": hours}))[hours.hour == 8]
    angle = 2 * np.pi * 8 / 24  # before and after the change of 31 March
    assert np.abs(eight[:, -2:] - [np.sin(angle), np.cos(angle)]).max() < 1e-6
    assert TableEncoder.from_config(enc.config()).column("day").clock == "local"


def test_dates_are_read_at_their_wall_clock_time_from_every_source():
    """A model fitted on naive local times reads zoned times at the hour they show; polars
    and pyarrow columns with a zone, and pandas Timestamps of two zones (what concatenating
    two sites gives), are read as a zoned pandas column is."""
    pl = pytest.importorskip("polars")
    pa = pytest.importorskip("pyarrow")
    hours = pd.date_range("2024-10-20", periods=24 * 14, freq="h", tz="Europe/Berlin")
    naive = TableEncoder.fit(pd.DataFrame({"t": hours.tz_localize(None)}))
    zoned_text = pd.DataFrame({"t": hours.strftime("%Y-%m-%dT%H:%M%z")})
    want = naive.transform(pd.DataFrame({"t": hours.tz_localize(None)}))
    assert np.array_equal(naive.transform(zoned_text), want)
    assert np.array_equal(naive.transform(pd.DataFrame({"t": hours})), want)
    midnights = pd.date_range("2024-01-01", periods=400, freq="D", tz="Europe/Berlin")
    pandas_fit = TableEncoder.fit(pd.DataFrame({"t": midnights}))
    for frame in (pl.DataFrame({"t": midnights}), pa.table({"t": midnights})):
        enc = TableEncoder.fit(as_frame(frame))
        assert enc.config() == pandas_fit.config()
        assert (enc.column("t").parts, enc.column("t").zoned) == (["year", "week"], True)
        assert np.array_equal(
            enc.transform(as_frame(frame)), pandas_fit.transform(pd.DataFrame({"t": midnights}))
        )
    york = pd.date_range("2024-10-20", periods=24 * 14, freq="h", tz="America/New_York")
    sites = pd.concat([pd.Series(hours), pd.Series(york)], ignore_index=True)
    assert sites.dtype == object
    mixed = TableEncoder.fit(pd.DataFrame({"t": sites}))
    assert mixed.column("t").zoned
    six_pm = mixed.transform(pd.DataFrame({"t": sites}))[(sites.map(lambda t: t.hour) == 18)]
    angle = 2 * np.pi * 18 / 24
    assert np.abs(six_pm[:, -2:] - [np.sin(angle), np.cos(angle)]).max() < 1e-6


def test_a_date_far_beyond_the_training_dates_is_warned_about():
    days = pd.date_range("2024-09-01", periods=91, freq="D")
    enc = TableEncoder.fit(pd.DataFrame({"day": days}))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.transform(pd.DataFrame({"day": pd.to_datetime(["2025-02-15"])}))  # within a span
    with pytest.warns(
        UserWarning,
        match=r"column 'day': 2 rows have a date beyond the training dates \(2024-09-01 to "
        r"2024-11-30\) by more than their span \(up to 2204-10-15\)",
    ):
        enc.transform(pd.DataFrame({"day": pd.to_datetime(["2204-10-15", "1970-01-20"])}))


def test_a_model_file_from_before_reads_zoned_dates_in_utc():
    """A model file without ``clock`` fitted zoned dates in UTC (Berlin's midnight in winter
    is 23:00 UTC): it keeps reading them so, and warns about dates without a zone."""
    zoned = pd.date_range("2024-01-01", periods=40, freq="D", tz="Europe/Berlin")
    X = pd.DataFrame({"day": zoned.strftime("%Y-%m-%dT%H:%M%z"), "x": np.arange(40.0)})
    cfg = TableEncoder.fit(X).config()
    for column in cfg["columns"]:
        del column["clock"]
    cfg["columns"][0]["origin"] = "2023-12-31T23:00:00.000000000"
    old = TableEncoder.from_config(cfg)
    day = old.column("day")
    assert day.clock == "utc" and day.parts == ["week"]
    assert old.transform(X.iloc[:2])[:, 0].tolist() == pytest.approx(
        [-day.mean / day.std, (1 - day.mean) / day.std]
    )
    naive = X.iloc[:1].assign(day="2024-01-01 00:00")  # read as UTC: an hour after the origin
    with pytest.warns(
        UserWarning, match="column 'day': these dates have no time zone, so they are read as UTC"
    ):
        assert old.transform(naive)[0, 0] == pytest.approx((1 / 24 - day.mean) / day.std)


def test_an_expression_naming_a_date_column_says_it_is_one():
    X = pd.DataFrame({"day": pd.date_range("2024-01-01", periods=30), "x": np.arange(30.0)})
    est = dc.DeepCTRLRegressor(rules=[Expression("y <= day")], max_epochs=1, n_seeds=1)
    with pytest.raises(ValueError, match="column 'day' is a date column; an expression can only"):
        est.fit(X, np.arange(30.0))


def test_whole_number_columns_reach_an_expression_exactly():
    from deepctrl.tabular.model_outputs import Outputs
    from deepctrl.tabular.table_rules import NamedPenalty

    X = pd.DataFrame({"stops": [0, 1, 2, 5, 0, 3], "q": [0.1, 0.4, 0.0, 0.9, 0.3, 0.7]})
    enc = TableEncoder.fit(X)
    seen = {}
    penalty = NamedPenalty(
        lambda cols, out: seen.update(cols) or out["y"], enc, Outputs.regression(["y"])
    )
    penalty(torch.from_numpy(enc.transform(X)), torch.zeros(6, 1))
    assert seen["stops"].tolist() == [0.0, 1.0, 2.0, 5.0, 0.0, 3.0]  # exact, not 3e-8 off
    assert seen["q"].tolist() == pytest.approx(X["q"].tolist(), abs=1e-6)


def test_a_column_trained_on_utc_times_reads_other_offsets_in_utc():
    stamps = pd.date_range("2024-01-01", periods=500, freq="7h", tz="UTC")
    enc = TableEncoder.fit(pd.DataFrame({"t": stamps.strftime("%Y-%m-%dT%H:%M:%SZ")}))
    assert enc.column("t").clock == "utc"
    same = ["2024-02-01T10:00:00Z", "2024-02-01T12:00:00+02:00", "2024-02-01T05:00-05:00"]
    out = enc.transform(pd.DataFrame({"t": same}))
    assert np.array_equal(out, out[[0, 0, 0]])
