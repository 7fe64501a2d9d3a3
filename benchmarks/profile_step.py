"""Where a pendulum training epoch spends its time (paper network, batch 64, DeepCTRL):
torch.profiler's self CPU time of every operator, grouped into matrix products, element-wise
and reduction kernels, the optimizer, and the rest; the wall time left over is Python.

    python benchmarks/profile_step.py [--seeds 1 10] [--epochs 2] [--threads 1]

Prints one JSON object: per seed count, seconds per epoch and steps per epoch, time per
step, operator calls per step, and the share of wall time of each group.
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from torch.profiler import ProfilerActivity, profile

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum import deepctrl_net, energy_rule

GROUPS = {
    "matrix products": ("aten::bmm", "aten::baddbmm", "aten::mm", "aten::addmm", "aten::matmul"),
    "optimizer (fused Adam)": ("aten::_fused_adam_", "aten::_fused_adamw_"),
}


def group_of(name: str) -> str:
    for group, names in GROUPS.items():
        if name in names:
            return group
    return "element-wise, reductions, copies"


def profile_epochs(n_seeds: int, epochs: int) -> dict[str, object]:
    X, y = pendulum.load("paper").train
    fit_args = {"train": (X, y), "max_epochs": epochs, "seeds": list(range(n_seeds)),
                "input_noise": 0.01, "batch_size": 64}
    dc.fit(deepctrl_net(), energy_rule(), dc.methods.DeepCTRL(rho=1.0),
           **{**fit_args, "train": (X[:640], y[:640]), "max_epochs": 1})
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        start = time.perf_counter()
        dc.fit(deepctrl_net(), energy_rule(), dc.methods.DeepCTRL(rho=1.0), **fit_args)
        wall = time.perf_counter() - start
    steps = epochs * -(-len(X) // 64)
    seconds: dict[str, float] = {}
    calls = 0
    for event in prof.key_averages():
        if not event.key.startswith("aten::"):
            continue
        calls += event.count
        group = group_of(event.key)
        seconds[group] = seconds.get(group, 0.0) + event.self_cpu_time_total / 1e6
    seconds["Python and dispatch (wall minus operators)"] = wall - sum(seconds.values())
    return {"seeds": n_seeds, "seconds_per_epoch": round(wall / epochs, 3),
            "steps_per_epoch": steps // epochs, "ms_per_step": round(1e3 * wall / steps, 3),
            "aten_calls_per_step": round(calls / steps, 1),
            "share_of_wall": {k: round(v / wall, 3) for k, v in seconds.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 10])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    print(json.dumps({"benchmark": "pendulum_step_profile", "threads": args.threads,
                      "runs": [profile_epochs(s, args.epochs) for s in args.seeds]}, indent=2))


if __name__ == "__main__":
    main()
