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
    assert all(checked == [] for checked in result["checks"].values())
    difference = result["mean_test_mae_abs_difference"]
    assert 0 < difference["median"] <= difference["max"] < 0.01


def test_a_run_compared_with_itself_is_identical():
    run = RESULTS / "pendulum" / "paper-compiled" / "results.json"
    assert compare(run, run)["mean_test_mae_abs_difference"]["max"] == 0.0
    assert compare("--exact", run, run)["identical"] is True
    assert [c["holds"] for c in compare(run, run)["checks"][str(run)]] == [True, False, True, True]


def test_every_stored_run_checks_its_claims_in_one_layout():
    stored = sorted(RESULTS.rglob("results.json"))
    checked = [p for p in stored if "checks" in json.loads(p.read_text())]
    assert {p.parent.name for p in checked} >= {"paper", "authors", "cardio", "retail"}
    for path in checked:
        run = json.loads(path.read_text())
        lists = [run["checks"], *run.get("checks_by_method", {}).values()]
        for checks in lists:
            names = [c["name"] for c in checks]
            assert len(set(names)) == len(names), path
            for c in checks:
                assert list(c)[:4] == ["name", "claim", "holds", "detail"], path
                assert isinstance(c["holds"], bool) and c["claim"] and c["detail"], path
        assert "claims" not in run, path
