"""dc.rule_test on tables whose truth is known, its files, and its input checks."""

import dataclasses
import json

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc
from deepctrl.tabular.known_truth import RULE, known_truth_table
from deepctrl.tabular.rule_test_report import report_markdown
from deepctrl.tabular.table_rules import Expression

FEATURES = ["price", "quality", "season"]


def _estimator(max_epochs=60):
    return dc.DeepCTRLRegressor(rules=[dc.Monotonic(*RULE)], n_seeds=1, max_epochs=max_epochs)


@pytest.fixture(scope="module")
def result():
    table = known_truth_table(
        {"up": "contradicts", "down": "follows", "tiny": "follows"},
        rows=[400, 400, 7],
        effect=1.0,
        noise=0.5,
        seed=3,
    )
    return dc.rule_test(
        _estimator(), table[FEATURES], table["sales"], table["segment"], folds=3, progress=False
    )


def test_clear_segments_get_the_true_verdict(result):
    assert result.verdicts() == {
        "down": "consistent",
        "tiny": "inconclusive",
        "up": "contradicted",
        "all": result.all.verdict,
    }
    down, up = result.groups["down"].statistics, result.groups["up"].statistics
    assert down["verification_alpha0"] > 0.9 > 0.1 > up["verification_alpha0"]
    assert up["enforcement_cost_interval"][0] > down["enforcement_cost"]
    assert result.groups["tiny"].reason == "7 rows: too few to judge (50 needed)"


def test_statistics_are_consistent_with_the_stored_curves(result):
    data = result.to_dict()
    assert data["rule"] == "monotonic(price, decreasing)" and data["target"] == "sales"
    up = data["groups"]["up"]
    curve = up["curve"]
    assert curve["alpha"][0] == 0.0 and curve["alpha"][-1] == 1.0 and len(curve["alpha"]) == 21
    best = int(np.argmin(curve["error"]))
    assert up["best_alpha"] == curve["alpha"][best]
    assert up["error_best"] == pytest.approx(min(curve["error"]))
    assert up["error_alpha0"] == pytest.approx(curve["error"][0])
    assert up["enforcement_cost"] == pytest.approx(curve["error"][-1] - curve["error"][best])
    lo, hi = up["best_alpha_interval"]
    assert lo <= up["best_alpha"] <= hi
    lo, hi = up["enforcement_cost_interval"]
    assert lo <= up["enforcement_cost"] <= hi
    assert up["verification_alpha0"] == pytest.approx(curve["verification"][0])
    assert data["all"]["rows"] == 807 and up["metric"] == "mse" and up["folds"] == 3
    assert set(data["groups"]["tiny"]) == {"rows", "verdict", "reason", "metric"}


def test_the_verification_interval_counts_the_judged_rows(result):
    from deepctrl.tabular.rule_verdict import binomial_interval

    for name in ("up", "down"):
        seg = result.groups[name]
        s = seg.statistics
        # a monotonic rule judges every held-out row: folds of 134, 133 and 133 rows
        assert s["judged_rows"] == 400
        followed = round(float(seg.verification[:, 0] @ np.array([134, 133, 133])))
        assert s["followed_rows_alpha0"] == followed
        lo, hi = s["verification_alpha0_interval"]
        exact = binomial_interval(followed, 400)
        assert lo <= exact[0] < exact[1] <= hi


def test_an_interrupt_while_drawing_leaves_the_last_files_whole(result, tmp_path, monkeypatch):
    out = tmp_path / "out"
    out.mkdir()
    for name in ("rule_test.json", "report.md", "rule_test.png"):
        (out / name).write_text(f"the last run's {name}")

    def interrupted(fig, path):
        raise KeyboardInterrupt

    monkeypatch.setattr("deepctrl.tabular.rule_test_report.save_figure", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dc.write_rule_test(result, out)
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "rule_test.json", "rule_test.png"]
    assert all(p.read_text() == f"the last run's {p.name}" for p in out.iterdir())


