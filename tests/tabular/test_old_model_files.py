"""Model files written by earlier versions load with the rules they were trained with.

Each old file is made from a model fitted now, its stored config rewritten as the earlier
version wrote it (the fitted values it did not yet keep removed, the rule stored in the
earlier meaning); loading it must give back the rule and sweep of the model as fitted."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from torch import nn

import deepctrl as dc
from deepctrl.io.checkpoint import read_checkpoint, save

FAST = {"max_epochs": 6, "n_seeds": 1, "random_state": 0}


def _as_written_before(
    est: Any, path: Path, dropped: tuple[str, ...], rewrite: Callable[[dict[str, Any]], None]
) -> Path:
    """``est`` saved, then its config rewritten: ``dropped`` fitted values removed and each
    stored rule passed through ``rewrite``."""
    est.save(path)
    config = read_checkpoint(path).config
    for key in dropped:
        config["fitted"].pop(key, None)
    for item in config["rules"]:
        rewrite(item["rule"])
    save(nn.ModuleList(est.models_), path, config)
    return path


def _sweeps_alike(old: Any, new: Any, X: pd.DataFrame, y: Any) -> None:
    alphas = [0.0, 0.5, 1.0]
    pd.testing.assert_frame_equal(old.sweep(X, y, alphas=alphas), new.sweep(X, y, alphas=alphas))


def test_a_two_class_rule_from_before_rules_named_classes_acts_on_the_second(tmp_path):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.uniform(20, 80, 300), "bmi": rng.normal(25, 4, 300)})
    y = np.where(0.05 * (X["age"] - 50) + rng.normal(0, 1, 300) > 0, "sick", "well")
    rule = dc.Monotonic("age", "increasing", output="well")
    est = dc.DeepCTRLClassifier(rules=[rule], **FAST).fit(X, y)

    def position(rule: dict[str, Any]) -> None:  # the one output: P(second class)
        rule["output"] = 0

    dropped = ("min_error_alpha_", "alpha_", "recipe_", "judged_rows_")
    path = _as_written_before(est, tmp_path / "old.deepctrl", dropped, position)
    old = dc.DeepCTRLClassifier.load(path)
    assert old.rules[0].output == "well"
    assert "monotonic(age, increasing, on 'well')" in old.summary()
    _sweeps_alike(old, est, X, y)


def test_whole_number_classes_named_by_position_load(tmp_path):
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"x": rng.normal(size=300)})
    y = np.digitize(X["x"] + rng.normal(0, 0.5, 300), [-0.5, 0.5]) + 1  # classes 1, 2, 3
    est = dc.DeepCTRLClassifier(rules=[dc.Monotonic("x", "decreasing", output=1)], **FAST)
    est.fit(X, y)

    def position(rule: dict[str, Any]) -> None:  # the first class, by its position
        rule["output"] = 0

    path = _as_written_before(est, tmp_path / "old.deepctrl", ("recipe_", "judged_rows_"), position)
    old = dc.DeepCTRLClassifier.load(path)
    assert old.rules[0].output == 1
    _sweeps_alike(old, est, X, y)
    # a file written since stores the label itself, read as such
    assert dc.DeepCTRLClassifier.load(est.save(tmp_path / "new.deepctrl")).rules[0].output == 1


@pytest.mark.parametrize("by", ["name", "position"])
def test_a_count_rule_without_a_perturbation_keeps_the_one_it_was_trained_with(tmp_path, by):
    rng = np.random.default_rng(2)
    stops = rng.integers(0, 6, 300)
    X = pd.DataFrame({"stops": stops, "km": rng.uniform(100, 900, 300)})
    y = 500 - 40 * stops + 0.1 * X["km"] + rng.normal(0, 5, 300)
    tenth = 0.1 * float(np.std(stops))  # the default for counts before: under one stop
    given = dc.rules.Additive(tenth)
    if by == "position":  # a rule on an array names its column by position
        X = X.to_numpy()
    feature = "stops" if by == "name" else 0
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic(feature, "decreasing", perturbation=given)], **FAST
    )
    est.fit(X, y)

    def unset(rule: dict[str, Any]) -> None:
        rule["perturbation"] = None

    path = _as_written_before(est, tmp_path / "old.deepctrl", ("judged_rows_",), unset)
    old = dc.DeepCTRLRegressor.load(path)
    assert old.rule_.perturbation.inner.scale == tenth  # not today's one unit
    _sweeps_alike(old, est, X, y)


def _float_coded(n: int = 300) -> tuple[pd.DataFrame, pd.Series]:
    """Classes 1, 2, 3 read as floats, as pandas reads a column of codes with a blank cell."""
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"x": rng.normal(size=n)})
    codes = np.digitize(X["x"] + rng.normal(0, 0.5, n), [-0.5, 0.5]) + 1.0
    return X, pd.Series(codes, name="code")


def test_an_integer_output_on_float_coded_classes_names_the_class_of_that_value(tmp_path):
    X, y = _float_coded()
    est = dc.DeepCTRLClassifier(rules=[dc.Monotonic("x", "decreasing", output=2)], **FAST)
    est.fit(X, y)
    assert est.classes_.tolist() == [1.0, 2.0, 3.0]
    assert "monotonic(x, decreasing, on 2): P('2.0')" in est.summary()
    path = est.save(tmp_path / "new.deepctrl")
    assert read_checkpoint(path).config["rules"][0]["rule"]["output"] == 2.0  # the label
    loaded = dc.DeepCTRLClassifier.load(path)
    assert "P('2.0')" in loaded.summary()
    _sweeps_alike(loaded, est, X, y)


def test_an_integer_output_on_float_coded_classes_from_before_is_a_position(tmp_path):
    X, y = _float_coded()
    est = dc.DeepCTRLClassifier(rules=[dc.Monotonic("x", "increasing", output=3.0)], **FAST)
    est.fit(X, y)

    def position(rule: dict[str, Any]) -> None:  # the third class, as files stored it
        rule["output"] = 2

    old = dc.DeepCTRLClassifier.load(
        _as_written_before(est, tmp_path / "old.deepctrl", (), position)
    )
    assert old.rules[0].output == 3.0 and "P('3.0')" in old.summary()
    _sweeps_alike(old, est, X, y)
