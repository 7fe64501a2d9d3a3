"""Messages about the data: warnings point at the user's own line, from predict and sweep
alike; a column type deepctrl cannot read says how to convert it."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import deepctrl as dc


def test_a_warning_about_new_rows_names_the_callers_line():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=200)})
    est = dc.DeepCTRLRegressor(max_epochs=2, random_state=0, verbose=False).fit(X, X["a"])
    far = pd.DataFrame({"a": [1e6]})
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est.predict(far)
        est.sweep(far, [1.0])
    assert len(seen) == 2, [str(w.message) for w in seen]
    assert {w.filename for w in seen} == {__file__}
    assert seen[1].lineno == seen[0].lineno + 1


def test_a_period_column_is_refused_with_the_conversion():
    X = pd.DataFrame({"week": pd.period_range("2024-01", periods=40, freq="W"), "a": range(40)})
    try:
        dc.DeepCTRLRegressor(max_epochs=1).fit(X, X["a"])
    except ValueError as exc:
        message = str(exc)
    assert message.endswith(
        "use numbers, dates, text, categories or booleans (a period: "
        "X['week'].dt.to_timestamp() makes dates of it)"
    ), message


def test_warnings_of_fit_and_of_missing_values_name_the_callers_line():
    rng = np.random.default_rng(1)
    X = pd.DataFrame({"a": rng.normal(size=60), "q": rng.normal(size=60)})
    small = {"max_epochs": 2, "n_seeds": 1, "random_state": 0}
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        est = dc.DeepCTRLRegressor(validation_fraction=0.6, **small).fit(X, X["a"])
        dc.DeepCTRLRegressor(**small).fit(X, np.full(60, 3.0))
        est.predict(X.head(2).assign(q=[np.nan, 1.0]))
        est.sweep(X.head(2).assign(q=[np.nan, 1.0]), alphas=[0.0])
    said = {str(w.message).split(":")[0].split(" trains")[0]: w for w in seen}
    assert set(said) >= {"validation_fraction=0.6", "target 'y' is constant (3)", "column 'q'"}
    assert {w.filename for w in seen} == {__file__}, [(w.filename, w.lineno) for w in seen]
    first = said["validation_fraction=0.6"].lineno
    lines = sorted({w.lineno for w in seen})
    assert lines == [first, first + 1, first + 2, first + 3]
