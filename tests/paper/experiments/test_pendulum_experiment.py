"""Pieces of the pendulum reproduction: networks, the energy rule, settings, alpha choice."""

import json
from pathlib import Path

import pytest
import torch

import deepctrl as dc
from deepctrl.core.rules import Context
from deepctrl.paper.experiments import pendulum as exp
from deepctrl.paper.experiments import pendulum_evaluation, pendulum_setup
from deepctrl.paper.experiments.pendulum_report import report_markdown
from helpers import check_results_layout


def n_params(module: torch.nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())


def test_parameter_counts_match_the_paper():
    assert n_params(pendulum_setup.deepctrl_net()) == 28_692
    assert n_params(pendulum_setup.TaskNet()) == 13_060


@pytest.mark.parametrize("merge", ["deepctrl", "add", "concat", "input"])
def test_every_merge_predicts_a_residual_state(merge):
    torch.manual_seed(0)
    net = pendulum_setup.deepctrl_net(merge)
    x = torch.randn(7, 4)
    out = net(x, 0.3)
    assert out.shape == (7, 4)
    with torch.no_grad():
        for p in net.decision[-1].parameters():
            p.zero_()
    assert torch.equal(net(x, 0.3), x)  # a zero decision block returns the input


def test_task_net_is_residual():
    net = pendulum_setup.TaskNet()
    with torch.no_grad():
        for p in net.inner.decision[-1].parameters():
            p.zero_()
    x = torch.randn(3, 4)
    assert torch.equal(net(x), x)


def test_energy_rule_on_hand_computed_states():
    rule = pendulum_setup.energy_rule()
    x = torch.tensor([[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0]])
    y = torch.tensor([[0.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]])
    ctx = Context(x=x, y_hat=y)
    # E: (0,1,0,0) -> 3.0, (0,0,0,1) -> 2.5: a drop of 0.5, a rise of 0.5, no change
    assert rule.loss(ctx).tolist() == pytest.approx([0.0, 0.5, 0.0])
    assert rule.satisfied(ctx).tolist() == [True, False, False]  # strict: equal fails


def test_settings_follow_the_authors_protocol():
    full = pendulum_setup.Settings.make(10, quick=False)
    assert full.seeds == tuple(range(10, 20))
    assert (full.max_epochs, full.patience, full.val_every, full.batch_size, full.lr) == (
        1000,
        10,
        5,
        64,
        1e-3,
    )
    assert full.dual_lrs == (0.01, 0.1, 1.0)
    quick = pendulum_setup.Settings.make(10, quick=True)
    assert quick.quick and quick.seeds == (10, 11) and quick.max_epochs < 50
    assert pendulum_setup.Settings.make(1, quick=True).seeds == (10,)
    with pytest.raises(ValueError, match="seeds"):
        pendulum_setup.Settings.make(0, quick=False)


def test_noisy_validation_is_fixed_and_has_the_right_scale():
    x = torch.zeros(20_000, 4)
    a, _ = pendulum_setup.noisy_validation((x, x))
    b, _ = pendulum_setup.noisy_validation((x, x))
    assert torch.equal(a, b)
    assert a.std().item() == pytest.approx(0.01, rel=0.02)


def entry(test_mae, test_ratio, val_mae, val_ratio):
    def stats(values):
        return {"mean": list(values), "std": [0.0] * len(values)}

    return {
        "test": {"mae": stats(test_mae), "verification_ratio": stats(test_ratio)},
        "val": {"mae": stats(val_mae), "verification_ratio": stats(val_ratio)},
    }


def flat(value, n=5):
    return [value] * n


@pytest.fixture
def entries():
    return {
        "DeepCTRL": entry(
            test_mae=[0.5, 0.3, 0.2, 0.4, 0.6],
            test_ratio=[0.1, 0.5, 0.7, 0.85, 0.99],
            val_mae=[0.5, 0.25, 0.3, 0.4, 0.6],
            val_ratio=[0.2, 0.6, 0.8, 0.95, 1.0],
        ),
        "TaskOnly": entry(flat(0.45), flat(0.1), flat(0.45), flat(0.1)),
        "TaskAndRule(0.01)": entry(flat(0.4), flat(0.5), flat(0.4), flat(0.6)),
        "TaskAndRule(0.1)": entry(flat(0.42), flat(0.7), flat(0.42), flat(0.92)),
        "TaskAndRule(1.0)": entry(flat(0.5), flat(0.8), flat(0.5), flat(0.97)),
    }


