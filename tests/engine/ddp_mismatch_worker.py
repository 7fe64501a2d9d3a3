"""Trains under torchrun with ranks that disagree: ``seeds`` (each rank its own seeds) or
``shards`` (each rank its own half of the rows, as a DistributedSampler would give).
Used by test_distributed.py: the fit must stop on every rank with one clear error."""

import os
import sys

import torch

import deepctrl as dc


def main(mode: str) -> None:
    torch.set_num_threads(1)
    rank = int(os.environ.get("RANK", "0"))
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 3, generator=g)
    y = X[:, :1] + 0.05 * torch.randn(200, 1, generator=g)
    seeds = [rank, rank + 10] if mode == "seeds" else [0, 1]
    train = (X[rank::2], y[rank::2]) if mode == "shards" else (X, y)
    model = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 4, 1))
    try:
        dc.fit(model, dc.rules.Monotonic(0, "increasing"), train=train, seeds=seeds, max_epochs=1)
    except ValueError as exc:
        print(f"rank {rank}: {exc}", file=sys.stderr)
        sys.exit(3)


if __name__ == "__main__":
    main(sys.argv[1])
