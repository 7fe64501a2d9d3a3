"""The installed ``deepctrl`` command reproduces the pendulum experiment (smoke run)."""

import json

import pytest

METHODS = [
    "DeepCTRL",
    "TaskOnly",
    "RuleOnly",
    "TaskAndRule(0.01)",
    "TaskAndRule(0.1)",
    "TaskAndRule(1.0)",
    "LDF-MAE",
    "LDF-Ratio",
]
PNG = b"\x89PNG\r\n\x1a\n"


def run_cli(cli, tmp_path, *args):
    return cli(*args, env={"DEEPCTRL_CACHE": str(tmp_path / "cache")})


@pytest.mark.slow
def test_quick_pendulum_writes_results_report_and_figures(cli, tmp_path):
    out = tmp_path / "out"
    proc = run_cli(
        cli,
        tmp_path,
        "reproduce",
        "pendulum",
        "--quick",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-progress",
        "--save-models",
    )
    assert proc.returncode == 0, proc.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["experiment"] == "pendulum" and results["preset"] == "paper"
    assert results["quick"] is True and results["seeds"] == [10]
    assert results["alphas"] == [round(0.1 * i, 10) for i in range(11)]
    assert list(results["methods"]) == METHODS
    for entry in results["methods"].values():
        for split in ("test", "val"):
            for metric in ("mae", "verification_ratio"):
                stats = entry[split][metric]
                assert len(stats["mean"]) == len(stats["std"]) == 11
                assert all(v is not None and v >= 0 for v in stats["mean"])
        assert len(entry["epochs"]) == 1 and entry["train_seconds"] > 0
    for key in ("by_ratio", "task_and_rule_by_ratio", "by_val_mae", "proxy", "ldf"):
        assert key in results["selection"]
    assert results["methods"]["LDF-MAE"]["dual_lr"] in (0.1, 1.0)
    assert set(results["timing"]["one_seed"]) == {"TaskOnly", "DeepCTRL"}
    report = (out / "report.md").read_text()
    assert "SMOKE RUN" in report
    for name in ("mae_vs_alpha.png", "verification_vs_alpha.png", "energy.png"):
        assert (out / name).read_bytes()[:8] == PNG
        assert f"({name})" in report
    # each baseline is reported at the alpha it trains at: RuleOnly at 1, the others at 0
    own = {k: e["eval_alpha"] for k, e in results["methods"].items()}
    assert own == {**dict.fromkeys(METHODS, 0.0), "DeepCTRL": None, "RuleOnly": 1.0}
    rule_only = results["methods"]["RuleOnly"]["test"]
    row = f"| RuleOnly (at alpha 1) | {rule_only['mae']['mean'][-1]:.4g} |"
    assert row in report
    # of the 9,000 true test pairs 100 ms apart, one breaks the strict rule in float32
    assert results["ground_truth"]["test_verification_ratio"] == pytest.approx(8999 / 9000)
    # the saved network reproduces the run's test curve (one seed: the mean is its value)
    import deepctrl as dc
    from deepctrl.paper.datasets import pendulum
    from deepctrl.paper.experiments.pendulum_setup import energy_rule

    candidates = list(results["selection"]["ldf"]["candidates"])  # every LDF dual lr tried
    assert sorted(p.name for p in (out / "models").iterdir()) == sorted([*METHODS[:6], *candidates])
    model = dc.load(out / "models" / "DeepCTRL" / "seed10.safetensors")
    assert (
        dc.read_checkpoint(out / "models" / "DeepCTRL" / "seed10.safetensors").config["seed"] == 10
    )
    data = pendulum.load("paper", cache_dir=tmp_path / "cache")
    table = dc.sweep(model, energy_rule(), *data.test, alphas=[0.0, 1.0], metrics=("mae",))
    curve = results["methods"]["DeepCTRL"]["test"]["mae"]["mean"]
    assert table["mae"] == pytest.approx([curve[0], curve[-1]], rel=1e-5)
    (out / "report.md").unlink()
    earlier = dict(results)  # an earlier version's layout: "claims" without names or details
    earlier["claims"] = [
        {k: c[k] for k in ("claim", "value", "bound", "holds")} for c in earlier.pop("checks")
    ]
    (out / "results.json").write_text(json.dumps(earlier))
    again = run_cli(cli, tmp_path, "reproduce", "pendulum", "--report-only", "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert (out / "report.md").read_text() == report
    rewritten = json.loads((out / "results.json").read_text())
    assert "claims" not in rewritten and rewritten["checks"] == results["checks"]


@pytest.mark.slow
def test_quick_ablations_write_every_study(cli, tmp_path):
    out = tmp_path / "abl"
    proc = run_cli(
        cli,
        tmp_path,
        "reproduce",
        "pendulum-ablations",
        "--quick",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-progress",
    )
    assert proc.returncode == 0, proc.stderr
    expected = {
        "prior": ["Beta(0.1)", "Beta(0.5)", "Beta(1.0)"],
        "merge": ["deepctrl", "add", "concat", "input"],
        "rho": ["rho=auto", "rho=1", "rho=epoch"],
    }
    for study, names in expected.items():
        results = json.loads((out / study / "results.json").read_text())
        assert list(results["methods"]) == names and results["quick"] is True
        assert (out / study / "mae_vs_alpha.png").read_bytes()[:8] == PNG
    tsne = json.loads((out / "tsne" / "results.json").read_text())
    assert 0.0 <= tsne["neighbour_agreement"]["encoder_map"] <= 1.0
    assert (out / "tsne" / "tsne.png").read_bytes()[:8] == PNG
    assert "SMOKE RUN" in (out / "report.md").read_text()


def test_bad_preset_is_one_line_error(cli, tmp_path):
    proc = run_cli(
        cli, tmp_path, "reproduce", "pendulum", "--preset", "hourly", "--out", str(tmp_path / "x")
    )
    assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1
    assert "argument --preset: invalid choice: 'hourly'" in proc.stderr
