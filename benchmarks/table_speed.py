"""How long a default table fit takes, against LightGBM with the same monotone constraint.

A generated table (40,000 rows: 20 numeric columns, 2 text columns, a regression target that
rises with ``x0``; 80 % to train, 20 % to test), fitted in one process by
``DeepCTRLRegressor(rules=[Monotonic("x0", "increasing")])`` and by
``lightgbm.LGBMRegressor(monotone_constraints=...)``, both with their defaults. The times are
those of the whole ``fit`` call (validation, checks and compilation included); both
libraries are imported before the clock starts.

    python benchmarks/table_speed.py                 # the 40,000-row table
    python benchmarks/table_speed.py --former        # the recipe before 2026-11-25
    python benchmarks/table_speed.py --rows 1000000 --skip-lightgbm
    python benchmarks/table_speed.py --skip-lightgbm --param hidden_size=64 --seed 1
    python benchmarks/table_speed.py --rounds 5      # the ratio in 5 alternated rounds
    python benchmarks/table_speed.py --rows 20000 --levels 3000 [--no-lookup]

``--levels N`` adds a text column ``shop`` of N values (a few frequent, most rare, as shop
or product codes are), each with its own effect on the target; LightGBM gets it as a
category. ``--no-lookup`` makes the estimator's networks multiply the shop's one-hot
inputs like any others instead of looking up one weight column per row (the default from
64 values; ``deepctrl.tabular.network``), to measure what the lookup saves.
``--group-rare K`` replaces the shop values seen fewer than K times in the training rows by
one value, ``(rare)``, in the training and test rows, to measure what grouping them costs.

Prints JSON: fit seconds (wall and CPU) of each model, their ratio, test R2, DeepCTRL's
verification ratio at its default alpha and its epochs, the resident memory before
DeepCTRL's fit, its peak during the fit (sampled every 5 ms) and what the fit adds, beside
the size of the training rows in pandas and the process's lifetime peak (which includes
making the table, predicting and PyTorch's libraries); with ``--rounds``, each round's two
fit times and ratio, and the median ratio.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import threading
import time
from typing import Any

import numpy as np
import pandas as pd
from sklearn.metrics import r2_score

import deepctrl as dc
from estimator_params import add_param_option, params_of


def table(rows: int, seed: int = 0, levels: int = 0) -> tuple[pd.DataFrame, pd.Series]:
    """20 numeric columns (x0 rising, others mixed and nonlinear), 2 text columns, and with
    ``levels`` a third, ``shop``, whose value k is drawn with weight 1 / k^1.1 and adds an
    effect drawn from N(0, 0.7^2)."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"x{i}": rng.normal(0, 1, rows).astype(np.float32) for i in range(20)})
    X["region"] = rng.choice([f"r{i}" for i in range(12)], rows)
    X["channel"] = rng.choice(["web", "store", "phone", "partner", "other"], rows)
    region = X["region"].str[1:].astype(int).to_numpy() / 11.0
    channel = (
        X["channel"]
        .map({"web": 0.5, "store": 0.0, "phone": -0.3, "partner": 0.2, "other": -0.1})
        .to_numpy()
    )
    x = X[[f"x{i}" for i in range(20)]].to_numpy(np.float64)
    y = (
        2.0 * x[:, 0]
        + 0.5 * np.tanh(2 * x[:, 0])
        + np.sin(x[:, 1]) * x[:, 2]
        + 0.8 * x[:, 3] ** 2
        - 0.6 * x[:, 4]
        + 0.4 * x[:, 5] * x[:, 6]
        + region
        + channel
        + 0.3 * np.abs(x[:, 7])
        + rng.normal(0, 0.5, rows)
    )
    if levels:
        weights = 1.0 / np.arange(1, levels + 1) ** 1.1
        shop = rng.choice(levels, rows, p=weights / weights.sum())
        X["shop"] = np.array([f"s{k}" for k in range(levels)], dtype=object)[shop]
        y = y + rng.normal(0, 0.7, levels)[shop]
    return X, pd.Series(y, name="y")


FORMER = {
    "n_seeds": 5,
    "hidden_size": 128,
    "batch_size": 256,
    "learning_rate": 1e-3,
    "max_epochs": 500,
    "patience": 20,
    "lr_schedule": "constant",
}
"""The estimators' defaults before the current recipe (on this table: width 128, batch 256)."""


