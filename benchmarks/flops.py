"""Achieved GFLOP/s of the pendulum training step (paper network, batch 64) as a fraction
of a large matrix product's on the same machine.

    python benchmarks/flops.py [--threads N] [--seeds 1 10 40] [--compile]

FLOPs of a step are counted from the network's linear layers: 2 per multiply-add in the
forward pass and twice that in the backward pass (6 x weights x rows per step); the
energy rule, activations and the optimizer are not counted, so the fraction is a lower
bound. With ``--compile`` the step is ``dc.fit(compile=True)``'s and the epochs after the
first (which holds the compilation) are timed. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule
from epoch_speed import EpochClock


def matmul_gflops(n: int = 2048, repeats: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e9


def step_gflops(n_seeds: int, epochs: int = 2, compile: bool = False) -> dict[str, float]:
    X, y = pendulum.load("paper").train
    net = deepctrl_net()
    weights = sum(m.weight.numel() for m in net.modules() if isinstance(m, torch.nn.Linear))
    dc.fit(net, energy_rule(), train=(X[:64], y[:64]), max_epochs=1)  # warm-up
    clock = EpochClock()
    dc.fit(
        net,
        energy_rule(),
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, y),
        max_epochs=epochs + compile,
        seeds=list(range(n_seeds)),
        input_noise=0.01,
        batch_size=64,
        compile=compile,
        callbacks=[clock],
    )
    seconds = clock.seconds
    per_epoch = float(np.median(seconds[1:] if compile else seconds))
    flops = 6 * weights * len(X) * n_seeds
    return {
        "seeds": n_seeds,
        "seconds_per_epoch": round(per_epoch, 3),
        "gflops": round(flops / per_epoch / 1e9, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument(
        "--seeds",
        type=int,
        nargs="+",
        default=[1, 10, 40],
        help="stack sizes to time (40: a method stack of the reproduction)",
    )
    parser.add_argument("--compile", action="store_true", help="time dc.fit(compile=True)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peak = matmul_gflops()
    steps = [step_gflops(s, compile=args.compile) for s in args.seeds]
    for s in steps:
        s["fraction_of_matmul"] = round(s["gflops"] / peak, 4)
    print(
        json.dumps(
            {
                "benchmark": "training_step_gflops",
                "threads": args.threads,
                "compiled": args.compile,
                "matmul_2048_gflops": round(peak, 1),
                "training": steps,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
