"""Retail reproduction: networks, result schema, the paper checks."""

import dataclasses
import json

import pytest
import torch

from deepctrl.paper.experiments import retail
from deepctrl.paper.experiments.retail import ALPHAS, checks, deepctrl_net, reproduce, task_net
from helpers import check_results_layout


def test_networks_are_the_papers():
    net = deepctrl_net()
    dims = [
        (m.in_features, m.out_features) for m in net.modules() if isinstance(m, torch.nn.Linear)
    ]
    assert dims == [(13, 64), (64, 64), (64, 16)] * 2 + [(32, 64), (64, 1)]
    assert net(torch.zeros(5, 13), 0.3).shape == (5, 1)
    # the baselines' network is the DeepCTRL data path: its alpha-0 decision sees 16 inputs
    assert task_net()(torch.zeros(5, 13)).shape == (5, 1)
    # with the rule's raw extras appended, the networks read the first 13 columns only
    x = torch.randn(4, 17)
    aux_net = deepctrl_net(aux=True)
    aux_net.load_state_dict(deepctrl_net(aux=True).state_dict())
    y = aux_net(x, 0.5)
    x[:, 13:] = 99.0
    assert torch.equal(aux_net(x, 0.5), y)


def _block(best, best_val, deep_curve, task):
    n = len(ALPHAS)
    return {
        "best_alpha": best,
        "best_alpha_val": best_val,
        "methods": {
            "DeepCTRL": {"test": {"mae": {"mean": deep_curve, "std": [0.0] * n}}},
            "TaskOnly": {"test": {"mae": {"mean": [task] * n, "std": [0.0] * n}}},
        },
    }


def test_checks_follow_the_issue():
    n = len(ALPHAS)
    curve = [0.05] * n
    curve[ALPHAS.index(0.5)] = 0.04
    results = {
        "groups": {
            "NEG0.1": _block(0.2, 0.1, curve, 0.045),
            "NEG0.2": _block(0.5, 0.5, curve, 0.045),
            "NEG0.3": _block(0.9, 0.0, curve, 0.045),
        },
        "transfer": {
            "NEG0.2->POS0.2": {"best_alpha": 0.0, "best_alpha_val": 0.25},
            "NEG0.2->POS0.3": {"best_alpha": 0.2, "best_alpha_val": 0.1},
        },
    }
    got = {c["claim"]: (c["values"], c["holds"]) for c in checks(results)}
    assert got["best_alpha: NEG0.1 <= NEG0.2 <= NEG0.3"] == ([0.2, 0.5, 0.9], True)
    assert got["best_alpha_val: NEG0.1 <= NEG0.2 <= NEG0.3"] == ([0.1, 0.5, 0.0], False)
    assert got["NEG0.2: DeepCTRL MAE at best_alpha < TaskOnly MAE"] == ([0.04, 0.045], True)
    assert got["NEG0.3: DeepCTRL MAE at best_alpha < TaskOnly MAE"] == ([0.05, 0.045], False)
    assert got["NEG0.2->POS0.2: best_alpha_val <= 0.2"] == ([0.25], False)
    assert got["NEG0.2->POS0.3: best_alpha <= 0.2"] == ([0.2], True)


@pytest.fixture
def tiny_settings(monkeypatch):
    """Quick settings cut to 2 epochs so that the whole pipeline runs in seconds."""
    make = retail.Settings.make

    def tiny(seeds, quick, shuffle=False, batch_size=128):
        settings = make(seeds, quick, shuffle, batch_size)
        return dataclasses.replace(settings, max_epochs=2, patience=1)

    monkeypatch.setattr(retail.Settings, "make", staticmethod(tiny))


