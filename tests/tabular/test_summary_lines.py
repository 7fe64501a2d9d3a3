"""What `summary()` says of a fit in words: counts in the singular, metrics without a value."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import deepctrl as dc


def test_a_missing_auc_says_why_and_one_date_input_is_singular():
    rng = np.random.default_rng(0)
    n = 200
    weeks = pd.Timestamp("2024-01-07") + pd.to_timedelta(7 * (np.arange(n) % 20), unit="D")
    X = pd.DataFrame({"a": rng.normal(size=n), "week": weeks})  # Sundays over 20 weeks
    y = np.where(X["a"] > 0, "x", "y")
    y[0] = "z"  # a class of one row: in the training rows, none left to validate on
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = dc.DeepCTRLClassifier(max_epochs=2, random_state=0, verbose=False).fit(X, y)
    lines = est.summary().splitlines()
    assert "dates: week from 2024-01-07T00:00:00 (1 input: days)" in lines
    assert lines[-1].endswith(", auc n/a (a class has no validation row)"), lines[-1]


def test_an_expression_rule_shows_its_text():
    from deepctrl.tabular.table_rules import Expression

    rule = Expression("sales <= 3 * quality + 25", tau=0.5)
    assert repr(rule) == "Expression(expression='sales <= 3 * quality + 25', tau=0.5)"
    shown = repr(dc.DeepCTRLRegressor(rules=[rule]))
    assert "rules=[Expression(expression='sales <= 3 * quality + 25', tau=0.5)]" in shown


def test_the_dates_line_names_every_input_a_date_column_takes():
    """Blank dates add an indicator: the parts named add up to the count given."""
    rng = np.random.default_rng(0)
    n = 200
    days = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 60, n), unit="D")
    X = pd.DataFrame({"a": rng.normal(size=n), "day": days})
    X.loc[[3, 7], "day"] = pd.NaT
    est = dc.DeepCTRLRegressor(max_epochs=2, random_state=0).fit(X, X["a"].to_numpy())
    line = next(s for s in est.summary().splitlines() if s.startswith("dates: "))
    assert line.endswith("(4 inputs: days, week cycle, missing indicator)"), line


def test_the_alpha_0_line_says_the_errors_are_weighted_by_sample_weight(tmp_path):
    """Weights that differ weigh the printed errors, and the summary says so, also after
    loading; weights that end equal on the rows kept (zero weights drop rows) do not."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=120)})
    y = X["a"].to_numpy() + rng.normal(scale=0.1, size=120)
    kw = {"max_epochs": 2, "n_seeds": 1, "random_state": 0}
    weights = np.where(np.arange(120) % 2 == 0, 1.0, 4.0)
    est = dc.DeepCTRLRegressor(**kw).fit(X, y, sample_weight=weights)
    line = next(s for s in est.summary().splitlines() if " at alpha 0" in s)
    assert line.startswith("validation at alpha 0 (rows weighted by sample_weight): mae "), line
    est.save(tmp_path / "m")
    assert line in dc.DeepCTRLRegressor.load(tmp_path / "m").summary().splitlines()
    alike = dc.DeepCTRLRegressor(**kw).fit(X, y, sample_weight=np.where(weights == 1, 0, 3.0))
    line = next(s for s in alike.summary().splitlines() if " at alpha 0" in s)
    assert line.startswith("validation at alpha 0: mae "), line
    yc = np.where(X["a"] > 0, "up", "down")
    both = dc.DeepCTRLClassifier(class_weight="balanced", **kw).fit(X, yc, sample_weight=weights)
    line = next(s for s in both.summary().splitlines() if " at alpha 0" in s)
    assert "(rows weighted by sample_weight and classes weighted by class_weight): " in line