def test_files(result, tmp_path):
    paths = dc.write_rule_test(result, tmp_path / "out")
    assert [p.name for p in paths] == ["rule_test.json", "report.md", "rule_test.png"]
    data = json.loads((tmp_path / "out" / "rule_test.json").read_text())
    assert data["groups"]["up"]["verdict"] == "contradicted"
    report = (tmp_path / "out" / "report.md").read_text()
    assert "| up | 400 | **contradicted** |" in report
    advice = report.split("## What to do with them")[1]
    assert "- **contradicted**: do not impose the rule on this group" in advice
    assert "The test judges what the data show, not cause and effect." in advice
    assert "On a classification target" not in report  # a regression target
    assert (tmp_path / "out" / "rule_test.png").read_bytes()[:4] == b"\x89PNG"
    on_classes = dataclasses.replace(result, metric="bce")
    dc.write_rule_test(on_classes, tmp_path / "classes")
    report = (tmp_path / "classes" / "report.md").read_text()
    assert "On a classification target the verdicts are weaker evidence" in report


@pytest.mark.slow
def test_the_figure_draws_the_largest_groups_and_says_how_many_it_leaves_out(result, tmp_path):
    from deepctrl.tabular.rule_test_report import MAX_PANELS, drawn_panels

    up, down = result.groups["up"], result.groups["down"]
    groups = {
        f"g{i:02d}": dataclasses.replace(up if i % 2 else down, rows=100 + i) for i in range(30)
    }
    groups["tiny"] = result.groups["tiny"]  # not judged: never drawn
    many = dataclasses.replace(result, groups=groups)
    drawn, left_out = drawn_panels(many)
    assert len(drawn) == MAX_PANELS and left_out == 30 - (MAX_PANELS - 1)
    # the 23 largest (g07 to g29) in the report's order, then all rows
    assert [name for name, _ in drawn] == [f"g{i:02d}" for i in range(7, 30)] + ["all"]
    assert drawn_panels(result)[1] == 0 and [n for n, _ in drawn_panels(result)[0]] == [
        "down",
        "up",
        "all",
    ]
    dc.write_rule_test(many, tmp_path)
    report = (tmp_path / "report.md").read_text()
    assert "the 23 largest groups; the table above holds the 7 other judged groups" in report
    assert "| g00 | 100 |" in report


def test_an_unnamed_target_is_called_y_as_in_the_estimators():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    result = dc.rule_test(
        _estimator(max_epochs=1),
        table[FEATURES],
        table["sales"].to_numpy(),
        folds=2,
        progress=False,
    )
    assert result.target == "y"


def test_the_same_seed_gives_the_same_curves():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    runs = [
        dc.rule_test(
            _estimator(max_epochs=3), table[FEATURES], table["sales"], folds=2, progress=False
        ).all.errors
        for _ in range(2)
    ]
    assert np.array_equal(runs[0], runs[1])


