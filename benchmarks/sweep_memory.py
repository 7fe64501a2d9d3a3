"""How much resident memory an estimator's sweep over 21 alphas takes on many rows.

A ``DeepCTRLRegressor`` is fitted (one epoch) on 20,000 rows of the ``table_speed.py``
table; then the sweep that chooses alpha at fit (21 alphas, the rule checked on every row)
runs on 200,000 encoded rows, twice. Printed: the encoded rows' size and, for each sweep,
the peak and final resident memory above what the process held before it (sampled every
20 ms, Linux). The sweep's results take 34 MB here (21 alphas x 200,000 rows, outputs and
rule checks); its blocks of rows are freed as it goes. Run it under ``MALLOC_ARENA_MAX=1``
too, to compare glibc's arena settings:

    python benchmarks/sweep_memory.py
    MALLOC_ARENA_MAX=1 python benchmarks/sweep_memory.py
    python benchmarks/sweep_memory.py --core    # dc.predict_sweep on 200,000 rows instead

Prints JSON.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
from collections.abc import Callable

import torch

import deepctrl as dc
from deepctrl.core.sweep_outputs import predict_sweep
from deepctrl.tabular.alpha_choice import ALPHA_GRID
from table_speed import rss_mb, table


def estimator_sweep() -> tuple[Callable[[], object], float]:
    """The estimator's sweep at fit: 21 alphas over 200,000 encoded rows of the table."""
    X, y = table(200_000, 0)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("x0", "increasing")], random_state=0, max_epochs=1
    ).fit(X[:20_000], y[:20_000])
    encoded = est._encode(X)
    return (
        lambda: est._sweep_encoded(encoded, y.to_numpy()[:, None], ALPHA_GRID),
        encoded.numel() * 4 / 2**20,
    )


def core_sweep() -> tuple[Callable[[], object], float]:
    """``predict_sweep`` of the core API: 21 alphas over 200,000 rows of 20 inputs, an
    untrained DeepCTRL network of width 64."""
    torch.manual_seed(0)
    X = torch.randn(200_000, 20)
    net = dc.DeepCTRL(dc.mlp(20, 64, 64, 16), dc.mlp(20, 64, 64, 16), dc.mlp(32, 64, 1))
    rule = dc.Monotonic(0, "increasing")
    return (lambda: predict_sweep(net, rule, X, ALPHA_GRID), X.numel() * 4 / 2**20)


def main() -> int:
    core = "--core" in sys.argv[1:]
    run, input_mb = core_sweep() if core else estimator_sweep()
    peak = [0.0]

    def sample() -> None:
        while True:
            peak[0] = max(peak[0], rss_mb())
            time.sleep(0.02)

    threading.Thread(target=sample, daemon=True).start()
    sweeps = []
    for _ in range(2):
        gc.collect()
        time.sleep(0.1)
        base, peak[0] = rss_mb(), 0.0
        start = time.perf_counter()
        run()
        seconds = time.perf_counter() - start
        time.sleep(0.1)
        sweeps.append(
            {
                "peak_mb": round(peak[0] - base),
                "after_mb": round(rss_mb() - base),
                "seconds": round(seconds, 2),
            }
        )
    print(
        json.dumps(
            {
                "sweep": "core predict_sweep" if core else "estimator",
                "MALLOC_ARENA_MAX": os.environ.get("MALLOC_ARENA_MAX"),
                "input_mb": round(input_mb, 1),
                "sweeps": sweeps,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
