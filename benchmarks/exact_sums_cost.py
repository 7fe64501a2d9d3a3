"""What ``dc.fit(exact_sums=True)`` costs: seconds per epoch with float64 gradient sums
against the default float32 sums, one seed and ten, eager, on the README's example
(1,500 training rows, batch 32, a monotonic rule, DeepCTRL with rho measured).

    python benchmarks/exact_sums_cost.py --epochs 10 --repeats 3

Prints JSON: for each number of seeds, the median seconds per epoch of each setting over
the rounds (both settings timed in every round, alternating) and their ratio.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch

import deepctrl as dc


def data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(2000, 3, generator=g)
    y = -X[:, :1] + 0.5 * X[:, 1:2] ** 2 + 0.1 * torch.randn(2000, 1, generator=g)
    return X, y


def seconds_per_epoch(seeds: int, epochs: int, exact: bool) -> float:
    X, y = data()
    model = dc.DeepCTRL(dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 32, 1))
    start = time.perf_counter()
    dc.fit(
        model,
        dc.rules.Monotonic(0, "decreasing"),
        dc.methods.DeepCTRL(),
        train=(X[:1500], y[:1500]),
        val=(X[1500:1750], y[1500:1750]),
        batch_size=32,
        max_epochs=epochs,
        patience=epochs,
        seeds=list(range(seeds)),
        exact_sums=exact,
    )
    return (time.perf_counter() - start) / epochs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    out = {"epochs": args.epochs, "repeats": args.repeats, "threads": args.threads}
    for seeds in (1, 10):
        times: dict[str, list[float]] = {"float32": [], "float64": []}
        for _ in range(args.repeats):
            for name, exact in (("float32", False), ("float64", True)):
                times[name].append(seconds_per_epoch(seeds, args.epochs, exact))
        median = {k: statistics.median(v) for k, v in times.items()}
        out[f"{seeds} seeds"] = {
            "float32_sums_s": median["float32"],
            "exact_sums_s": median["float64"],
            "ratio": median["float64"] / median["float32"],
            "rounds": times,
        }
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
