"""Training jobs run side by side in worker processes compute what they compute in-process."""

import dataclasses

import pytest
import torch

import deepctrl as dc
from deepctrl.engine.workers import run_jobs
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.pendulum_setup import Settings, TaskNet, deepctrl_net, energy_rule
from deepctrl.paper.experiments.pendulum_training import group_job


@pytest.mark.slow
def test_worker_processes_reproduce_in_process_training(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPCTRL_CACHE", str(tmp_path / "cache"))
    s = dataclasses.replace(Settings.make(1, quick=True), max_epochs=3, val_every=1)
    jobs = [
        ("paper", s, "cpu", False, ["TaskOnly"], TaskNet(), [dc.methods.TaskOnly()]),
        (
            "paper",
            s,
            "cpu",
            False,
            ["DeepCTRL", "RuleOnly"],
            deepctrl_net(),
            [dc.methods.DeepCTRL(), dc.methods.RuleOnly()],
        ),
    ]
    alone = [run for runs in run_jobs(group_job, jobs, workers=1) for run in runs]
    side_by_side = [run for runs in run_jobs(group_job, jobs, workers=2) for run in runs]
    for a, b in zip(alone, side_by_side, strict=True):
        assert a.name == b.name and a.fit.epochs == b.fit.epochs
        assert a.test == b.test and a.val == b.val
        for (k, v), w in zip(
            a.fit.models[0].state_dict().items(), b.fit.models[0].state_dict().values(), strict=True
        ):
            assert v.equal(w), k


def test_runs_on_disjoint_seed_shares_merge_into_one_run():
    X = torch.randn(96, 4)
    data = (X, X)
    parts = [
        common.run_method(
            "DeepCTRL",
            deepctrl_net(),
            energy_rule(),
            dc.methods.DeepCTRL(rho="paper"),
            data,
            data,
            data,
            [0.0, 1.0],
            ("mae",),
            seeds,
            max_epochs=1,
        )
        for seeds in ([0, 1], [2])
    ]
    merged = common.merge_runs(parts)
    assert merged.fit.seeds == [0, 1, 2] and len(merged.fit.models) == 3
    assert merged.fit.epochs == [1, 1, 1] and len(merged.val) == len(merged.test) == 3
    rho = torch.cat([p.fit.state["rho"] for p in parts])
    assert merged.fit.state["rho"].equal(rho)
    assert merged.fit.seconds == max(p.fit.seconds for p in parts)
    assert merged.test[2] == parts[1].test[0]
    assert common.merge_runs(parts[:1]) is parts[0]