def test_bad_input_is_one_clear_error():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    with pytest.raises(ValueError, match="has no rules to test"):
        dc.rule_test(dc.DeepCTRLRegressor(), X, y)
    with pytest.raises(ValueError, match="needs a DeepCTRLRegressor"):
        dc.rule_test(object(), X, y)
    with pytest.raises(ValueError, match="folds must be an integer of at least 2"):
        dc.rule_test(_estimator(), X, y, folds=1)
    with pytest.raises(ValueError, match="groups has 3 values for 60 rows"):
        dc.rule_test(_estimator(), X, y, groups=["a", "b", "c"])
    with pytest.raises(ValueError, match="alphas must rise from 0 to 1"):
        dc.rule_test(_estimator(), X, y, alphas=[0.0, 0.5])
    # fold k trains with seed random_state + k, below 2**32: the last start that fits is named
    with pytest.raises(ValueError, match=r"random_state must be from 0 to 4294967291 with 5 folds"):
        dc.rule_test(_estimator(), X, y, random_state=2**32 - 1)
    with pytest.raises(ValueError, match=r"random_state must be from 0 to 4294967293 with 3 folds"):
        dc.rule_test(_estimator(), X, y, folds=3, random_state=-1)
    with pytest.raises(ValueError, match="random_state must be a whole number, got 1.5"):
        dc.rule_test(_estimator(), X, y, random_state=1.5)
    # a column's name, as the command line's --group takes, is not read as one label
    with pytest.raises(ValueError) as caught:
        dc.rule_test(_estimator(), table, y, groups="segment")
    assert str(caught.value) == (
        "groups must be one label per row, not a column name: pass the column itself "
        "(X['segment']), left out of X to test as deepctrl test-rule --group does"
    )
    halves = np.where(np.arange(60) < 30, "all", "coast")
    with pytest.raises(ValueError, match="groups has the value 'all', which names all rows"):
        dc.rule_test(_estimator(), X, y, groups=halves)
    with pytest.raises(ValueError, match="groups has 1 missing values; give them a group"):
        dc.rule_test(_estimator(), X, y, groups=[None, *["a"] * 59])
    # a classifier on a continuous target fails on every group: the caller's mistake
    classifier = dc.DeepCTRLClassifier(rules=[dc.Monotonic(*RULE)], n_seeds=1, max_epochs=1)
    halves = np.where(np.arange(60) < 30, "a", "b")
    with pytest.raises(ValueError, match="could not train on the whole table: Unknown label"):
        dc.rule_test(classifier, X, y, groups=halves, min_rows=20, progress=False)


def test_a_measurement_as_groups_is_warned_about():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    groups = np.r_[np.zeros(30), np.linspace(1, 2, 30)]  # one group of 30, then 30 of one row
    with pytest.warns(UserWarning, match="31 values and 30 of them have fewer than 20 rows"):
        dc.rule_test(_estimator(max_epochs=2), X, y, groups, folds=2, min_rows=20, progress=False)


def test_numeric_groups_keep_their_spelling_and_numeric_order():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    groups = np.repeat([10.0, 2.0, 1.5], 20)  # as a CSV reader gives whole numbers
    result = dc.rule_test(
        _estimator(max_epochs=2), X, y, groups, folds=2, min_rows=20, progress=False
    )
    assert list(result.groups) == ["1.5", "2", "10"]
    with pytest.raises(ValueError, match="groups has 1 missing values"):
        dc.rule_test(_estimator(), X, y, groups=[" ", *["a"] * 59])  # blank text is missing


def test_a_group_written_with_its_accents_as_separate_marks_is_one_group():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    groups = ["K\u00f6ln", "Ko\u0308ln"] * 15 + ["Bonn"] * 30  # alike to the eye
    result = dc.rule_test(
        _estimator(max_epochs=2), X, y, groups, folds=2, min_rows=20, progress=False
    )
    assert sorted(result.groups) == ["Bonn", "K\u00f6ln"]
    assert result.groups["K\u00f6ln"].rows == 30


def test_groups_that_differ_only_in_spaces_or_case_are_warned_about_and_kept_apart():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    groups = ["north"] * 20 + ["north "] * 20 + ["South"] * 20  # alike in a printed table
    with pytest.warns(UserWarning, match="groups 'north' and 'north ' differ only in spaces"):
        result = dc.rule_test(
            _estimator(max_epochs=2), X, y, groups, folds=2, min_rows=20, progress=False
        )
    assert sorted(result.groups) == ["South", "north", "north "]


