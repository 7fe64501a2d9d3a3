"""The stored runs under docs/results/ have the results.json layout docs/paper/index.md
describes, and that page's example reads them."""

import json
import re
import shutil
from pathlib import Path

import pytest

from helpers import check_results_layout

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "docs" / "results"
METRICS = {"cardio": ("bce", "accuracy", "auc"), "cardio-perturbation": ("bce", "accuracy", "auc")}
STORED = sorted(p for p in RESULTS.rglob("results.json") if "methods" in json.loads(p.read_text()))


def test_every_experiment_has_a_stored_run():
    kinds = {json.loads(p.read_text())["experiment"].split("/")[0] for p in STORED}
    assert kinds == {"pendulum", "pendulum-ablations", "cardio", "cardio-perturbation", "retail"}


@pytest.mark.parametrize("path", STORED, ids=lambda p: str(p.parent.relative_to(RESULTS)))
def test_a_stored_run_has_the_documented_layout(path):
    results = json.loads(path.read_text())
    check_results_layout(results, METRICS.get(results["experiment"], ("mae",)))
    for block in [*results.get("domains", {}).values(), *results.get("groups", {}).values()]:
        assert all("eval_alpha" in e for e in block["methods"].values())


def test_stored_rule_only_holds_its_alpha_1_value():
    """The stored paper run's RuleOnly, test MAE 0.09088 at alpha 1 (its report's row)."""
    rule_only = json.loads((RESULTS / "pendulum/paper-compiled/results.json").read_text())[
        "methods"
    ]["RuleOnly"]
    assert rule_only["test"]["mae"]["mean"] == [pytest.approx(0.090880386531353)] * 11
    assert (
        "| RuleOnly (at alpha 1) | 0.09088 |"
        in (RESULTS / "pendulum/paper-compiled/report.md").read_text()
    )


@pytest.mark.parametrize(
    ("experiment", "stored", "first", "task_only", "n"),
    [
        ("pendulum", "pendulum/paper-compiled", "test mae 0.0142 +- 0.0040", "0.0128", 11),
        ("cardio", "cardio", "test bce 0.5698 +- 0.0013", "0.5664", 16),
        ("retail", "retail", "test mae 0.0434 +- 0.0011", "0.0418", 21),
    ],
)
def test_the_overview_example_reads_a_run(
    experiment, stored, first, task_only, n, tmp_path, monkeypatch, capsys
):
    page = (ROOT / "docs" / "paper" / "index.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", page, re.S)
    folder = tmp_path / "results" / experiment
    folder.mkdir(parents=True)
    shutil.copy(RESULTS / stored / "results.json", folder)
    monkeypatch.chdir(tmp_path)
    exec(
        compile(block.replace("results/pendulum", f"results/{experiment}"), "index.md", "exec"), {}
    )
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == n + 1 and lines[0] == f"alpha 0: {first}"
    assert lines[-1] == f"TaskOnly at alpha 0: {task_only}"
