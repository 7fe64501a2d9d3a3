"""Seconds per training epoch on the pendulum (paper network, batch 64): deepctrl's fit
(1 seed, and 10 seeds vectorized) against a plain authors-style loop measured in the
same run (DataLoader batches, one seed at a time, energy per batch, torch.optim.Adam).

    python benchmarks/epoch_speed.py [--epochs 3] [--threads 1] [--repeats 3] [--compile]
                                     [--workers 2]

Prints one JSON object: the median over ``repeats`` rounds, each round timing every variant
one after the other, so that a busy neighbour slows all of them alike; ``speedup_<variant>``
divides the authors-style seconds (times the seeds) by the variant's. Both sides
compute the same thing: DeepCTRL with a Beta(0.1, 0.1) alpha per batch, fresh N(0, 0.01^2)
input noise, L1 task loss, energy-rule loss.

With ``--compile`` every round also times ``dc.fit(compile=True)``: the median epoch once
compiled (epochs 2 to 1 + epochs of one fit, each timed on its own) and the first epoch,
which holds the compilation (from inductor's disk cache after the first round).
With ``--workers N`` as well, it times the ten seeds compiled the way
``deepctrl reproduce`` trains them on a CPU: N single-threaded processes, each with its
share of the seeds, starting every epoch together; an epoch of the ten seeds lasts as long
as the slowest share's.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc
from deepctrl.engine.workers import seed_parts
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule


def authors_style_epoch(model, opt, X, y, rho, rng) -> None:
    """One epoch the way the authors' scripts train: a DataLoader and a Python loop."""
    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
    l1 = torch.nn.L1Loss()
    for xb, yb in loader:
        xb = xb + 0.01 * torch.randn_like(xb)
        alpha = float(rng.beta(0.1, 0.1))
        y_hat = model(xb, alpha)
        rule = torch.relu(pendulum.energy_increase(xb, y_hat)).mean()
        loss = alpha * rule + rho * (1 - alpha) * l1(y_hat, yb)
        opt.zero_grad()
        loss.backward()
        opt.step()


def time_authors_style(X, y, epochs: int, seed: int) -> float:
    torch.manual_seed(seed)
    model = deepctrl_net()
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(seed)
    start = time.perf_counter()
    for _ in range(epochs):
        authors_style_epoch(model, opt, X, y, 1.0, rng)
    return (time.perf_counter() - start) / epochs


def fit_seconds(
    train, epochs: int, n_seeds: int, compile: bool = False, clock: EpochClock | None = None
) -> float:
    start = time.perf_counter()
    dc.fit(
        deepctrl_net(),
        energy_rule(),
        dc.methods.DeepCTRL(rho=1.0),
        train=train,
        max_epochs=epochs,
        seeds=list(range(n_seeds)),
        input_noise=0.01,
        batch_size=64,
        compile=compile,
        callbacks=[clock] if clock is not None else [],
    )
    return time.perf_counter() - start


def time_fit(train, epochs: int, n_seeds: int) -> float:
    return fit_seconds(train, epochs, n_seeds) / epochs


class EpochClock(dc.Callback):
    """Seconds of every training epoch of a fit (the pass over the data, without
    validation), from the fit's own callbacks; ``wait()``, if given, runs before each
    epoch, outside the timed span."""

    def __init__(self, wait: Callable[[], object] | None = None) -> None:
        self.seconds: list[float] = []
        self.wait = wait

    def on_epoch_start(self, epoch: int) -> None:
        if self.wait is not None:
            self.wait()

    def on_epoch_end(self, end: dc.EpochEnd) -> None:
        self.seconds.append(end.train_seconds)


def time_compiled(train, epochs: int, n_seeds: int) -> tuple[float, float]:
    """(median seconds per epoch once compiled, seconds of the first epoch, compilation in)."""
    clock = EpochClock()
    fit_seconds(train, 1 + epochs, n_seeds, compile=True, clock=clock)
    return float(np.median(clock.seconds[1:])), clock.seconds[0]


_barrier: Any = None


def _join(barrier: Any) -> None:
    global _barrier
    _barrier = barrier
    torch.set_num_threads(1)


def _share_epochs(seeds: list[int], epochs: int) -> list[float]:
    """Seconds of each epoch of one worker's compiled fit, every epoch started together."""
    train = pendulum.load("paper").train
    clock = EpochClock(wait=_barrier.wait)
    dc.fit(
        deepctrl_net(),
        energy_rule(),
        dc.methods.DeepCTRL(rho=1.0),
        train=train,
        max_epochs=1 + epochs,
        seeds=seeds,
        input_noise=0.01,
        batch_size=64,
        compile=True,
        callbacks=[clock],
    )
    return clock.seconds


def time_compiled_workers(epochs: int, n_seeds: int, workers: int) -> float:
    """Median seconds per epoch of ``n_seeds`` compiled seeds split over ``workers``
    single-threaded processes (an epoch: the slowest share's), compilation excluded."""
    ctx = torch.multiprocessing.get_context("spawn")
    parts = seed_parts(tuple(range(n_seeds)), workers)
    with ProcessPoolExecutor(
        workers, mp_context=ctx, initializer=_join, initargs=(ctx.Barrier(workers),)
    ) as pool:
        shares = list(pool.map(_share_epochs, [list(p) for p in parts], [epochs] * workers))
    return float(np.median(np.max(np.array(shares)[:, 1:], axis=0)))


def one_round(data, args, r: int) -> dict[str, float]:
    """Seconds per epoch of every variant, timed one after the other."""
    X, y = data.train
    out = {
        "authors_style_1_seed": time_authors_style(X, y, args.epochs, r),
        "fit_1_seed": time_fit(data.train, args.epochs, 1),
        "fit_10_seeds": time_fit(data.train, args.epochs, 10),
    }
    if args.compile:
        for n in (1, 10):
            name = f"fit_{n}_seed{'s' * (n > 1)}_compiled"
            out[name], out[f"{name}_first_epoch"] = time_compiled(data.train, args.epochs, n)
        if args.workers > 1:
            out[f"fit_10_seeds_compiled_{args.workers}_workers"] = time_compiled_workers(
                args.epochs, 10, args.workers
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile", action="store_true")
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = pendulum.load("paper")
    X, y = data.train
    time_fit((X[:64], y[:64]), 1, 1)  # warm-up: imports and first-call costs
    rounds = [one_round(data, args, r) for r in range(args.repeats)]
    median = {k: float(np.median([r[k] for r in rounds])) for k in rounds[0]}
    out: dict[str, Any] = {
        "benchmark": "pendulum_epoch_seconds",
        "threads": args.threads,
        "epochs": args.epochs,
        "repeats": args.repeats,
    }
    out.update({k: round(v, 1 if k.endswith("first_epoch") else 3) for k, v in median.items()})
    authors = median["authors_style_1_seed"]
    for k, v in median.items():
        if k.startswith("fit_") and not k.endswith("first_epoch"):
            seeds = 10 if "10_seeds" in k else 1
            out["speedup" + k[3:]] = round(seeds * authors / v, 2)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