def test_groups_that_cannot_be_judged_or_are_the_whole_table_are_named():
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    message = (
        "no value of the group column has 20 rows, the fewest a group needs "
        r"\(the largest has 2 of 60\): group more coarsely, lower min_rows"
    )
    with pytest.raises(ValueError, match=message):  # an id: one or two rows per value
        dc.rule_test(_estimator(), X, y, np.arange(60) // 2, folds=2, min_rows=20)
    with pytest.warns(UserWarning, match=r"one value \('north'\), so its group is the whole"):
        result = dc.rule_test(
            _estimator(max_epochs=2), X, y, ["north"] * 60, folds=2, progress=False
        )
    assert result.groups == {} and result.all.rows == 60


def test_too_many_groups_ask_for_min_rows(monkeypatch):
    import deepctrl.tabular.rule_test as rt

    monkeypatch.setattr(rt, "MAX_GROUPS", 10)
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    groups = pd.Series(np.arange(60) % 15)  # 15 groups of 4 rows
    message = "15 values with at least 4 rows.*raise min_rows \\(--min-rows on the command"
    with pytest.raises(ValueError, match=message):
        dc.rule_test(_estimator(), table[FEATURES], table["sales"], groups, folds=2, min_rows=4)


def test_warnings_of_a_fold_name_the_group_and_the_folds():
    table = known_truth_table({"a": "follows", "b": "follows"}, rows=[40, 40], seed=0)
    X, y = table[FEATURES].copy(), table["sales"]
    X.loc[X.index[table["segment"] == "b"][0], "quality"] = 1e4  # far beyond the others
    with pytest.warns(UserWarning) as seen:
        dc.rule_test(
            _estimator(max_epochs=2),
            X,
            y,
            table["segment"],
            folds=2,
            min_rows=20,
            progress=False,
        )
    said = [str(w.message) for w in seen if "beyond the training range" in str(w.message)]
    assert said and all(s.startswith(("group 'b', fold ", "all rows, fold ")) for s in said)
    assert any(
        s.startswith("group 'b', fold ") and s.split(": ", 1)[0].endswith(" of 2") for s in said
    )


@pytest.mark.parametrize(
    ("kind", "labels", "metric"),
    [
        ("regressor", None, "mae"),
        ("classifier", [0, 1], "bce"),
        ("classifier", [0, 1, 2], "cross_entropy"),
    ],
)
def test_a_test_that_trains_nothing_still_names_its_metric_and_folds(kind, labels, metric):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.normal(size=30), "quality": rng.normal(size=30)})
    if labels is None:
        y = pd.Series(rng.normal(size=30), name="sales")
        est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], loss="mae")
    else:
        y = pd.Series(np.resize(labels, 30), name="sales")
        est = dc.DeepCTRLClassifier(rules=[dc.Monotonic("price", "decreasing", output=1)])
    result = dc.rule_test(est, X, y, folds=4, min_rows=100, progress=False)
    assert result.all.reason == "30 rows: too few to judge (100 needed)"
    data = result.to_dict()
    assert data["all"]["metric"] == metric and data["groups"] == {}
    report = report_markdown(result)
    assert f"error metric {metric} on held-out rows (4 folds per group" in report
    assert f"| {metric} at alpha 0 |" in report


def test_a_group_name_with_a_bar_keeps_the_report_table_in_its_columns(result):
    """Category paths such as food|snacks are common group values; GitHub markdown ends a
    cell at every unescaped bar."""
    import re

    groups = {f"food|{name}": seg for name, seg in result.groups.items()}
    report = report_markdown(dataclasses.replace(result, groups=groups))
    rows = [line for line in report.splitlines() if line.startswith("| ")]
    cells = [re.split(r"(?<!\\)\|", row.strip()[1:-1]) for row in rows]
    assert len(rows) == 5  # header, up, down, tiny and all
    assert [len(c) for c in cells] == [10] * 5
    assert [c[0].strip() for c in cells[1:]] == [r"food\|down", r"food\|tiny", r"food\|up", "all"]


def test_a_column_without_values_in_a_group_is_left_out_of_that_groups_models():
    # a discount and a promo code that one store never gives: its rows have none
    table = known_truth_table({"a": "follows", "b": "follows"}, rows=60, seed=0)
    X = table[FEATURES].assign(
        discount=np.where(table["segment"] == "a", 0.1, np.nan),
        code=np.where(table["segment"] == "a", "x", None),
    )
    result = dc.rule_test(
        _estimator(max_epochs=2),
        X,
        table["sales"],
        table["segment"],
        folds=2,
        min_rows=20,
        progress=False,
    )
    assert not result.groups["b"].reason.startswith("could not train"), result.groups["b"]
    assert len(result.groups["b"].errors) == 2  # two folds trained


