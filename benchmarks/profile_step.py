"""Where a pendulum training epoch spends its time (paper network, batch 64, DeepCTRL):
torch.profiler's self CPU time of every operator, grouped into matrix products, element-wise
and reduction kernels, the optimizer, and the rest; the wall time left over is Python.

    python benchmarks/profile_step.py [--seeds 1 10] [--epochs 2] [--threads 1] [--stack 5]
                                      [--compile]

Prints one JSON object: per seed count, seconds per epoch and steps per epoch, time per
step, operator calls per step, and the share of wall time of each group. The epochs after
the first are profiled (the first holds the compilation with ``--compile``, which trains with
``dc.fit(compile=True)`` and shows the compiled graph's own kernels as a group; its matrix
products, which the graph's C++ host code calls through inductor's C shims, count as matrix
products). With ``--stack N`` it also profiles one job of the full reproduction: the seven
baselines (TaskOnly, TaskAndRule x 3, LDF x 3) on their network with N seeds each, as
``dc.fit_methods`` stacks them (N = 5: the 35 copies a worker trains).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable

import torch
import torch._inductor.config as inductor_config
from torch.profiler import ProfilerActivity, profile

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import (
    DUAL_LRS,
    LAMBDAS,
    TaskNet,
    deepctrl_net,
    energy_rule,
)
from epoch_speed import EpochClock

GROUPS = {
    "matrix products": (
        "aten::bmm",
        "aten::baddbmm",
        "aten::mm",
        "aten::addmm",
        "aten::matmul",
        "aoti_torch_cpu_bmm_out",
        "aoti_torch_cpu_baddbmm_out",
    ),
    "ReLU forward and backward": ("aten::clamp_min", "aten::threshold_backward", "aten::relu"),
    "gradient accumulation, copies, fills": (
        "aten::add_",
        "aten::copy_",
        "aten::fill_",
        "aten::zero_",
    ),
    "optimizer (fused Adam)": ("aten::_fused_adam_", "aten::_fused_adamw_"),
    "guards of the compiled step": ("TorchDynamo Cache Lookup",),
}
COMPILED_KERNELS = "compiled step's fused kernels"
HOST_CODE = "compiled graph's C++ host code (allocations, kernel calls)"


def group_of(name: str) -> str | None:
    """The group of a profiler event; None for events that contain others."""
    for group, names in GROUPS.items():
        if name in names:
            return group
    if name.startswith("graph_") and "cpp_fused" in name:
        return COMPILED_KERNELS
    if name.startswith("## Call CompiledFxGraph"):
        return HOST_CODE
    if name.startswith("aten::"):
        return "other element-wise work and reductions"
    return None


def deepctrl_job(n_seeds: int, **fit_args: object) -> None:
    dc.fit(
        deepctrl_net(),
        energy_rule(),
        dc.methods.DeepCTRL(rho=1.0),
        seeds=list(range(n_seeds)),
        **fit_args,
    )


def baselines_job(n_seeds: int, **fit_args: object) -> None:
    methods = [
        dc.methods.TaskOnly(),
        *(dc.methods.TaskAndRule(lam) for lam in LAMBDAS),
        *(dc.methods.LagrangianDual(eta) for eta in DUAL_LRS),
    ]
    dc.fit_methods(TaskNet(), energy_rule(), methods, seeds=list(range(n_seeds)), **fit_args)


def profile_epochs(
    n_seeds: int, epochs: int, job: Callable[..., None] = deepctrl_job, compile: bool = False
) -> dict[str, object]:
    X, y = pendulum.load("paper").train
    prof = profile(activities=[ProfilerActivity.CPU])

    class ProfiledEpochs(EpochClock):
        """Profile epochs 2 to 1 + epochs (the first holds the compilation, if any)."""

        def on_epoch_start(self, epoch: int) -> None:
            if epoch == 2:
                prof.start()

        def on_epoch_end(self, end: dc.EpochEnd) -> None:
            super().on_epoch_end(end)
            if end.epoch == 1 + epochs:
                prof.stop()

    clock = ProfiledEpochs()
    job(
        n_seeds,
        train=(X, y),
        max_epochs=epochs + 1,
        input_noise=0.01,
        batch_size=64,
        compile=compile,
        callbacks=[clock],
    )
    epoch_seconds = clock.seconds
    wall = sum(epoch_seconds[1:])
    steps = epochs * -(-len(X) // 64)
    seconds: dict[str, float] = {}
    calls = 0
    for event in prof.key_averages():
        group = group_of(event.key)
        if group is None:
            continue
        calls += event.count if event.key.startswith("aten::") else 0
        seconds[group] = seconds.get(group, 0.0) + event.self_cpu_time_total / 1e6
    seconds["Python and dispatch (wall minus operators)"] = wall - sum(seconds.values())
    return {
        "seeds": n_seeds,
        "seconds_per_epoch": round(wall / epochs, 3),
        "steps_per_epoch": steps // epochs,
        "ms_per_step": round(1e3 * wall / steps, 3),
        "aten_calls_per_step": round(calls / steps, 1),
        "share_of_wall": {k: round(v / wall, 3) for k, v in seconds.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--stack",
        type=int,
        default=0,
        help="also profile the seven baselines stacked, with this many seeds",
    )
    parser.add_argument("--compile", action="store_true", help="profile dc.fit(compile=True)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    inductor_config.cpp.enable_kernel_profile = True  # the compiled kernels appear by name
    runs = [profile_epochs(s, args.epochs, compile=args.compile) for s in args.seeds]
    if args.stack:
        runs.append(
            {
                "job": "seven baselines stacked",
                **profile_epochs(args.stack, args.epochs, baselines_job, args.compile),
            }
        )
    print(
        json.dumps(
            {
                "benchmark": "pendulum_step_profile",
                "threads": args.threads,
                "compiled": args.compile,
                "runs": runs,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
