"""Achieved GFLOP/s of the pendulum training step (paper network, batch 64) as a fraction
of a large matrix product's on the same machine.

    python benchmarks/flops.py [--threads N] [--seeds 1 10 40]

FLOPs of a step are counted from the network's linear layers: 2 per multiply-add in the
forward pass and twice that in the backward pass (6 x weights x rows per step); the
energy rule, activations and the optimizer are not counted, so the fraction is a lower
bound. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum import deepctrl_net, energy_rule


def matmul_gflops(n: int = 2048, repeats: int = 10) -> float:
    a, b = torch.randn(n, n), torch.randn(n, n)
    a @ b
    start = time.perf_counter()
    for _ in range(repeats):
        a @ b
    return 2 * n**3 * repeats / (time.perf_counter() - start) / 1e9


def step_gflops(n_seeds: int, epochs: int = 2) -> dict[str, float]:
    X, y = pendulum.load("paper").train
    net = deepctrl_net()
    weights = sum(m.weight.numel() for m in net.modules() if isinstance(m, torch.nn.Linear))
    dc.fit(net, energy_rule(), train=(X[:64], y[:64]), max_epochs=1)  # warm-up
    start = time.perf_counter()
    dc.fit(net, energy_rule(), dc.methods.DeepCTRL(rho=1.0), train=(X, y), max_epochs=epochs,
           seeds=list(range(n_seeds)), input_noise=0.01, batch_size=64)
    seconds = time.perf_counter() - start
    flops = 6 * weights * len(X) * epochs * n_seeds
    return {"seeds": n_seeds, "seconds_per_epoch": round(seconds / epochs, 3),
            "gflops": round(flops / seconds / 1e9, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 10, 40],
                        help="stack sizes to time (40: a method stack of the reproduction)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    peak = matmul_gflops()
    steps = [step_gflops(s) for s in args.seeds]
    for s in steps:
        s["fraction_of_matmul"] = round(s["gflops"] / peak, 4)
    print(json.dumps({"benchmark": "training_step_gflops", "threads": args.threads,
                      "matmul_2048_gflops": round(peak, 1), "training": steps}, indent=2))


if __name__ == "__main__":
    main()
