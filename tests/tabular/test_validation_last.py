"""validation="last": the latest rows (as given) stop the networks and choose alpha."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc


def test_the_last_rows_are_the_validation_rows():
    rng = np.random.default_rng(0)
    n = 500
    X = pd.DataFrame({"t": np.arange(n) / n, "price": rng.uniform(1, 9, n)})
    y = 5 * X["t"] - 0.5 * X["price"] + rng.normal(0, 0.1, n)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("price", "decreasing")],
        validation="last",
        max_epochs=5,
        random_state=0,
        verbose=False,
    ).fit(X, y)
    assert (est.n_train_, est.n_validation_) == (400, 100)
    assert est.summary().startswith(
        "trained DeepCTRLRegressor on 400 rows (validated on the last 100)"
    )
    latest = est.sweep(X.iloc[-100:], y.iloc[-100:], alphas=est.validation_sweep_["alpha"])
    np.testing.assert_allclose(latest["mse"], est.validation_sweep_["mse"], rtol=1e-6)
    in_order = est.sweep(
        X.iloc[-100:], y.iloc[-100:], est.validation_sweep_["alpha"], by_value=False
    )
    assert in_order["verification_ratio"].tolist() == est.validation_sweep_["verification_ratio"]
    earliest = est.sweep(X.iloc[:100], y.iloc[:100], alphas=est.validation_sweep_["alpha"])
    assert not np.allclose(earliest["mse"], est.validation_sweep_["mse"], rtol=1e-3)
    with pytest.raises(ValueError, match="validation must be one of"):
        dc.DeepCTRLRegressor(validation="latest").fit(X, y)


def test_the_command_line_validates_on_the_files_last_rows(tmp_path, capsys):
    from deepctrl.cli.main import main

    rng = np.random.default_rng(0)
    n = 300
    frame = pd.DataFrame({"week": np.arange(n), "price": rng.uniform(1, 9, n)})
    frame["units"] = 0.02 * frame["week"] - 0.5 * frame["price"] + rng.normal(0, 0.1, n)
    frame.to_csv(tmp_path / "ts.csv", index=False)
    args = [
        "fit",
        str(tmp_path / "ts.csv"),
        "--target",
        "units",
        "--out",
        str(tmp_path / "m.deepctrl"),
    ]
    quick = ["--max-epochs", "2", "--no-progress", "--monotonic", "price=decreasing"]
    assert main([*args, *quick, "--validate-last"]) == 0
    out, _ = capsys.readouterr()
    assert "trained DeepCTRLRegressor on 240 rows (validated on the last 60)" in out
    assert main([*args, *quick, "--validate-last", "--cross-fit"]) == 2
    assert "--validate-last and --cross-fit exclude each other" in capsys.readouterr().err


def test_last_rows_that_are_not_the_latest_or_hold_a_class_alone_are_named():
    rng = np.random.default_rng(0)
    weeks = pd.date_range("2023-01-01", periods=50, freq="7D")
    X = pd.DataFrame({"store": np.repeat(["a", "b", "c"], 50), "week": np.tile(weeks, 3)}).assign(
        price=rng.uniform(1, 9, 150)
    )
    y = 10 - X["price"] + rng.normal(0, 0.1, 150)
    fast = {"validation": "last", "max_epochs": 2, "random_state": 0, "verbose": False}
    unsorted = "validation='last' holds out the last 30 rows as given, but by 'week' they are"
    with pytest.warns(UserWarning, match=unsorted):
        dc.DeepCTRLRegressor(**fast).fit(X, y)  # sorted by store: the last rows are store c
    by_week = X.sort_values("week", kind="stable")
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="validation='last' holds out")
        dc.DeepCTRLRegressor(**fast).fit(by_week, y[by_week.index])
    labels = np.where(X["price"] > 5, "high", "low")
    labels[-30:] = "new"
    with pytest.warns(
        UserWarning,
        match="class 'new' has no training row: all 30 of its rows "
        r"are among the last 30 \(validation='last'\)",
    ):
        dc.DeepCTRLClassifier(**fast).fit(X.sort_values("week", kind="stable"), labels)


def test_validate_last_needs_validation_rows_on_the_command_line(tmp_path, capsys):
    from deepctrl.cli.main import main

    frame = pd.DataFrame({"x": np.arange(60.0), "y": np.arange(60.0)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    args = ["fit", str(tmp_path / "t.csv"), "--target", "y", "--out", str(tmp_path / "m.deepctrl")]
    assert main([*args, "--validate-last", "--val-fraction", "0"]) == 2
    assert capsys.readouterr().err.strip() == (
        "deepctrl: error: --validate-last needs validation rows: --val-fraction 0 holds none out"
    )
