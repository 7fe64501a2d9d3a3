"""Training and sweeping over data that never exist in memory: a Dataset that makes every
row from its index on demand, read through a DataLoader batch by batch.

    python benchmarks/stream_memory.py [--rows 100000 1000000 10000000] [--epochs 1]

Each size runs in its own process, which reports its peak resident memory (ru_maxrss)
before and after: importing torch and building the model, then ``dc.fit`` (rho="auto",
which reads the data twice more: for the scales and for the initial losses), then a
``dc.sweep`` over 11 alphas. Prints one JSON object; the data a tensor would hold are
listed for comparison (rows x 9 float32 values).

The rows are read in index order: they are already in random order (each is a hash of its
index). A shuffling ``RandomSampler`` would hold the permutation of all indices as a
Python list, about 36 bytes per row (360 MB for 10^7 rows): that is the DataLoader's memory,
not deepctrl's; shuffle within blocks of rows in your own sampler if that matters.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import torch
from torch.utils.data import BatchSampler, DataLoader, Dataset

import deepctrl as dc

FEATURES = 8


class Generated(Dataset):
    """Row i: 8 pseudo-random features made from i alone (a hash, no stored state) and a
    target that falls with feature 0. ``__getitem__`` takes a list of indices (one batch)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.freq = torch.arange(1, FEATURES + 1, dtype=torch.float64) * 12.9898

    def __len__(self) -> int:
        return self.n

    def __getitem__(self, index: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        i = torch.as_tensor(index, dtype=torch.float64)[:, None]
        x = ((torch.sin(i * 1e-3 * self.freq) * 43758.5453) % 1.0).float() * 2 - 1
        y = -x[:, :1] + 0.5 * x[:, 1:2] ** 2 + 0.3 * x[:, 2:3]
        return x, y


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def one_size(rows: int, epochs: int) -> dict:
    torch.set_num_threads(1)
    data = Generated(rows)
    train = DataLoader(
        data, sampler=BatchSampler(range(rows), 1024, drop_last=False), batch_size=None
    )
    model = dc.DeepCTRL(dc.mlp(FEATURES, 32, 16), dc.mlp(FEATURES, 32, 16), dc.mlp(32, 32, 1))
    rule = dc.rules.Monotonic(0, "decreasing", perturbation=dc.rules.Additive(0.1))
    before = peak_mb()
    start = time.perf_counter()
    result = dc.fit(model, rule, dc.methods.DeepCTRL(), train=train, max_epochs=epochs)
    fit_seconds = time.perf_counter() - start
    after_fit = peak_mb()
    start = time.perf_counter()
    table = dc.sweep(
        result.model,
        rule,
        DataLoader(data, sampler=BatchSampler(range(rows), 4096, drop_last=False), batch_size=None),
        metrics=("mae", "mse"),
    )
    return {
        "rows": rows,
        "tensor_data_mb": round(rows * (FEATURES + 1) * 4 / 2**20, 1),
        "peak_mb_before_fit": round(before, 1),
        "peak_mb_after_fit": round(after_fit, 1),
        "peak_mb_after_sweep": round(peak_mb(), 1),
        "fit_seconds": round(fit_seconds, 1),
        "epochs": epochs,
        "sweep_seconds": round(time.perf_counter() - start, 1),
        "train_loss": round(result.history[0]["train_loss"][-1], 4),
        "verification_ratio_alpha_0_and_1": [
            round(table["verification_ratio"][0], 3),
            round(table["verification_ratio"][-1], 3),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[100_000, 1_000_000, 10_000_000])
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        print(json.dumps(one_size(args.child, args.epochs)))
        return
    runs = []
    for rows in args.rows:
        done = subprocess.run(
            [sys.executable, __file__, "--child", str(rows), "--epochs", str(args.epochs)],
            capture_output=True,
            text=True,
            check=True,
        )
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(json.dumps({"benchmark": "stream_memory", "batch_size": 1024, "runs": runs}, indent=2))


if __name__ == "__main__":
    main()
