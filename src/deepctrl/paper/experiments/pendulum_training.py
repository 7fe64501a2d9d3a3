"""How the pendulum reproduction trains: its methods grouped by network, each group trained
as stacked jobs over shares of the seeds in worker processes, and one model timed per epoch."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any, cast

from torch import nn

import deepctrl as dc
from deepctrl.engine.workers import run_jobs, seed_parts, single_thread
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.common import MethodRun, alpha_grid
from deepctrl.paper.experiments.pendulum_evaluation import mean_curve
from deepctrl.paper.experiments.pendulum_setup import (
    INPUT_NOISE,
    LAMBDAS,
    Settings,
    TaskNet,
    deepctrl_net,
    energy_rule,
    noisy_validation,
)


def train_group(
    names: list[str],
    model: nn.Module,
    methods: list[dc.methods.Method],
    pend: pendulum.PendulumData,
    s: Settings,
    alphas: list[float],
    device: str,
    progress: bool,
) -> list[MethodRun]:
    """Methods of one network over the seeds of ``s``, trained as one stacked job and swept
    on noisy validation and clean test inputs."""
    return common.run_methods(
        names,
        model,
        energy_rule(),
        methods,
        pend.train,
        pend.val,
        pend.test,
        alphas,
        ("mae",),
        s.seeds,
        val_eval=noisy_validation(pend.val),
        **s.fit_kwargs(device, progress),
    )


def time_one_seed(
    pend: pendulum.PendulumData, s: Settings, device: str
) -> dict[str, dict[str, float]]:
    """Seconds per epoch of ONE model (TaskOnly vs DeepCTRL), the paper's App. A.4 unit."""
    out = {}
    for name, model, method in (
        ("TaskOnly", TaskNet(), dc.methods.TaskOnly()),
        ("DeepCTRL", deepctrl_net(), dc.methods.DeepCTRL()),
    ):
        start = time.perf_counter()
        dc.fit(
            model,
            energy_rule(),
            method,
            train=pend.train,
            seeds=[s.seeds[0]],
            max_epochs=s.timing_epochs,
            input_noise=INPUT_NOISE,
            device=device,
        )
        out[name] = {
            "epochs": s.timing_epochs,
            "seconds_per_epoch": (time.perf_counter() - start) / s.timing_epochs,
        }
    return out


Group = tuple[list[str], nn.Module, list[dc.methods.Method]]
"""Methods trained on one network: (names, network, methods)."""


def group_job(
    preset: str,
    s: Settings,
    device: str,
    progress: bool,
    names: list[str],
    model: nn.Module,
    methods: list[dc.methods.Method],
) -> list[MethodRun]:
    """:func:`train_group` on one thread, loading the (cached) data itself."""
    with single_thread():
        return train_group(
            names, model, methods, pendulum.load(preset), s, alpha_grid(), device, progress
        )


def method_groups(s: Settings) -> list[Group]:
    """The reproduction's methods as (names, network, methods), one group per network shape
    (the baselines share one network, DeepCTRL and RuleOnly the other), baselines first."""
    baselines: list[tuple[str, dc.methods.Method]] = [
        ("TaskOnly", dc.methods.TaskOnly()),
        *((f"TaskAndRule({lam})", dc.methods.TaskAndRule(lam)) for lam in LAMBDAS),
        *((f"LDF({eta:g})", dc.methods.LagrangianDual(eta)) for eta in s.dual_lrs),
    ]
    ours: list[tuple[str, dc.methods.Method]] = [
        ("DeepCTRL", dc.methods.DeepCTRL(rho="auto")),
        ("RuleOnly", dc.methods.RuleOnly()),
    ]
    return [
        ([n for n, _ in group], net, [m for _, m in group])
        for group, net in ((baselines, TaskNet()), (ours, deepctrl_net()))
    ]


def train_stacked(
    preset: str,
    s: Settings,
    device: str,
    progress: bool,
    workers: int,
    groups: list[Group],
    job: Callable[..., list[MethodRun]] = group_job,
) -> dict[str, MethodRun]:
    """Train every group as stacked jobs, one per group and per share of the seeds, so that
    each of the ``workers`` processes gets a share of every group (put the longest group
    first); returns the runs by name, each over all seeds. ``job`` trains one group (a
    module-level function taking the arguments of :func:`group_job`)."""
    parts = seed_parts(s.seeds, workers)
    jobs = [
        (preset, dataclasses.replace(s, seeds=part), device, progress, *group)
        for group in groups
        for part in parts
    ]
    by_name: dict[str, list[MethodRun]] = {}
    for group_runs in run_jobs(job, jobs, workers):
        for run in group_runs:
            by_name.setdefault(run.name, []).append(run)
    return {name: common.merge_runs(part_runs) for name, part_runs in by_name.items()}


def run_all(
    preset: str, s: Settings, device: str, progress: bool, workers: int = 1
) -> tuple[dict[str, MethodRun], dict[str, Any]]:
    """Train every method (:func:`train_stacked`); returns runs by name (LDF per dual lr)
    and the LDF choice."""
    trained = train_stacked(preset, s, device, progress, workers, method_groups(s))
    runs = {name: trained[name] for name in ("DeepCTRL", "TaskOnly", "RuleOnly")}
    runs.update({name: run for name, run in trained.items() if name not in runs})
    ldf = {name: run.entry() for name, run in runs.items() if name.startswith("LDF(")}
    by_mae = min(ldf, key=lambda n: mean_curve(ldf[n], "val", "mae")[0])
    by_ratio = max(ldf, key=lambda n: mean_curve(ldf[n], "val", "verification_ratio")[0])
    choice = {
        "LDF-MAE": by_mae,
        "LDF-Ratio": by_ratio,
        "candidates": {
            n: {
                "dual_lr": dual_lr(runs[n]),
                "val_mae": mean_curve(e, "val", "mae")[0],
                "val_ratio": mean_curve(e, "val", "verification_ratio")[0],
                "epochs": e["epochs"],
            }
            for n, e in ldf.items()
        },
    }
    return runs, choice


def dual_lr(run: MethodRun) -> float:
    """The dual learning rate of an LDF run."""
    return cast(dc.methods.LagrangianDual, run.fit.method).dual_lr
