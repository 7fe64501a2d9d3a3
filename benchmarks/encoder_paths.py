"""Seconds per training epoch of each way ``dc.fit`` runs stacked seeds: "lowered" (MLPs as
batched matrix products), "vmap" and "loop" (seed after seed), for 1 and 10 seeds.

    python benchmarks/encoder_paths.py [--epochs 2] [--threads 1]

The paper's pendulum network (an MLP, so normally lowered) is also forced through vmap and
the loop, to price each path on the same model. Two encoders that cannot be lowered show
their own path: a GRU over windows of 8 pendulum states (loop: vmap has no batching rule
for recurrent layers) and the digits CNN (vmap). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch

import deepctrl as dc
from deepctrl.engine.ensemble import Stack
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import digits_cnn
import pendulum_recurrent


def seconds_per_epoch(
    model, rule, train, epochs: int, seeds: int, path: str | None, task_loss: str = "mae"
) -> float:
    """Median-free single timing of ``epochs`` epochs (after a one-epoch warm-up run)."""
    choose = Stack._choose
    if path is not None:
        Stack._choose = lambda self, x, alpha: path  # type: ignore[method-assign]
    try:
        kw = dict(train=train, batch_size=64, seeds=list(range(seeds)), task_loss=task_loss)
        dc.fit(model, rule, dc.methods.DeepCTRL(rho=1.0), max_epochs=1, **kw)
        start = time.perf_counter()
        result = dc.fit(model, rule, dc.methods.DeepCTRL(rho=1.0), max_epochs=epochs, **kw)
        assert path is None or result.path == path
        return (time.perf_counter() - start) / epochs
    finally:
        Stack._choose = choose  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="run these cases only")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = pendulum.load("paper")
    windows = pendulum_recurrent.windows(*data.train, k=8)
    digits = digits_cnn.load_digits()
    images = (
        torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0,
        torch.tensor(digits.target),
    )
    cases = {
        "pendulum MLP (lowered)": (deepctrl_net, energy_rule(), data.train, None, "mae"),
        "pendulum MLP forced through vmap": (
            deepctrl_net,
            energy_rule(),
            data.train,
            "vmap",
            "mae",
        ),
        "pendulum MLP forced through loop": (
            deepctrl_net,
            energy_rule(),
            data.train,
            "loop",
            "mae",
        ),
        "pendulum GRU, 8 states (loop)": (
            lambda: pendulum_recurrent.network(32),
            pendulum_recurrent.energy_rule(),
            windows,
            None,
            "mae",
        ),
        "digits CNN (vmap)": (
            digits_cnn.network,
            digits_cnn.ShiftInvariant(),
            images,
            None,
            "cross_entropy",
        ),
        "digits CNN forced through loop": (
            digits_cnn.network,
            digits_cnn.ShiftInvariant(),
            images,
            "loop",
            "cross_entropy",
        ),
    }
    out: dict = {
        "benchmark": "encoder_paths_epoch_seconds",
        "threads": args.threads,
        "epochs": args.epochs,
        "batch_size": 64,
        "runs": {},
    }
    for name, (make, rule, train, path, loss) in cases.items():
        if args.only and not any(word in name for word in args.only):
            continue
        one = seconds_per_epoch(make(), rule, train, args.epochs, 1, path, loss)
        ten = seconds_per_epoch(make(), rule, train, args.epochs, 10, path, loss)
        out["runs"][name] = {
            "rows": int(train[1].shape[0]),
            "1_seed": round(one, 3),
            "10_seeds": round(ten, 3),
            "10_seeds_over_1": round(ten / one, 2),
        }
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
