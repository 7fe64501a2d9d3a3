"""One thread or two for a table fit, on a quiet machine and beside busy processes.

Below 10,000 training rows the estimators train on one intra-op thread; from 10,000 on, on
as many as other processes leave cores free (the recipe's ``one_thread``,
``deepctrl.tabular.recipe``, and ``deepctrl.engine.workers.free_threads``). This script
measures those choices: a generated table (8 numeric columns, a target rising with ``x0``)
fitted by the default ``DeepCTRLRegressor(rules=[Monotonic("x0", "increasing")])`` on one
thread, on two (the estimator's choice overridden), and as the estimator chooses ("auto"),
alternated, first with the machine as it is, then while ``--busy`` processes spin on the CPU
(as a browser or another job would).

    python benchmarks/table_threads.py                     # 1,500 and 5,000 rows, 2 busy
    python benchmarks/table_threads.py --rows 5000 --rounds 3 --busy 1

Prints JSON: for every table size, load and thread count, the fit seconds of each round.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import torch

import deepctrl as dc
from deepctrl.tabular import estimator_base


def table(rows: int) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({f"x{i}": rng.normal(size=rows) for i in range(8)})
    return X, 2 * X["x0"] + np.sin(X["x1"]) + rng.normal(0, 0.3, rows)


@contextlib.contextmanager
def as_they_are() -> Iterator[None]:
    yield


def fit_seconds(rows: int, threads: int | str) -> float:
    """The default fit's wall time on ``threads`` intra-op threads ("auto": as the
    estimator chooses)."""
    X, y = table(rows)
    torch.set_num_threads(2 if threads == "auto" else int(threads))
    cap, free = estimator_base.single_thread, estimator_base.free_threads
    if threads == 2:  # lift the recipe's one-thread cap and the load's
        estimator_base.single_thread = as_they_are
        estimator_base.free_threads = torch.get_num_threads
    try:
        start = time.perf_counter()
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("x0", "increasing")], random_state=0).fit(X, y)
        return round(time.perf_counter() - start, 2)
    finally:
        estimator_base.single_thread, estimator_base.free_threads = cap, free


def spin(stop: Any) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1500, 5000])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes for the load")
    args = parser.parse_args()
    fit_seconds(300, 1)  # PyTorch's first kernels and thread pools, outside the clock
    results: list[dict[str, Any]] = []
    for busy in (0, args.busy):
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(busy)]
        for p in spinners:
            p.start()
        try:
            for rows in args.rows:
                times: dict[int | str, list[float]] = {1: [], 2: [], "auto": []}
                for _ in range(args.rounds):
                    for threads in times:
                        times[threads].append(fit_seconds(rows, threads))
                for threads, seconds in times.items():
                    results.append(
                        {"rows": rows, "busy": busy, "threads": threads, "seconds": seconds}
                    )
        finally:
            stop.set()
            for p in spinners:
                p.join()
    print(json.dumps({"results": results}, indent=1))


if __name__ == "__main__":
    main()