def test_alpha_selection_follows_the_paper(entries):
    sel = pendulum_evaluation.select(entries, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert sel["by_ratio"] == {
        "alpha": 0.75,
        "reached": True,
        "val_ratio": 0.95,
        "test_ratio": 0.85,
        "test_mae": 0.4,
    }
    assert sel["task_and_rule_by_ratio"]["method"] == "TaskAndRule(0.1)"
    assert sel["task_and_rule_by_ratio"]["test_ratio"] == 0.7
    assert sel["by_val_mae"]["alpha"] == 0.25 and sel["by_val_mae"]["val_ratio"] == 0.6
    # the test alpha whose verification is closest to 0.6 is 0.25 (0.5): MAE 0.3
    assert sel["proxy"]["alpha"] == 0.25 and sel["proxy"]["test_mae"] == 0.3
    assert sel["proxy"]["oracle_alpha"] == 0.5


def test_alpha_selection_when_no_alpha_reaches_the_target(entries):
    entries["DeepCTRL"]["val"]["verification_ratio"]["mean"] = [0.1, 0.3, 0.5, 0.7, 0.6]
    for name in ("TaskAndRule(0.01)", "TaskAndRule(0.1)", "TaskAndRule(1.0)"):
        entries[name]["val"]["verification_ratio"]["mean"] = flat(0.5)
    entries["TaskAndRule(1.0)"]["val"]["verification_ratio"]["mean"] = flat(0.8)
    sel = pendulum_evaluation.select(entries, [0.0, 0.25, 0.5, 0.75, 1.0])
    assert sel["by_ratio"]["alpha"] == 0.75 and not sel["by_ratio"]["reached"]
    assert sel["task_and_rule_by_ratio"]["method"] == "TaskAndRule(1.0)"
    assert not sel["task_and_rule_by_ratio"]["reached"]


def test_checks_compare_against_the_papers_thresholds(entries):
    deep = entries["DeepCTRL"]
    deep["test"]["mae"]["mean"] = [0.005, 0.0028, 0.002, 0.0031, 0.006]
    deep["val"]["mae"]["mean"] = [0.5, 0.45, 0.42, 0.4, 0.6]
    entries["TaskOnly"]["test"]["mae"]["mean"] = flat(0.0045)
    sel = pendulum_evaluation.select(entries, [0.0, 0.25, 0.5, 0.75, 1.0])
    # lowest val MAE: alpha 0.75 (test 0.0031); its val ratio 0.95 is closest to the test
    # ratio 0.99 of alpha 1 (test 0.006); the best test alpha is 0.5 (0.002)
    authors = pendulum_evaluation.checks("authors", entries, sel)
    assert [c["value"] for c in authors] == [0.99, 0.0031, 0.006, 0.002, 0.1]
    assert [c["holds"] for c in authors] == [True, False, False, True, True]
    assert authors[1]["name"] == "deepctrl_mae_by_val_mae"
    assert authors[1]["detail"] == "0.0031 (required < TaskOnly 0.00450 and <= 0.0030)"
    paper = pendulum_evaluation.checks("paper", entries, sel)
    assert [c["holds"] for c in paper] == [True, True, False, True]


def test_a_baseline_is_drawn_at_its_own_alpha_and_a_report_needs_a_run(tmp_path):
    from deepctrl.io.figures import subplots
    from deepctrl.paper.plots.common import metric_vs_alpha

    def entry(mean, own):
        return {"eval_alpha": own, "test": {"mae": {"mean": mean, "std": [0.0] * 3}}}

    methods = {
        "DeepCTRL": entry([3.0, 2.0, 1.0], None),
        "RuleOnly": entry([9.0, 8.0, 7.0], 1.0),  # trained at alpha 1: its line is at 7
        "TaskOnly": entry([5.0, 6.0, 6.5], 0.0),
    }
    _, ax = subplots()
    metric_vs_alpha(ax, [0.0, 0.5, 1.0], methods, "mae", best_alpha=0.5, best_label="proxy")
    lines = {line.get_label(): list(line.get_ydata()) for line in ax.lines}
    assert lines["DeepCTRL"] == [3.0, 2.0, 1.0]
    assert lines["RuleOnly (alpha 1)"] == [7.0, 7.0] and lines["TaskOnly"] == [5.0, 5.0]
    assert "proxy = 0.5" in lines
    with pytest.raises(ValueError, match="results.json does not exist: --report-only"):
        exp.rewrite_report(str(tmp_path))
    for text in ('{"experiment": "retail"}', "[]", '{"experiment": "pendulum"}'):
        (tmp_path / "results.json").write_text(text)
        with pytest.raises(ValueError, match="is not the results.json of a pendulum run"):
            exp.rewrite_report(str(tmp_path))


def test_a_stacked_jobs_row_counts_the_epochs_of_its_longest_model():
    """In the stored paper run TaskOnly stopped at 180 epochs while TaskAndRule(1.0), in the
    same job, trained 270: the job ran 270 epochs, 219.948 s / 270 = 0.8146 s each."""
    stored = Path(__file__).parents[3] / "docs/results/pendulum/paper-compiled/results.json"
    results = json.loads(stored.read_text())
    assert max(results["methods"]["TaskOnly"]["epochs"]) == 180
    row = next(
        line for line in report_markdown(results).splitlines() if line.startswith("| TaskOnly's:")
    )
    assert row.split("|")[2:6] == [" 7 ", " 219.9 ", " 0.8146 ", " 270 "]


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    """``reproduce`` on 20 s of the pendulum (120/20/60 pairs), one seed, 2 epochs."""
    import dataclasses

    from deepctrl.paper.datasets import pendulum

    folder = tmp_path_factory.mktemp("pendulum")
    load, make = pendulum.load, pendulum_setup.Settings.make
    short = pendulum.PendulumConfig(duration=20.0)

    def tiny(seeds, quick):
        return dataclasses.replace(make(seeds, quick), max_epochs=2, patience=1, val_every=1)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pendulum, "load", lambda preset: load(preset, folder / "cache", short))
        mp.setattr(pendulum_setup.Settings, "make", staticmethod(tiny))
        results = exp.reproduce(
            seeds=1,
            quick=True,
            out=str(folder / "out"),
            progress=False,
            workers=1,
            save_models=True,
        )
    return results, folder / "out", pendulum.load("paper", folder / "cache", short)


def test_a_run_writes_the_documented_layout(tiny_run):
    results, out, data = tiny_run
    saved = json.loads((out / "results.json").read_text())
    check_results_layout(saved, ("mae",))
    assert list(saved["methods"]) == list(exp.METHOD_KEYS) and saved["preset"] == "paper"
    # RuleOnly trains at alpha 1: its curves repeat what its network gives there
    rule_only = saved["methods"]["RuleOnly"]
    assert rule_only["eval_alpha"] == 1.0
    model = dc.load(out / "models" / "RuleOnly" / "seed10.safetensors")
    table = dc.sweep(
        model, pendulum_setup.energy_rule(), *data.test, alphas=[0.0, 1.0], metrics=("mae",)
    )
    assert table["mae"][0] != pytest.approx(table["mae"][1])
    assert rule_only["test"]["mae"]["mean"] == pytest.approx([table["mae"][1]] * 11, rel=1e-6)
    assert results["methods"]["RuleOnly"] == rule_only


def test_a_run_of_one_seed_reads_as_one_seed(tiny_run):
    _, out, _ = tiny_run
    report = (out / "report.md").read_text()
    assert "All 1 seeds" not in report
    assert "The one seed, in jobs that train several methods as one stacked model:" in report
