"""The cardio reproduction: helpers on hand-made numbers and a small end-to-end run."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

import deepctrl as dc
from deepctrl.paper.experiments import cardio, cardio_evaluation, cardio_setup
from deepctrl.paper.experiments.cardio_perturbation_report import perturbation_observations
from deepctrl.paper.experiments.cardio_report import interpret
from helpers import check_results_layout

ALPHAS = cardio_setup.ALPHAS
N = len(ALPHAS)


def test_networks_match_the_paper():
    net = cardio.deepctrl_net()
    assert [m.out_features for m in net.data_encoder if hasattr(m, "out_features")] == [100, 16]
    assert sum(p.numel() for p in net.parameters()) == 2 * (19 * 100 + 100 + 100 * 16 + 16) + 33
    x = torch.randn(5, 19)
    y = net(x, 0.3)
    assert y.shape == (5, 1) and bool(((y > 0) & (y < 1)).all())
    assert sum(p.numel() for p in cardio_setup.task_net().parameters()) == 2000 + 1616 + 17


def test_alpha_grid_extrapolates_to_1_5():
    assert ALPHAS[0] == 0.0 and ALPHAS[-1] == 1.5 and N == 16 and 1.0 in ALPHAS


def test_sample_adaptation_by_hand():
    # 4 patients, labels 1, 0, 1, 0; alpha 0.2 predicts them well, every other alpha says 0.5
    y = torch.tensor([[1.0], [0.0], [1.0], [0.0]])
    y_hat = torch.full((N, 4, 1), 0.5)
    y_hat[2] = torch.tensor([[0.8], [0.2], [0.8], [0.2]])
    out = cardio_evaluation.sample_adaptation(y_hat, y, np.array([0, 1]))
    assert out["chosen_alpha"] == 0.2
    assert out["bce_rest"][2] == pytest.approx(-np.log(0.8), rel=1e-6)
    assert out["bce_rest"][0] == pytest.approx(np.log(2.0), rel=1e-6)


def _results(curves: dict[str, list[float]], task_only: float) -> dict:
    domains = {}
    for name, curve in curves.items():
        best = ALPHAS[int(np.argmin(curve))]
        domains[name] = {
            "usual_ratio": 0.5,
            "rows": 10,
            "best_alpha": best,
            "best_alpha_by_method": {"DeepCTRL": best},
            "methods": {
                "DeepCTRL": {"test": {"bce": {"mean": curve}}},
                "TaskOnly": {"test": {"bce": {"mean": [task_only] * N}}},
            },
        }
    return {"domains": domains}


def _bowl(center: float, low: float = 0.6) -> list[float]:
    return [low + (a - center) ** 2 for a in ALPHAS]


def test_checks_pass_when_the_claims_hold():
    res = _results(
        {"Source": _bowl(0.0), "Target 1": _bowl(1.3), "Target 3": _bowl(0.5)}, task_only=0.55
    )
    checks = {c["name"]: c for c in cardio_evaluation.checks(res)}
    assert all(c["holds"] for c in checks.values())
    assert "alpha 1 0.6900" in checks["target1_falls_beyond_1"]["detail"]
    assert "(at alpha 1.3)" in checks["target1_falls_beyond_1"]["detail"]


def test_checks_fail_when_the_claims_do_not_hold():
    res = _results(
        {"Source": _bowl(1.0, 0.5), "Target 1": _bowl(0.0), "Target 3": _bowl(0.5)}, task_only=0.9
    )
    checks = {c["name"]: c["holds"] for c in cardio_evaluation.checks(res)}
    assert checks == {
        "source_task_only_no_worse": False,
        "target1_falls_to_alpha_1": False,
        "target1_falls_beyond_1": False,
        "best_alpha_target1_ge_target3": False,
    }


@pytest.mark.parametrize(
    ("center", "phrase"),
    [(0.0, "only hurts"), (0.5, "intermediate"), (1.0, "holds for most"), (1.3, "beyond 1")],
)
def test_interpretation_follows_the_best_alpha(center, phrase):
    block = _results({"Target 2": _bowl(center)}, 0.7)["domains"]["Target 2"]
    text = interpret("Target 2", block, "DeepCTRL", ALPHAS)
    assert phrase in text and f"best alpha {center:g}" in text
    curve = block["methods"]["DeepCTRL"]["test"]["bce"]["mean"]
    if center == 0.0:  # no gain to quote: the cost of the rule at alpha 1 instead
        at_one = curve[ALPHAS.index(1.0)]
        assert f"{at_one:.4f} at alpha 1 ({at_one - curve[0]:.4f} higher)" in text
    else:
        assert f"({curve[0] - min(curve):.4f} lower)" in text


def test_perturbation_observations_by_hand():
    def entry(bce0: float, bce1: float, v0: float, v1: float) -> dict:
        bce = [bce0] * N
        bce[ALPHAS.index(1.0)] = bce1
        ratio = [v0] * N
        ratio[ALPHAS.index(1.0)] = v1
        return {"test": {"bce": {"mean": bce}, "verification_ratio": {"mean": ratio}}}

    res = {
        "alphas": ALPHAS,
        "perturbations": [0.01, 0.1, 0.5],
        "methods": {
            "DeepCTRL(u=0.01)": entry(0.60, 0.62, 0.4, 0.8),
            "DeepCTRL(u=0.1)": entry(0.60, 0.65, 0.4, 1.0),
            "DeepCTRL(u=0.5)": entry(0.61, 0.70, 0.4, 1.0),
        },
    }
    lines = perturbation_observations(res)
    assert "rises with u in 2 of 2 steps" in lines[0]
    assert "largest u is the highest" in lines[1]
    assert "0.400, 0.600, 0.600" in lines[2]


@pytest.fixture(scope="module")
def small_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("cardio")
    res = cardio.reproduce(seeds=1, quick=True, out=str(out), progress=False, cohort_size=3000)
    return res, out


def test_small_run_writes_the_schema(small_run):
    _, out = small_run
    saved = json.loads((out / "results.json").read_text())
    assert saved["experiment"] == "cardio" and saved["seeds"] == [0] and saved["quick"]
    assert saved["alphas"] == ALPHAS
    assert list(saved["domains"]) == ["Source", "Target 1", "Target 2", "Target 3"]
    for name, block in saved["domains"].items():
        assert set(block["methods"]) == {"DeepCTRL", "DeepCTRL(rho=1)", "TaskOnly"}
        for entry in block["methods"].values():
            for metric in ("bce", "accuracy", "auc", "verification_ratio"):
                assert len(entry["test"][metric]["mean"]) == N
        bce = block["methods"]["DeepCTRL"]["test"]["bce"]["mean"]
        assert block["best_alpha"] == ALPHAS[int(np.argmin(bce))]
        task_only = block["methods"]["TaskOnly"]["test"]["bce"]["mean"]
        assert max(task_only) - min(task_only) < 1e-9
        if name != "Source":
            assert block["adaptation"]["chosen_alpha"][0] in ALPHAS
    counts = saved["dataset"]["targets"]
    assert [round(c["usual_ratio"], 1) for c in counts.values()] == [0.8, 0.5, 0.4]
    assert saved["checks"][0]["name"] == "source_task_only_no_worse"
    assert saved["rho"]["DeepCTRL(rho=1)"] == [1.0]
    report = (out / "report.md").read_text()
    assert "Not trained in this run, so not in the table: DeepCTRL(rho=0.1) (a `--quick`" in report
    for fig in (
        "bce_vs_alpha.png",
        "accuracy_vs_alpha.png",
        "verification_vs_alpha.png",
        "domains_bce.png",
    ):
        assert (out / fig).stat().st_size > 10_000
    report = (out / "report.md").read_text()
    assert "QUICK smoke run" in report and "## Checks" in report
    assert "## Against the paper" in report
    assert f"splits at **{saved['dataset']['threshold']:g} mmHg**" in report


def test_small_run_writes_the_documented_layout(small_run):
    _, out = small_run
    saved = json.loads((out / "results.json").read_text())
    check_results_layout(saved, cardio_setup.METRICS)
    source = saved["domains"]["Source"]
    assert saved["methods"] == source["methods"] and saved["preset"] == "paper"
    assert saved["selection"] == {
        "setting": "Source",
        "best_alpha": source["best_alpha"],
        "best_alpha_by_method": source["best_alpha_by_method"],
    }
    # a Target entry has the Source entry's keys but `val` (a Target has no validation split)
    for name in ("Target 1", "Target 2", "Target 3"):
        for method, entry in saved["domains"][name]["methods"].items():
            assert set(entry) == set(source["methods"][method]) - {"val"}
            assert entry["eval_alpha"] == source["methods"][method]["eval_alpha"]
    assert source["methods"]["TaskOnly"]["eval_alpha"] == 0.0
    assert source["methods"]["DeepCTRL"]["eval_alpha"] is None


def test_small_run_matches_a_direct_evaluation(small_run):
    """The Target 2 numbers equal a sweep of a model trained the same way by hand."""
    res, _ = small_run
    task, _ = cardio_setup.load_task(None, cohort_size=3000)
    run = cardio_setup.train(
        task,
        "TaskOnly",
        cardio_setup.task_net(),
        dc.methods.TaskOnly(),
        task.rule(),
        cardio_setup.Settings.make(1, True),
        "cpu",
        False,
    )
    t2 = task.targets["Target 2"]
    table = dc.sweep(run.fit.model, task.rule(), t2.X, t2.y, [0.0], ("bce",))
    saved = res["domains"]["Target 2"]["methods"]["TaskOnly"]["test"]["bce"]["mean"][0]
    assert table["bce"][0] == pytest.approx(saved, rel=1e-6)


def test_small_perturbation_run(tmp_path):
    res = cardio.reproduce_perturbation(
        seeds=1, quick=True, out=str(tmp_path), progress=False, cohort_size=3000, us=(0.05, 0.5)
    )
    saved = json.loads((tmp_path / "results.json").read_text())
    assert saved["experiment"] == "cardio-perturbation" and saved["perturbations"] == [0.05, 0.5]
    assert saved["selection"] == {"setting": "Source", "best_alpha_by_method": res["best_alpha"]}
    assert saved["preset"] == "paper" and saved["methods"]["TaskOnly"]["eval_alpha"] == 0.0
    assert set(saved["methods"]) == {"DeepCTRL(u=0.05)", "DeepCTRL(u=0.5)", "TaskOnly"}
    assert saved["rho"]["DeepCTRL(u=0.5)"] == [1.0]
    assert res["best_alpha"]["DeepCTRL(u=0.05)"] in ALPHAS
    assert (tmp_path / "perturbation.png").stat().st_size > 10_000
    assert "| DeepCTRL(u=0.5) |" in (tmp_path / "report.md").read_text()
