"""Trains under torchrun with ranks that disagree or meet an edge, by ``mode``:

- ``seeds`` (each rank its own seeds), ``shards`` (each rank its own half of the rows, as a
  DistributedSampler would give), ``lr`` (another learning rate on rank 1), ``order`` (the
  same rows in another order on rank 1), ``sampler`` (a DataLoader with a
  DistributedSampler): the fit must stop on every rank with one clear error (exit 3);
- ``subtle``: rank 1 differs only where sums would not tell: its seed is 20240102 against
  20240101, two feature columns swapped, sample weights of 1 and 2 against ones, the mse
  for the mae, the rule's direction and rho; each is named in the one error (exit 3);
- ``fail``: rank 1 raises in a callback at epoch 2; the job must end, not hang;
- ``stop``: a callback asks to stop on rank 0 only (a clock); both ranks stop together;
- ``tiny``: 33 training rows in batches of 32 (a last batch of one row for two ranks) and
  one validation row: the fit completes.

Used by test_distributed.py; ``stop`` and ``tiny`` print each rank's epochs and
validation loss."""

import os
import sys

import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

import deepctrl as dc

REFUSED = {"seeds", "shards", "lr", "order", "sampler", "subtle"}


def main(mode: str) -> None:
    torch.set_num_threads(1)
    rank = int(os.environ.get("RANK", "0"))
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 3, generator=g)
    y = X[:, :1] + 0.05 * torch.randn(200, 1, generator=g)
    seeds = [rank, rank + 10] if mode == "seeds" else [0, 1]
    train: object = (X, y)
    if mode == "shards":
        train = (X[rank::2], y[rank::2])
    elif mode == "order" and rank == 1:
        train = (X.flip(0), y.flip(0))
    elif mode == "sampler":
        data = TensorDataset(X, y)
        sampler = DistributedSampler(data, num_replicas=2, rank=rank, shuffle=False)
        train = DataLoader(data, batch_size=32, sampler=sampler)
    options: dict = {"max_epochs": 1, "lr": 1e-2 if mode == "lr" and rank == 1 else 1e-3}
    val = None
    if mode in ("fail", "stop"):
        val = (X[150:], y[150:])
        train = (X[:150], y[:150])

        def callback(end: dc.EpochEnd) -> bool:
            if mode == "fail" and rank == 1 and end.epoch == 2:
                raise RuntimeError("rank 1 fails in a callback")
            return mode == "stop" and rank == 0 and end.epoch == 2

        options.update(max_epochs=6, callbacks=[callback])
    if mode == "tiny":
        train, val = (X[:33], y[:33]), (X[33:34], y[33:34])
        options.update(max_epochs=2, batch_size=32)
    rule, method = dc.rules.Monotonic(0, "increasing"), dc.methods.DeepCTRL(rho=1.0)
    if mode == "subtle":
        seeds = [20240101 + rank]
        w = torch.ones(200) if rank == 0 else 1.0 + (torch.arange(200) % 2)
        train = (X[:, [0, 2, 1]] if rank == 1 else X, y, w)
        if rank == 1:
            options["task_loss"] = "mse"
            rule, method = dc.rules.Monotonic(0, "decreasing"), dc.methods.DeepCTRL(rho=0.5)
    model = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 4, 1))
    try:
        result = dc.fit(model, rule, method, train=train, val=val, seeds=seeds, **options)
    except ValueError as exc:
        if mode not in REFUSED:
            raise
        print(f"rank {rank}: {exc}", file=sys.stderr)
        sys.exit(3)
    print(f"rank {rank}: epochs {result.epochs} val {result.val_loss}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
