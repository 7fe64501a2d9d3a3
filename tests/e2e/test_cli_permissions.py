"""File permissions as a user without root's override of them meets them: an unreadable
model file and an --out folder that cannot be written into are one line each, found before
any work, with nothing left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

_NO_OVERRIDE = "-dac_override,-dac_read_search"


def unprivileged(*args: str) -> subprocess.CompletedProcess[str]:
    """``deepctrl *args``, single-threaded, unable to ignore file modes (root drops that
    power through setpriv)."""
    exe = shutil.which("deepctrl")
    if exe is None:
        pytest.fail("the deepctrl command is not installed (pip install -e .)")
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv to drop the override of file modes")
        prefix = [setpriv, f"--inh-caps={_NO_OVERRIDE}", f"--bounding-set={_NO_OVERRIDE}", "--"]
    return subprocess.run(
        [*prefix, exe, *args],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> tuple[Path, Path, Path]:
    """A table, a model fitted on it, and a folder that cannot be written into."""
    folder = tmp_path_factory.mktemp("permissions")
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"price": rng.uniform(1, 10, 60), "size": rng.uniform(0, 1, 60)})
    frame["sales"] = 10 - frame["price"] + rng.normal(0, 0.2, 60)
    data = folder / "sales.csv"
    frame.to_csv(data, index=False)
    model = folder / "m.deepctrl"
    done = subprocess.run(
        [
            *(shutil.which("deepctrl") or "deepctrl", "fit", str(data), "--target", "sales"),
            *("--monotonic", "price=decreasing", "--max-epochs", "2", "--no-progress"),
            *("--out", str(model)),
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    locked = folder / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    return data, model, locked


def one_error(done: subprocess.CompletedProcess[str]) -> str:
    lines = done.stderr.splitlines()
    assert done.returncode == 2, done.stderr
    assert len(lines) == 1 and lines[0].startswith("deepctrl: error: "), done.stderr
    return lines[0]


@pytest.mark.parametrize("command", ["fit", "predict", "export", "test-rule"])
def test_an_out_folder_that_cannot_be_written_is_found_before_any_work(files, command):
    data, model, locked = files
    out = locked / {"fit": "m.deepctrl", "predict": "p.csv", "export": "m.onnx"}.get(command, "rt")
    args = {
        "fit": ["fit", str(data), "--target", "sales", "--no-progress"],
        "predict": ["predict", str(model), str(data)],
        "export": ["export", str(model), "--check", str(data)],
        "test-rule": [
            *("test-rule", str(data), "--target", "sales", "--no-progress"),
            *("--monotonic", "price=decreasing"),
        ],
    }[command]
    error = one_error(unprivileged(*args, "--out", str(out)))
    assert error.endswith(f"--out {out}: cannot write into folder {locked} (permission denied)")
    assert "task:" not in error and list(locked.iterdir()) == []


def test_an_unreadable_model_file_is_named_without_an_errno(files, tmp_path):
    data, model, _ = files
    hidden = tmp_path / "hidden.deepctrl"
    shutil.copy(model, hidden)
    hidden.chmod(0)
    error = one_error(unprivileged("predict", str(hidden), str(data), "--out", str(tmp_path / "p")))
    assert error == f"deepctrl: error: cannot read model file {hidden}: Permission denied"