def test_a_group_without_values_in_a_column_the_rule_names_is_not_judged():
    table = known_truth_table({"a": "follows", "b": "follows"}, rows=60, seed=0)
    X = table[FEATURES].assign(cost=np.where(table["segment"] == "a", 1.0, np.nan))
    est = _estimator(max_epochs=2)
    est.set_params(rules=[Expression("sales >= cost")])
    result = dc.rule_test(
        est, X, table["sales"], table["segment"], folds=2, min_rows=20, progress=False
    )
    b = result.groups["b"]
    assert (b.verdict, b.reason) == (
        "inconclusive",
        "the rule's column 'cost' has no values in this segment",
    )
    assert b.errors is None and b.rows == 60
    assert result.groups["a"].errors.shape[0] == 2  # the other group is trained and judged


def test_a_classifier_is_judged_on_folds_that_each_train_on_every_class():
    rng = np.random.default_rng(0)
    n = 200
    X = pd.DataFrame({"dose": rng.uniform(0, 1, n), "age": rng.uniform(20, 80, n)})
    risk = np.where(X["dose"] + rng.normal(0, 0.2, n) > 0.5, "high", "low").astype(object)
    risk[[3, 4]] = "extreme"  # a class of two rows, fewer than the folds
    estimator = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("dose", "increasing", output="high")], n_seeds=1, max_epochs=3
    )
    with pytest.warns(UserWarning):  # the rare class is never predicted
        # unstratified folds of this seed hold both rows of the rare class in one fold
        result = dc.rule_test(
            estimator, X, pd.Series(risk), folds=5, random_state=3, progress=False
        )
    assert result.all.reason is None or "not seen in training" not in result.all.reason
    assert result.all.statistics["error_alpha0"] > 0  # judged on every fold


def test_a_rule_naming_no_class_acts_on_one_class_in_every_group():
    rng = np.random.default_rng(1)
    n = 120
    X = pd.DataFrame({"price": rng.uniform(0, 1, 2 * n)})
    level = np.where(X["price"] > 0.5, "low", "high").astype(object)
    level[n::3] = "mid"  # group b has the three classes; group a only high and low
    groups = pd.Series(["a"] * n + ["b"] * n)
    estimator = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("price", "decreasing")], n_seeds=1, max_epochs=2
    )
    with pytest.warns(
        UserWarning,
        match=r"names no class, so in every group it acts on "
        r"P\('high'\), the first of the table's classes",
    ):
        result = dc.rule_test(estimator, X, pd.Series(level), groups, folds=2, progress=False)
    data = result.to_dict()
    assert data["rule"] == "monotonic(price, decreasing, on 'high')"
    # the table's three classes name the error, group a's of two classes too
    assert result.metric == data["all"]["metric"] == data["groups"]["a"]["metric"]
    assert result.metric == "cross_entropy"


def test_groups_of_another_shape_or_kind_and_a_polars_targets_name():
    pl = pytest.importorskip("polars")
    table = known_truth_table({"a": "follows"}, rows=60, seed=0)
    X, y = table[FEATURES], table["sales"]
    with pytest.raises(ValueError, match=r"groups must be one column, .*not X\[\['segment'\]\]"):
        dc.rule_test(_estimator(1), X, y, table[["segment"]], folds=2, progress=False)
    days = pd.Series(pd.to_datetime(["2024-01-01"] * 30 + ["2024-01-02"] * 30))
    with pytest.raises(
        ValueError,
        match=r"groups holds a value that cannot name a group .*"
        r"dates as text: groups.astype\(str\)",
    ):
        dc.rule_test(_estimator(1), X, y, days, folds=2, progress=False)
    result = dc.rule_test(_estimator(1), X, pl.from_pandas(table)["sales"], folds=2, progress=False)
    assert result.target == "sales"
