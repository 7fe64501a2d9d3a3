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


def test_warnings_name_the_callers_line_through_a_linked_folder(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    import deepctrl

    linked = tmp_path / "linked"
    linked.symlink_to(Path(deepctrl.__file__).parent.parent)
    script = tmp_path / "user.py"
    script.write_text(
        "import warnings, numpy as np, pandas as pd, deepctrl as dc\n"
        "warnings.simplefilter('always')\n"
        "X = pd.DataFrame({'a': np.arange(60.0)})\n"
        "dc.DeepCTRLRegressor(validation_fraction=0.6, max_epochs=1, n_seeds=1).fit(X, X['a'])\n"
    )
    env = {"PYTHONPATH": str(linked), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env)
    assert done.returncode == 0, done.stderr
    assert f"{script}:4: UserWarning: validation_fraction=0.6" in done.stderr, done.stderr


def test_a_training_warning_of_the_estimator_names_the_callers_line():
    rng = np.random.default_rng(3)
    X = pd.DataFrame({"a": rng.normal(size=80)})
    y = (X["a"] * 2).rename("y")
    from deepctrl.tabular.table_rules import Expression

    holds = Expression("y <= 1000000")  # on every row: rho falls back to 1
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        dc.DeepCTRLRegressor(rules=[holds], max_epochs=1, n_seeds=1, random_state=0).fit(X, y)
    rho = [w for w in seen if str(w.message).startswith("rho:")]
    assert rho and {w.filename for w in rho} == {__file__}


def test_a_rule_that_cannot_be_copied_still_fits():
    import threading

    class Cached:
        def __init__(self) -> None:
            self.lock = threading.Lock()  # cannot be copied

        def excess(self, columns, outputs):  # named columns and outputs, in their units
            return outputs["y"] - 1e6

    X = pd.DataFrame({"a": np.arange(40.0)})
    rule = dc.rules.Penalty(Cached().excess)
    est = dc.DeepCTRLRegressor(rules=[rule], max_epochs=1, n_seeds=1, random_state=0)
    est.fit(X, X["a"].rename("y"))
    assert est.fitted_params_["rules"][0] is rule
