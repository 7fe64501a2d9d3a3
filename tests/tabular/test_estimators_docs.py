"""The README's table walk-through and the example script run as documented (slow)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from deepctrl.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SECTION = ROOT / "README.md"


@pytest.mark.slow
def test_readme_walkthrough(tmp_path, capsys, monkeypatch):
    text = SECTION.read_text()
    script = re.findall(r"```python\n(import numpy as np, pandas as pd.*?)```", text, re.S)[0]
    monkeypatch.chdir(tmp_path)
    exec(compile(script, "readme", "exec"), {})  # writes sales.csv and sales_test.csv
    assert (
        main(
            [
                "fit",
                "sales.csv",
                "--target",
                "sales",
                "--monotonic",
                "price=decreasing",
                "--out",
                "sales.deepctrl",
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert main(["sweep", "sales.deepctrl", "sales_test.csv", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # as the section says: the rule fails at alpha 0, holds at alpha 1, and helps on the test
    assert rows[0]["verification_ratio"] < 0.1 and rows[-1]["verification_ratio"] >= 0.95
    assert rows[-1]["mse"] < rows[0]["mse"]
    assert (
        main(
            [
                "predict",
                "sales.deepctrl",
                "sales_test.csv",
                "--alpha",
                "0.8",
                "--out",
                "predictions.csv",
            ]
        )
        == 0
    )
    assert len((tmp_path / "predictions.csv").read_text().splitlines()) == 501


@pytest.mark.slow
def test_example_script_runs():
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "tabular_diabetes.py")],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert "ridge: test MSE" in done.stdout and "rule holds for" in done.stdout
    assert "wrote 111 predictions at alpha" in done.stdout  # the command line, on its file


@pytest.mark.slow
def test_the_deliveries_example_in_polars_gives_the_command_lines_model(tmp_path, monkeypatch):
    pytest.importorskip("polars")
    import deepctrl as dc

    text = (ROOT / "docs" / "tables-cli.md").read_text()
    data = re.findall(
        r"```python\n(import numpy as np, pandas as pd\n\nrng = np.random.default_rng\(1\).*?)```",
        text,
        re.S,
    )
    in_polars = re.findall(
        r"```python\n(import deepctrl as dc\nimport polars as pl\n.*?)```", text, re.S
    )
    monkeypatch.chdir(tmp_path)
    exec(compile(data[0], "tables-cli", "exec"), {})  # deliveries.csv, deliveries_new.csv
    args = "fit deliveries.csv --target status --monotonic dist_km=increasing --monotonic "
    args += "stops=increasing --rule-class late --out deliveries.deepctrl --no-progress"
    assert main(args.split()) == 0
    names: dict = {}  # the block imports what it uses
    exec(compile(in_polars[0], "tables-cli", "exec"), names)
    by_command = dc.DeepCTRLClassifier.load("deliveries.deepctrl")
    np.testing.assert_array_equal(
        names["late"], by_command.predict_proba(names["new"].drop("status"))[:, 0]
    )
