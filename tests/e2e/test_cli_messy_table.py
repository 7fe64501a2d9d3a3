"""The installed command on a table as it comes: missing numbers and text, a date column in
ISO text, text categories, a count column and a named class; the CLI builds the model the
estimator builds."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc
from deepctrl.io.onnx_export import EXPORTER_READY
from helpers import stores_csv


def messy_csv(folder: Path, n: int = 300) -> Path:
    rng = np.random.default_rng(7)
    dist = rng.uniform(1, 60, n).round(2)
    stops = rng.poisson(1.0, n)  # a count, mostly 0 or 1
    carrier = rng.choice(["north", "south", "east"], n)
    day = pd.date_range("2024-01-01", periods=n, freq="D")
    late = dist / 60 + 0.15 * stops + rng.normal(0, 0.2, n) > 0.6
    frame = pd.DataFrame(
        {
            "dist_km": dist,
            "stops": stops,
            "carrier": carrier,
            "day": day.strftime("%Y-%m-%d"),
            "status": np.where(late, "late", "ontime"),
        }
    )
    frame.loc[::13, "dist_km"] = np.nan
    frame.loc[5::17, "carrier"] = ""
    path = folder / "deliveries.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def messy(tmp_path_factory):
    return messy_csv(tmp_path_factory.mktemp("messy"))


@pytest.fixture(scope="module")
def fitted(cli, tmp_path_factory):
    """The messy table with an order id column, and a model fitted on it by the command."""
    folder = tmp_path_factory.mktemp("fitted")
    frame = pd.read_csv(messy_csv(folder))
    frame.insert(0, "order_id", [f"o{i:05d}" for i in range(len(frame))])
    data, model = folder / "with_ids.csv", folder / "m.deepctrl"
    frame.to_csv(data, index=False)
    done = cli(
        "fit",
        str(data),
        "--target",
        "status",
        "--id-column",
        "order_id",
        "--monotonic",
        "dist_km=increasing",
        "--monotonic",
        "stops=increasing",
        "--rule-class",
        "late",
        "--max-epochs",
        "10",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        str(model),
    )
    assert done.returncode == 0, done.stderr
    return frame, model, done.stdout


def test_fit_on_a_messy_table_says_what_it_did(fitted):
    frame, model, out = fitted
    # 300 rows given, one in 13 without dist_km, one in 17 from the sixth on without carrier
    assert len(frame) == 300
    assert "missing values in the 300 rows given: dist_km 24 (filled with the column's mean" in out
    assert "carrier 18 (as a category of its own)" in out
    # the ISO text dates are days since 2024-01-01 and a weekday cycle: 3 inputs, not 300
    assert "dates: day from 2024-01-01T00:00:00 (3 inputs: days, week cycle)" in out
    assert (
        "rules: monotonic(dist_km, increasing, on 'late'): P('late'), "
        "monotonic(stops, increasing, on 'late'): P('late')" in out
    )
    assert "default alpha: alpha " in out and "lowest validation error: alpha " in out
    est = dc.DeepCTRLClassifier.load(model)
    assert est.encoder_.n_encoded == 2 + 1 + 4 + 3  # dist (+ indicator), stops, carrier, day


@pytest.mark.slow
def test_the_command_line_and_python_build_the_same_model(cli, messy, tmp_path):
    model, pred = tmp_path / "m.deepctrl", tmp_path / "p.csv"
    done = cli(
        "fit",
        str(messy),
        "--target",
        "status",
        "--monotonic",
        "stops=increasing",
        "--rule-class",
        "late",
        "--max-epochs",
        "15",
        "--seed",
        "3",
        "--no-progress",
        "--out",
        str(model),
    )
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(messy)
    X, y = frame.drop(columns="status"), frame["status"]
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("stops", "increasing", output="late")], max_epochs=15, random_state=3
    ).fit(X, y)
    # the count column gets the same additive perturbation on both paths
    cli_rule = dc.DeepCTRLClassifier.load(model).rule_
    assert cli_rule.perturbation.config() == est.rule_.perturbation.config()
    assert cli_rule.perturbation.inner.config()["kind"] == "additive"
    unlabelled = tmp_path / "new.csv"
    X.to_csv(unlabelled, index=False)
    done = cli("predict", str(model), str(unlabelled), "--alpha", "0.7", "--out", str(pred))
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(pred)
    assert len(written) == len(X)  # rows with missing values are scored too
    np.testing.assert_allclose(
        written["proba_late"], est.predict_proba(X, alpha=0.7)[:, 0], rtol=1e-5
    )


def test_predict_alpha_limits(cli, messy, fitted, tmp_path):
    _, model, _ = fitted
    done = cli(
        "predict", str(model), str(messy), "--alpha", "-0.1", "--out", str(tmp_path / "p.csv")
    )
    assert done.returncode == 2 and done.stderr.strip() == (
        "deepctrl: error: --alpha must be >= 0 (0 follows the data, 1 the rule), got -0.1"
    )
    done = cli(
        "predict", str(model), str(messy), "--alpha", "1.3", "--out", str(tmp_path / "p.csv")
    )
    assert done.returncode == 0
    assert done.stderr.strip() == (
        "note: alpha 1.3 is above 1: the rule's direction is "
        "extrapolated beyond training (alphas were drawn from 0 to 1)"
    )


@pytest.mark.slow
def test_id_columns_pass_through_and_alpha_can_vary_by_row(cli, fitted, tmp_path):
    frame, model, _ = fitted
    est = dc.DeepCTRLClassifier.load(model)
    assert "order_id" not in est.encoder_.names  # never a feature
    new = frame.drop(columns="status").iloc[::-1]  # another order
    new["strength"] = np.tile([0.0, 0.5, 1.0], len(new))[: len(new)]
    new.to_csv(tmp_path / "new.csv", index=False)
    pred = tmp_path / "p.csv"
    done = cli(
        "predict",
        str(model),
        str(tmp_path / "new.csv"),
        "--id-column",
        "order_id",
        "--alpha-column",
        "strength",
        "--out",
        str(pred),
    )
    assert done.returncode == 0, done.stderr
    assert "at per-row alpha (column 'strength', 0 to 1)" in done.stdout
    written = pd.read_csv(pred)
    assert list(written.columns[:2]) == ["order_id", "status"]
    assert written["order_id"].tolist() == new["order_id"].tolist()  # row for row
    expected = est.predict_proba(new[est.encoder_.names], alpha=new["strength"].to_numpy())
    np.testing.assert_allclose(written["proba_late"], expected[:, 0], rtol=1e-5)
    for args, message in [
        (["--alpha", "0.5", "--alpha-column", "strength"], "not allowed with argument"),
        (["--alpha-column", "nope"], "has no alpha column 'nope'"),
    ]:
        done = cli(
            "predict",
            str(model),
            str(tmp_path / "new.csv"),
            *args,
            "--out",
            str(tmp_path / "q.csv"),
        )
        assert done.returncode == 2 and message in done.stderr, done.stderr
    # a model input as an id column (a panel's keys are inputs): written first, as read
    keyed = tmp_path / "keyed.csv"
    done = cli(
        "predict",
        str(model),
        str(tmp_path / "new.csv"),
        "--id-column",
        "stops",
        "--id-column",
        "order_id",
        "--alpha",
        "0.5",
        "--out",
        str(keyed),
    )
    assert done.returncode == 0, done.stderr
    written = pd.read_csv(keyed)
    assert list(written.columns[:3]) == ["stops", "order_id", "status"]
    assert written["stops"].tolist() == new["stops"].tolist()
    plain = est.predict_proba(new[est.encoder_.names], alpha=0.5)
    np.testing.assert_allclose(written["proba_late"], plain[:, 0], rtol=1e-5)


@pytest.mark.slow
@pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")
def test_export_writes_an_onnx_file_that_predicts_as_the_model(cli, fitted, tmp_path):
    import onnxruntime as ort

    frame, model, _ = fitted
    rows, onnx_file = tmp_path / "rows.csv", tmp_path / "late.onnx"
    frame.iloc[:80].to_csv(rows, index=False)
    done = cli("export", str(model), "--out", str(onnx_file), "--check", str(rows))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert (
        lines[1] == "inputs: dist_km (float32), stops (float32), carrier (string), "
        "day (int64 ns of the wall-clock time), alpha (float32, one per row)"
    )
    assert lines[2].startswith("outputs: label, probabilities; default alpha ")
    assert lines[3].startswith("checked: on the 80 rows of ")
    est = dc.DeepCTRLClassifier.load(model)
    X = frame.drop(columns=["order_id", "status"])
    alpha = np.linspace(0.0, 1.0, len(X))
    label, proba = ort.InferenceSession(str(onnx_file)).run(None, est.onnx_inputs(X, alpha))
    assert np.abs(proba - est.predict_proba(X, alpha)).max() <= 1e-4
    assert set(label.tolist()) <= {"late", "ontime"}
    bad = cli("export", str(rows), "--out", str(tmp_path / "x.onnx"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x.onnx").exists()


@pytest.mark.slow
@pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")
def test_categories_that_look_like_numbers_predict_as_in_training(cli, tmp_path):
    """A store called "10": a prediction file where every store is 10 reads as numbers,
    yet finds that category in the command's predictions and in the ONNX file."""
    stores_csv(tmp_path / "stores.csv")
    pd.DataFrame({"store": ["10", "10"], "x": [0.2, 0.8]}).to_csv(
        tmp_path / "tens.csv", index=False
    )
    model, out = tmp_path / "stores.deepctrl", tmp_path / "p.csv"
    done = cli(
        "fit",
        "stores.csv",
        "--target",
        "y",
        "--max-epochs",
        "40",
        "--no-progress",
        "--out",
        str(model),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    done = cli("predict", str(model), "tens.csv", "--out", str(out), cwd=tmp_path)
    assert done.returncode == 0 and "not seen in training" not in done.stderr, done.stderr
    est = dc.DeepCTRLRegressor.load(model)
    as_text = pd.DataFrame({"store": ["10", "10"], "x": [0.2, 0.8]})
    np.testing.assert_allclose(pd.read_csv(out)["y"], est.predict(as_text), rtol=1e-6)
    done = cli(
        "export", str(model), "--out", str(tmp_path / "s.onnx"), "--check", "tens.csv", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
