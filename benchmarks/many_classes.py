"""A classifier of many classes: the default network against one of another latent width.

A generated table (10 normal columns; the class drawn from a softmax of a random linear map
of them plus ``0.8 |x0|``; 80 % to train, 20 % to test), fitted by the default
``DeepCTRLClassifier(rules=[Monotonic("x0", "increasing", output=7)])`` and, in the same
run, by multinomial logistic regression (the true model, but for the ``|x0|`` term).

    python benchmarks/many_classes.py --classes 100 --seed 0
    python benchmarks/many_classes.py --classes 100 --seed 0 --param latent_size=8
    python benchmarks/many_classes.py --classes 100 --predict-rows 1000000

Prints JSON: the network's sizes, test accuracy and log loss of both models, fit seconds;
with ``--predict-rows N``, the seconds and the peak memory of ``predict_proba`` on N new
rows of the same table (its result alone is N x classes float64 numbers).
"""

from __future__ import annotations

import argparse
import json
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, log_loss

import deepctrl as dc
from estimator_params import add_param_option, params_of
from table_speed import PeakMemory, rss_mb


def table(rows: int, classes: int, seed: int) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({f"x{i}": rng.normal(size=rows) for i in range(10)})
    logits = X.to_numpy() @ rng.normal(0, 1.0, (10, classes)) + 0.8 * np.abs(X[["x0"]].to_numpy())
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return X, np.array([rng.choice(classes, p=row) for row in p])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50_000)
    parser.add_argument("--classes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--predict-rows", type=int, default=0, help="also time predict_proba on N new rows"
    )
    add_param_option(parser, "latent_size=8")
    args = parser.parse_args()
    X, y = table(args.rows, args.classes, args.seed)
    cut = int(0.8 * args.rows)
    rule = [dc.Monotonic("x0", "increasing", output=7)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        start = time.perf_counter()
        est = dc.DeepCTRLClassifier(rules=rule, random_state=args.seed, **params_of(args))
        est.fit(X[:cut], y[:cut])
        seconds = time.perf_counter() - start
        linear = LogisticRegression(max_iter=2000).fit(X[:cut], y[:cut])
    out = {
        "rows": args.rows,
        "classes": args.classes,
        "seed": args.seed,
        "params": params_of(args),
        "network": {k: est.network_[k] for k in ("hidden", "latent")},
        "fit_seconds": round(seconds, 1),
        "deepctrl": {
            "accuracy": accuracy_score(y[cut:], est.predict(X[cut:])),
            "log_loss": log_loss(y[cut:], est.predict_proba(X[cut:]), labels=est.classes_),
        },
        "logistic_regression": {
            "accuracy": accuracy_score(y[cut:], linear.predict(X[cut:])),
            "log_loss": log_loss(y[cut:], linear.predict_proba(X[cut:])),
        },
    }
    if args.predict_rows:
        rng = np.random.default_rng(args.seed + 1)  # new rows; their classes are not needed
        new = pd.DataFrame({f"x{i}": rng.normal(size=args.predict_rows) for i in range(10)})
        before = rss_mb()
        with PeakMemory() as peak:
            start = time.perf_counter()
            proba = est.predict_proba(new)
            out["predict"] = {
                "rows": args.predict_rows,
                "seconds": round(time.perf_counter() - start, 2),
                "result_mb": round(proba.nbytes / 2**20),
            }
        out["predict"]["peak_adds_mb"] = round(peak.peak - before)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
