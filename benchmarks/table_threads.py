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
    python benchmarks/table_threads.py --predict 1000000   # predictions instead of fits

Prints JSON: for every table size, load and thread count, the fit seconds of each round.
With ``--predict N``: the seconds of ``predict`` on N new rows of the same table, from one
model fitted on 40,000 rows; the estimators evaluate 200,000 rows (times alphas) and more on
as many threads as other processes leave cores free
(``deepctrl.tabular.alpha_evaluation.evaluation_threads``), fewer on PyTorch's setting.
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
from deepctrl.tabular import alpha_evaluation, network_training


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
    cap, free = network_training.single_thread, network_training.free_threads
    if threads == 2:  # lift the recipe's one-thread cap and the load's
        network_training.single_thread = as_they_are
        network_training.free_threads = torch.get_num_threads
    try:
        start = time.perf_counter()
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("x0", "increasing")], random_state=0).fit(X, y)
        return round(time.perf_counter() - start, 2)
    finally:
        network_training.single_thread, network_training.free_threads = cap, free


def predict_seconds(est: Any, X: pd.DataFrame, threads: int | str) -> float:
    """``est.predict(X)``'s wall time on ``threads`` intra-op threads ("auto": as the
    estimator chooses)."""
    torch.set_num_threads(2 if threads == "auto" else int(threads))
    chooses = alpha_evaluation.evaluation_threads
    if threads != "auto":
        alpha_evaluation.evaluation_threads = lambda work: as_they_are()
    try:
        start = time.perf_counter()
        est.predict(X)
        return round(time.perf_counter() - start, 2)
    finally:
        alpha_evaluation.evaluation_threads = chooses


def spin(stop: Any) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10_000))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1500, 5000])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--busy", type=int, default=2, help="spinning processes for the load")
    parser.add_argument(
        "--predict", type=int, default=0, metavar="N", help="time predict on N rows instead"
    )
    args = parser.parse_args()
    fit_seconds(300, 1)  # PyTorch's first kernels and thread pools, outside the clock
    if args.predict:
        model = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x0", "increasing")], random_state=0)
        model.fit(*table(40_000))
        new_rows = table(args.predict)[0]
    results: list[dict[str, Any]] = []
    for busy in (0, args.busy):
        stop = multiprocessing.Event()
        spinners = [multiprocessing.Process(target=spin, args=(stop,)) for _ in range(busy)]
        for p in spinners:
            p.start()
        try:
            for rows in [args.predict] if args.predict else args.rows:
                times: dict[int | str, list[float]] = {1: [], 2: [], "auto": []}
                for _ in range(args.rounds):
                    for threads in times:
                        times[threads].append(
                            predict_seconds(model, new_rows, threads)
                            if args.predict
                            else fit_seconds(rows, threads)
                        )
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
