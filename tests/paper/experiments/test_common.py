"""Pieces every reproduction shares: a method's results.json entry."""

import pytest
import torch

import deepctrl as dc
from deepctrl.paper.experiments import common


def test_a_method_without_alpha_reports_its_value_at_its_own_alpha():
    """RuleOnly trains at alpha 1: its entry repeats the per-seed sweeps' mean and std there,
    though the network answers other alphas differently."""
    torch.manual_seed(0)
    x = torch.randn(96, 3)
    data = (x, x.sum(1, keepdim=True))
    rule = dc.rules.Monotonic(0, "increasing")
    net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    alphas = [0.0, 0.5, 1.0]
    run = common.run_method(
        "RuleOnly",
        net,
        rule,
        dc.methods.RuleOnly(),
        data,
        data,
        data,
        alphas,
        ("mae",),
        (0, 1),
        max_epochs=2,
        progress=False,
    )
    entry = run.entry()
    at_one = [t["mae"][2] for t in run.test]
    assert run.test[0]["mae"][0] != pytest.approx(at_one[0])
    assert entry["eval_alpha"] == 1.0
    assert entry["test"]["mae"]["mean"] == pytest.approx([sum(at_one) / 2] * 3)
    assert entry["test"]["mae"]["std"] == pytest.approx([abs(at_one[0] - at_one[1]) / 2] * 3)
    val_ratio = [t["verification_ratio"][2] for t in run.val]
    assert entry["val"]["verification_ratio"]["mean"] == pytest.approx([sum(val_ratio) / 2] * 3)


def test_an_alpha_off_the_grid_is_one_line_error():
    entry = {"eval_alpha": 1.0, "test": {"mae": {"mean": [1.0, 2.0], "std": [0.0, 0.0]}}}
    assert common.at_eval_alpha({**entry, "eval_alpha": None}, [0.0, 0.5])["test"] == entry["test"]
    with pytest.raises(ValueError, match=r"eval_alpha 1 is not on the alpha grid \[0.0, 0.5\]"):
        common.at_eval_alpha(entry, [0.0, 0.5])
