"""Seconds per epoch and peak memory for 10^4, 10^5 and 10^6 rows of a 20-feature
tabular regression with a Monotonic rule (DeepCTRL, batch 256, one seed).

    python benchmarks/scale.py [--rows 10000 100000 1000000] [--epochs 2]

Each size runs in a fresh process so that its peak resident memory (ru_maxrss) is its
own; the baseline is the same process after building the data, before training.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch

import deepctrl as dc


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_size(rows: int, epochs: int) -> dict[str, float]:
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(rows, 20, generator=g)
    y = X[:, :5].sum(1, keepdim=True) - X[:, :1] * 2 + 0.1 * torch.randn(rows, 1, generator=g)
    data_mb = (X.numel() + y.numel()) * 4 / 2**20
    model = dc.DeepCTRL(dc.mlp(20, 64, 16), dc.mlp(20, 64, 16), dc.mlp(32, 64, 1))
    rule = dc.rules.Monotonic(0, "decreasing")
    dc.fit(model, rule, train=(X[:512], y[:512]), max_epochs=1, batch_size=256)  # warm-up
    before = peak_mb()
    start = time.perf_counter()
    dc.fit(
        model,
        rule,
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, y),
        max_epochs=epochs,
        batch_size=256,
        task_loss="mse",
    )
    seconds = (time.perf_counter() - start) / epochs
    return {
        "rows": rows,
        "seconds_per_epoch": round(seconds, 3),
        "rows_per_second": round(rows / seconds),
        "data_mb": round(data_mb, 1),
        "peak_rss_mb": round(peak_mb(), 1),
        "rss_before_training_mb": round(before, 1),
        "training_extra_mb": round(peak_mb() - before, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(one_size(args.child, args.epochs)))
        return
    results = []
    for rows in args.rows:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(rows), "--epochs", str(args.epochs)],
            check=True,
            capture_output=True,
            text=True,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print(
        json.dumps(
            {"benchmark": "tabular_scale", "features": 20, "batch_size": 256, "sizes": results},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
