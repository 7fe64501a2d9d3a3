"""Seconds per training epoch on the pendulum (paper network, batch 64): deepctrl's fit
(1 seed, and 10 seeds vectorized) against a plain authors-style loop measured in the
same run (DataLoader batches, one seed at a time, energy per batch, torch.optim.Adam).

    python benchmarks/epoch_speed.py [--epochs 3] [--threads 1] [--repeats 3] [--compile]

Prints one JSON object: the median over ``repeats`` rounds, each round timing the three
variants one after the other, so that a busy neighbour slows all of them alike. Both sides
compute the same thing: DeepCTRL with a Beta(0.1, 0.1) alpha per batch, fresh N(0, 0.01^2)
input noise, L1 task loss, energy-rule loss.

With ``--compile`` it also times ``dc.fit(compile=True)``: the median epoch once compiled
(epochs 2 to 1 + epochs of one fit, each timed on its own) and the first epoch, which holds
the compilation.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections.abc import Callable, Iterator

import numpy as np
import torch
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc
from deepctrl.engine.trainer import Trainer
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum import deepctrl_net, energy_rule


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


def fit_seconds(train, epochs: int, n_seeds: int, compile: bool = False) -> float:
    start = time.perf_counter()
    dc.fit(deepctrl_net(), energy_rule(), dc.methods.DeepCTRL(rho=1.0), train=train,
           max_epochs=epochs, seeds=list(range(n_seeds)), input_noise=0.01, batch_size=64,
           compile=compile)
    return time.perf_counter() - start


def time_fit(train, epochs: int, n_seeds: int) -> float:
    return fit_seconds(train, epochs, n_seeds) / epochs


@contextlib.contextmanager
def epoch_clock(around: Callable[[int, bool], object] | None = None) -> Iterator[list[float]]:
    """Seconds of every training epoch (the pass over the data, without validation) of the
    fits run inside the block; ``around(epoch, starting)`` is called before (True) and after
    (False) each epoch, numbered from 1, outside the timed span."""
    seconds: list[float] = []
    plain = Trainer.train_epoch

    def timed(self: Trainer) -> torch.Tensor:
        if around is not None:
            around(len(seconds) + 1, True)
        start = time.perf_counter()
        out = plain(self)
        seconds.append(time.perf_counter() - start)
        if around is not None:
            around(len(seconds), False)
        return out

    Trainer.train_epoch = timed  # type: ignore[method-assign]
    try:
        yield seconds
    finally:
        Trainer.train_epoch = plain  # type: ignore[method-assign]


def time_compiled(train, epochs: int, n_seeds: int) -> tuple[float, float]:
    """(median seconds per epoch once compiled, seconds of the first epoch, compilation in)."""
    with epoch_clock() as seconds:
        fit_seconds(train, 1 + epochs, n_seeds, compile=True)
    return float(np.median(seconds[1:])), seconds[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compile", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = pendulum.load("paper")
    X, y = data.train
    time_fit((X[:64], y[:64]), 1, 1)  # warm-up: imports and first-call costs
    rounds = [(time_authors_style(X, y, args.epochs, r), time_fit(data.train, args.epochs, 1),
               time_fit(data.train, args.epochs, 10)) for r in range(args.repeats)]
    authors, one, ten = (float(np.median(column)) for column in zip(*rounds, strict=True))
    compiled = {}
    if args.compile:
        for n in (1, 10):
            per_epoch, first = time_compiled(data.train, args.epochs, n)
            compiled[f"fit_{n}_seed{'s' * (n > 1)}_compiled"] = round(per_epoch, 3)
            compiled[f"fit_{n}_seed{'s' * (n > 1)}_compiled_first_epoch"] = round(first, 1)
        compiled["speedup_1_seed_compiled"] = round(authors / compiled["fit_1_seed_compiled"], 2)
        compiled["speedup_10_seeds_compiled"] = round(
            10 * authors / compiled["fit_10_seeds_compiled"], 2)
    print(json.dumps({
        "benchmark": "pendulum_epoch_seconds", "threads": args.threads, "epochs": args.epochs,
        "repeats": args.repeats,
        "authors_style_1_seed": round(authors, 3), "fit_1_seed": round(one, 3),
        "fit_10_seeds": round(ten, 3),
        "speedup_1_seed": round(authors / one, 2),
        "speedup_10_seeds_vs_10_authors_runs": round(10 * authors / ten, 2),
        **compiled,
    }, indent=2))


if __name__ == "__main__":
    main()