def test_quick_reproduce_writes_results_report_and_figures(tmp_path, tiny_settings):
    out = tmp_path / "retail"
    res = reproduce(seeds=1, quick=True, out=str(out), progress=False, n_items=60, save_models=True)
    saved = json.loads((out / "results.json").read_text())
    import deepctrl as dc

    saved_net = out / "models" / "NEG0.1_DeepCTRL" / "seed0.safetensors"
    assert dc.read_checkpoint(saved_net).config["method"] == "NEG0.1_DeepCTRL"
    assert (out / "models" / "NEG0.3_TaskOnly" / "seed0.safetensors").exists()
    assert saved["experiment"] == "retail" and saved["seeds"] == [0]
    assert saved["alphas"] == ALPHAS and saved["data"]["source"] == "synthetic"
    assert list(saved["groups"]) == ["NEG0.1", "NEG0.2", "NEG0.3"]
    assert list(saved["transfer"]) == ["NEG0.2->NEG0.1", "NEG0.2->POS0.2", "NEG0.2->POS0.3"]
    for block in [*saved["groups"].values(), *saved["transfer"].values()]:
        assert set(block["methods"]) == {
            "DeepCTRL",
            "TaskOnly",
            "TaskAndRule(0.1)",
            "LDF-MAE",
            "LDF-Ratio",
        }
        assert block["best_alpha"] in ALPHAS and block["best_alpha_val"] in ALPHAS
        deep = block["methods"]["DeepCTRL"]
        curve = deep["test"]["mae"]["mean"]
        assert len(curve) == len(ALPHAS) and min(curve) == curve[ALPHAS.index(block["best_alpha"])]
        task = block["methods"]["TaskOnly"]["test"]["mae"]["mean"]
        assert len(set(task)) == 1  # no alpha: the value repeats
        assert block["methods"]["LDF-MAE"]["setting"] == "dual_lr=1.0"
    assert saved["groups"]["NEG0.2"]["methods"]["DeepCTRL"]["rho"] == [1.0]
    check_results_layout(saved, ("mae",))
    main = saved["groups"]["NEG0.2"]
    assert saved["methods"] == main["methods"] and saved["preset"] == "authors"
    assert (saved["settings"]["batch_size"], saved["settings"]["shuffle"]) == (128, False)
    assert saved["selection"] == {
        "setting": "NEG0.2",
        "best_alpha": main["best_alpha"],
        "best_alpha_val": main["best_alpha_val"],
    }
    for block in saved["transfer"].values():  # the NEG0.2 models: same alpha per method
        assert {m: e["eval_alpha"] for m, e in block["methods"].items()} == {
            m: e["eval_alpha"] for m, e in main["methods"].items()
        }
    assert saved["settings"]["recompute_price_features"] is False
    assert len(saved["checks"]) == 10 and res["checks"] == saved["checks"]
    report = (out / "report.md").read_text()
    assert "QUICK smoke run" in report and "Do our numbers support the paper?" in report
    weeks = saved["data"]["weeks"]
    assert sum(weeks.values()) == 281 and (weeks["val"], weeks["test"]) == (4, 4)
    assert "Weeks: 273 train / 4 validation / 4 test (the paper's M5 split: 273 / 4 / 4)." in report
    assert "DeepCTRL rho 1 (every seed); epochs: [" in report
    for fig in ("fig5_candidate_rules.png", "fig6_candidate_models.png"):
        assert (out / fig).stat().st_size > 10_000


def test_recomputed_price_rule_trains_every_method():
    table, _ = retail.load_data(None, quick=True, progress=False, n_items=60)
    s = dataclasses.replace(retail.Settings.make(1, quick=True), max_epochs=1)
    run = retail.train_group(table, "NEG0.3", s, recompute=True, device="cpu", progress=False)
    assert run.split.train[0].shape[1] == 13 + 4
    block = retail.group_results(run)
    ratio = block["methods"]["DeepCTRL"]["test"]["verification_ratio"]["mean"]
    assert all(0.0 <= r <= 1.0 for r in ratio)
    assert block["rows"]["test"] == 4 * len(table.group_ids("NEG0.3"))


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="seeds must be >= 1"):
        retail.Settings.make(0, quick=True)
    with pytest.raises(ValueError, match="does not exist"):
        reproduce(seeds=1, quick=True, out=str(tmp_path), m5_dir=str(tmp_path / "none"))


def test_the_paper_preset_trains_in_shuffled_batches_of_32_with_rho_auto(tmp_path, tiny_settings):
    res = reproduce(
        seeds=1, quick=True, out=str(tmp_path), progress=False, n_items=60, preset="paper"
    )
    assert res["preset"] == "paper" and res["settings"]["rho"] == "auto"
    assert (res["settings"]["batch_size"], res["settings"]["shuffle"]) == (32, True)
    rho = res["groups"]["NEG0.2"]["methods"]["DeepCTRL"]["rho"]
    assert len(rho) == 1 and 0 < rho[0] < 1  # measured, not the authors' 1
    with pytest.raises(ValueError, match="preset must be one of paper, authors, got 'papers'"):
        reproduce(seeds=1, quick=True, out=str(tmp_path / "x"), preset="papers")


@pytest.mark.parametrize(
    ("experiment", "default"), [("pendulum", "paper"), ("retail", "authors"), ("cardio", "paper")]
)
def test_every_paper_study_takes_a_preset(experiment, default):
    from deepctrl.cli.main import build_parser

    parser = build_parser()
    assert parser.parse_args(["reproduce", experiment]).preset == default
    for preset in ("paper", "authors"):
        assert parser.parse_args(["reproduce", experiment, "--preset", preset]).preset == preset


def test_an_empty_group_is_refused_before_any_training(tmp_path, monkeypatch):
    def trains(*args, **kwargs):
        raise AssertionError("a group trained before the empty group was found")

    monkeypatch.setattr(retail, "train_group", trains)
    # four synthetic items: the rule groups have one each, POS0.3 (a transfer target) none
    with pytest.raises(ValueError, match=r"group POS0.3 has an empty split .*before any training"):
        reproduce(seeds=1, quick=True, out=str(tmp_path / "out"), n_items=4, progress=False)
    assert not (tmp_path / "out").exists()
