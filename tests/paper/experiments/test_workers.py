"""Training jobs run side by side in worker processes compute what they compute in-process."""

import dataclasses

import pytest

import deepctrl as dc
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.pendulum import Settings, TaskNet, deepctrl_net, train_job


def test_worker_processes_reproduce_in_process_training(tmp_path, monkeypatch):
    monkeypatch.setenv("DEEPCTRL_CACHE", str(tmp_path / "cache"))
    s = dataclasses.replace(Settings.make(1, quick=True), max_epochs=3, val_every=1)
    jobs = [("paper", s, "cpu", False, "TaskOnly", TaskNet(), dc.methods.TaskOnly()),
            ("paper", s, "cpu", False, "DeepCTRL", deepctrl_net(), dc.methods.DeepCTRL())]
    alone = common.run_jobs(train_job, jobs, workers=1)
    side_by_side = common.run_jobs(train_job, jobs, workers=2)
    for a, b in zip(alone, side_by_side, strict=True):
        assert a.name == b.name and a.fit.epochs == b.fit.epochs
        assert a.test == b.test and a.val == b.val
        for (k, v), w in zip(a.fit.models[0].state_dict().items(),
                             b.fit.models[0].state_dict().values(), strict=True):
            assert v.equal(w), k


def test_default_workers_is_one_on_gpu_and_under_torchrun(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert common.default_workers("cpu") >= 1
    assert common.default_workers("cuda") == 1
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert common.default_workers("cpu") == 1


def test_no_workers_is_an_error():
    with pytest.raises(ValueError, match="workers must be >= 1"):
        common.run_jobs(common.alpha_grid, [(0.5,)], workers=0)