def rss_mb() -> float:
    """This process's resident memory now (Linux)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def timed(fit: Any) -> tuple[Any, float, float]:
    cpu = time.process_time()
    start = time.perf_counter()
    model = fit()
    return model, time.perf_counter() - start, time.process_time() - cpu


class PeakMemory:
    """The highest resident memory while the block runs, sampled every 5 ms (Linux)."""

    def __enter__(self) -> PeakMemory:
        self.peak, self.running = rss_mb(), True
        self.thread = threading.Thread(target=self._sample, daemon=True)
        self.thread.start()
        return self

    def _sample(self) -> None:
        while self.running:
            self.peak = max(self.peak, rss_mb())
            time.sleep(0.005)

    def __exit__(self, *exc: object) -> None:
        self.running = False
        self.thread.join()
        self.peak = max(self.peak, rss_mb())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-lightgbm", action="store_true")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="fit both models this many times, alternately, and report each "
        "round's ratio and their median (the machine's load moves both)",
    )
    parser.add_argument(
        "--warm-up",
        action="store_true",
        help="fit 20,000 other rows for one epoch first, so that the memory "
        "measured is the fit's, not PyTorch's first use of its kernels",
    )
    parser.add_argument("--former", action="store_true", help="fit with the former defaults")
    parser.add_argument("--levels", type=int, default=0, help="add a text column of N values")
    parser.add_argument(
        "--no-lookup", action="store_true", help="multiply one-hot inputs, however wide"
    )
    parser.add_argument(
        "--group-rare", type=int, default=0, metavar="K", help="group shop values seen < K times"
    )
    add_param_option(parser, "hidden_size=64 or learning_rate=0.014")
    args = parser.parse_args(argv)
    X, y = table(args.rows, args.seed, args.levels)
    if args.no_lookup:
        from deepctrl.tabular import network_training

        network_training.LOOKUP_WIDTH = args.levels + 1
    n_train = int(0.8 * len(X))
    if args.group_rare:
        counts = X["shop"][:n_train].value_counts()
        X["shop"] = X["shop"].where(
            X["shop"].isin(counts.index[counts >= args.group_rare]), "(rare)"
        )
    X_tr, X_te, y_tr, y_te = X[:n_train], X[n_train:], y[:n_train], y[n_train:]
    out: dict[str, Any] = {
        "rows": args.rows,
        "levels": args.levels,
        "lookup": not args.no_lookup,
        "group_rare": args.group_rare,
        "train_rows": n_train,
        "data_mb": X.memory_usage(deep=True).sum() / 2**20,
    }
    if not args.skip_lightgbm:
        import lightgbm

        cats = X.copy()
        for c in X.select_dtypes(exclude="number").columns:
            cats[c] = cats[c].astype("category")
        constraints = [1] + [0] * (X.shape[1] - 1)

        def fit_lightgbm() -> Any:
            return lightgbm.LGBMRegressor(
                monotone_constraints=constraints, verbose=-1, random_state=args.seed
            ).fit(cats[:n_train], y_tr)

        lgbm, wall, cpu = timed(fit_lightgbm)
        out["lightgbm"] = {
            "fit_seconds": wall,
            "cpu_seconds": cpu,
            "test_r2": float(r2_score(y_te, lgbm.predict(cats[n_train:]))),
        }
    params = dict(FORMER) if args.former else {}
    params.update(params_of(args))
    if args.warm_up:
        warm_start = rss_mb()
        dc.DeepCTRLRegressor(
            rules=[dc.Monotonic("x0", "increasing")], max_epochs=1, random_state=0
        ).fit(*table(20_000, args.seed + 1))
        out["warm_up_adds_mb"] = rss_mb() - warm_start
    out["rss_before_deepctrl_mb"] = rss_mb()
    out["recipe"] = "former" if args.former else "default"
    out["params"] = params
    # the estimator's module (and PyTorch) is imported before timing, as lightgbm is
    regressor, monotonic = dc.DeepCTRLRegressor, dc.Monotonic

    def fit_deepctrl() -> Any:
        return regressor(
            rules=[monotonic("x0", "increasing")], random_state=args.seed, **params
        ).fit(X_tr, y_tr)

    with PeakMemory() as fit_memory:
        est, wall, cpu = timed(fit_deepctrl)
    out["fit_peak_rss_mb"] = fit_memory.peak
    out["fit_adds_mb"] = fit_memory.peak - out["rss_before_deepctrl_mb"]
    out["train_data_mb"] = X_tr.memory_usage(deep=True).sum() / 2**20
    out["deepctrl"] = {
        "fit_seconds": wall,
        "cpu_seconds": cpu,
        "test_r2": float(r2_score(y_te, est.predict(X_te))),
        "alpha": est.alpha_,
        "epochs": est.n_epochs_,
        "verification": est.verification_ratio(X_te),
        "network": est.network_,
        "batch_size": est.batch_size_,
    }
    if "lightgbm" in out:
        out["ratio"] = wall / out["lightgbm"]["fit_seconds"]
        rounds = [(out["lightgbm"]["fit_seconds"], wall)]
        for _ in range(args.rounds - 1):  # both again, one after the other
            rounds.append((timed(fit_lightgbm)[1], timed(fit_deepctrl)[1]))
        out["rounds"] = [{"lightgbm_s": lg, "deepctrl_s": d, "ratio": d / lg} for lg, d in rounds]
        out["median_ratio"] = float(np.median([d / lg for lg, d in rounds]))
    out["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
