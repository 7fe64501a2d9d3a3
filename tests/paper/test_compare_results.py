"""benchmarks/compare_results.py reads the stored runs the docs compare with it."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"


def compare(*paths: Path) -> dict:
    script = ROOT / "benchmarks" / "compare_results.py"
    out = subprocess.run(
        [sys.executable, str(script), *map(str, paths)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_two_ablation_studies_compare_though_they_check_no_claim():
    runs = [
        RESULTS / "pendulum-ablations" / d / "prior" / "results.json" for d in ("compiled-run", ".")
    ]
    result = compare(*runs)
    assert all(checked == [] for checked in result["claims"].values())
    difference = result["mean_test_mae_abs_difference"]
    assert 0 < difference["median"] <= difference["max"] < 0.01


def test_a_run_compared_with_itself_is_identical():
    run = RESULTS / "pendulum" / "paper-compiled" / "results.json"
    assert compare(run, run)["mean_test_mae_abs_difference"]["max"] == 0.0
    assert compare("--exact", run, run)["identical"] is True
