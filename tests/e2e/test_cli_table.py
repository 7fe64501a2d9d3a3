"""``deepctrl fit/sweep/predict`` through the INSTALLED command, as a user runs it: results,
every bad-input case (one line on stderr, exit code 2, no traceback), a fit killed with
SIGKILL leaves no model file, and a pickle passed as a model is never executed."""

from __future__ import annotations

import json
import os
import pickle
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "cli"))
from test_commands import bad_files, cases, write_table


@pytest.fixture(scope="module")
def fitted(cli, tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("e2e")
    data = write_table(folder)
    model = folder / "model.deepctrl"
    done = cli(
        "fit",
        str(data),
        "--target",
        "sales",
        "--monotonic",
        "price=decreasing",
        "--max-epochs",
        "3",
        "--no-progress",
        "--out",
        str(model),
    )
    assert done.returncode == 0, done.stderr
    assert "default alpha: alpha " in done.stdout and "verification " in done.stdout
    return data, model


class Payload:
    """A pickle whose unpickling creates a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


@pytest.mark.slow
def test_fit_sweep_predict(cli, fitted, tmp_path):
    data, model = fitted
    done = cli("sweep", str(model), str(data), "--alphas", "0:1:0.25", "--json")
    rows = json.loads(done.stdout)
    assert done.returncode == 0 and [r["alpha"] for r in rows] == [0, 0.25, 0.5, 0.75, 1.0]
    assert all(0 <= r["verification_ratio"] <= 1 and r["mae"] > 0 for r in rows)
    shuffled = pd.read_csv(data).sample(frac=1.0, random_state=0).drop(columns="sales")
    shuffled.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "pred.csv"
    done = cli(
        "predict", str(model), str(tmp_path / "new.csv"), "--alpha", "0.5", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    pred = pd.read_csv(out)
    assert list(pred.columns) == ["sales"] and len(pred) == len(shuffled)
    # row order kept: the same rows predicted one by one agree
    first = tmp_path / "first.csv"
    shuffled.head(1).to_csv(first, index=False)
    cli("predict", str(model), str(first), "--alpha", "0.5", "--out", str(tmp_path / "p1"))
    assert pd.read_csv(tmp_path / "p1")["sales"].iloc[0] == pytest.approx(pred["sales"].iloc[0])


def test_cross_fit_through_the_installed_command(cli, fitted, tmp_path):
    data, _ = fitted
    model = tmp_path / "cross.deepctrl"
    common = ("--target", "sales", "--monotonic", "price=decreasing", "--max-epochs", "3")
    done = cli("fit", str(data), *common, "--cross-fit", "--no-progress", "--out", str(model))
    assert done.returncode == 0, done.stderr
    assert "cross-fitted: 5 networks, each validated on its own fold" in done.stdout
    assert "out-of-fold at alpha 0" in done.stdout
    out = tmp_path / "pred.csv"
    done = cli("predict", str(model), str(data), "--out", str(out))
    assert done.returncode == 0 and len(pd.read_csv(out)) == len(pd.read_csv(data))


@pytest.mark.slow
def test_every_bad_input_through_the_installed_command(cli, fitted, tmp_path):
    data, model = fitted
    out = tmp_path / "out.model"
    for args, message in cases(data, model, bad_files(tmp_path, data), out):
        done = cli(*args)
        lines = done.stderr.splitlines()
        assert done.returncode == 2, (args, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("deepctrl: error: "), (args, done.stderr)
        assert re.search(message, lines[0]), (args, lines[0])
        assert "Traceback" not in done.stderr and not out.exists()


def test_a_pickle_passed_as_a_model_is_never_executed(cli, tmp_path):
    marker = tmp_path / "unpickled"
    evil = tmp_path / "model.deepctrl"
    evil.write_bytes(pickle.dumps(Payload(marker)))
    pickle.loads(evil.read_bytes())  # the payload is real: unpickling creates the marker
    assert marker.exists()
    marker.unlink()
    data = write_table(tmp_path, n=10)
    done = cli("predict", str(evil), str(data), "--out", str(tmp_path / "p.csv"))
    assert done.returncode == 2 and "looks like a pickle" in done.stderr
    assert len(done.stderr.splitlines()) == 1
    assert not marker.exists() and not (tmp_path / "p.csv").exists()


@pytest.mark.slow
@pytest.mark.parametrize("existing", [False, True])
def test_sigkill_during_fit_leaves_no_partial_model(tmp_path, existing):
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"x": rng.uniform(1, 2, 20000), "z": rng.normal(size=20000)})
    frame["y"] = frame["x"] + frame["z"]
    data = tmp_path / "big.csv"
    frame.to_csv(data, index=False)
    target = tmp_path / "model.deepctrl"
    if existing:
        target.write_bytes(b"previous model")
    log = tmp_path / "stderr.txt"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [
                shutil.which("deepctrl"),
                "fit",
                str(data),
                "--target",
                "y",
                "--monotonic",
                "x=increasing",
                "--max-epochs",
                "1000",
                "--out",
                str(target),
            ],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env={**os.environ, "OMP_NUM_THREADS": "1"},
            start_new_session=True,
        )
    deadline = time.monotonic() + 240
    while "task: regression" not in log.read_text() and time.monotonic() < deadline:
        assert proc.poll() is None, log.read_text()
        time.sleep(0.2)
    time.sleep(3.0)  # inside training (no progress bar says so: stderr is a file)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    if existing:
        assert target.read_bytes() == b"previous model"
    else:
        assert not target.exists()


@pytest.mark.slow
def test_alpha_chosen_without_labels_through_the_installed_command(cli, fitted, tmp_path):
    from deepctrl.tabular.alpha_choice import LABEL_FREE_GRID
    from deepctrl.tabular.estimators import load_any

    data, model = fitted
    unlabelled = tmp_path / "new.csv"
    pd.read_csv(data).drop(columns="sales").to_csv(unlabelled, index=False)
    est = load_any(model)
    X = pd.read_csv(unlabelled)[est.encoder_.names]
    ratios = [est.verification_ratio(X, alpha=a) for a in LABEL_FREE_GRID]
    i = next(i for i, r in enumerate(ratios) if r >= 0.9)
    out = tmp_path / "pred.csv"
    done = cli(
        "predict", str(model), str(unlabelled), "--min-verification", "0.9", "--out", str(out)
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == (
        f"chosen alpha {LABEL_FREE_GRID[i]:g}: verification "
        f"ratio {ratios[i]:.3f} on 120 rows (goal 0.9)"
    )
    np.testing.assert_allclose(
        pd.read_csv(out)["sales"], est.predict(X, LABEL_FREE_GRID[i]), rtol=1e-6
    )
    # --alpha and --min-verification exclude each other
    done = cli(
        "predict",
        str(model),
        str(unlabelled),
        "--alpha",
        "1",
        "--min-verification",
        "0.9",
        "--out",
        str(tmp_path / "both.csv"),
    )
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert "not allowed with argument" in done.stderr and not (tmp_path / "both.csv").exists()
    # sweep: JSON rows on stdout, the two comparison lines on stderr
    done = cli("sweep", str(model), str(data), "--alphas", "0:1:0.5", "--json")
    rows = json.loads(done.stdout)
    assert done.returncode == 0 and [r["alpha"] for r in rows] == [0, 0.5, 1.0]
    lines = done.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("lowest mse: alpha ")
    assert lines[1].startswith("label-free (smallest alpha with verification >= 0.95): ") or lines[
        1
    ].startswith("label-free: no alpha in the grid reaches verification 0.95")
    # a goal no alpha reaches: one line, exit code 2, no file
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nkind = "penalty"\nexpression = "sales <= -1000"\n')
    never = tmp_path / "never.deepctrl"
    done = cli(
        "fit",
        str(data),
        "--target",
        "sales",
        "--rules",
        str(rules),
        "--max-epochs",
        "3",
        "--no-progress",
        "--out",
        str(never),
    )
    assert done.returncode == 0, done.stderr
    refused = tmp_path / "refused.csv"
    done = cli(
        "predict", str(never), str(unlabelled), "--min-verification", "0.5", "--out", str(refused)
    )
    assert done.returncode == 2 and done.stdout == "" and not refused.exists()
    assert done.stderr == (
        "deepctrl: error: no alpha in 0..1.5 reaches verification ratio 0.5 "
        "on these rows (highest 0.000 at alpha 0)\n"
    )
