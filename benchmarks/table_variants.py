"""The default table fit on other generated tables, to check a recipe change beyond the
`table_speed.py` table.

* ``friedman``: scikit-learn's ``make_friedman1`` (12 features, noise 1), a regressor with
  the rule "increasing in f3" (the target rises with it by construction); test R2.
* ``median-classes``: the ``table_speed.py`` table with its target split at the median, a
  binary classifier with the rule "P(1) increasing in x0"; test AUC.
* ``three-classes``: the same table cut into thirds (low, mid, high), a 3-class classifier
  with the rule "P('high') increasing in x0"; test accuracy.

``--rows`` rows are fitted (default 40,000) and ``--test-rows`` more are held out (default
10,000), with ``random_state`` = the seed, which also draws the table:

    python benchmarks/table_variants.py --table friedman --seed 0 [--param hidden_size=48]
    python benchmarks/table_variants.py --table median-classes --seed 1
    python benchmarks/table_variants.py --table three-classes --rows 32000 --test-rows 8000

Prints JSON: the whole ``fit`` call's seconds (the estimator's module imported before the
clock starts), the test score and the default alpha.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np
import pandas as pd
from sklearn.datasets import make_friedman1
from sklearn.metrics import accuracy_score, r2_score, roc_auc_score

import deepctrl as dc
from estimator_params import add_param_option, params_of
from table_speed import table, timed


def _friedman(rows: int, seed: int, params: dict[str, int]) -> tuple[Any, ...]:
    X, y = make_friedman1(rows, n_features=12, noise=1.0, random_state=seed)
    est = dc.DeepCTRLRegressor(
        rules=[dc.Monotonic("f3", "increasing")], random_state=seed, **params
    )
    return est, pd.DataFrame(X, columns=[f"f{i}" for i in range(12)]), pd.Series(y), "r2"


def _classes(rows: int, seed: int, params: dict[str, int], three: bool) -> tuple[Any, ...]:
    X, y = table(rows, seed)
    if three:
        labels = np.where(
            y < y.quantile(1 / 3), "low", np.where(y < y.quantile(2 / 3), "mid", "high")
        )
        rule = dc.Monotonic("x0", "increasing", output="high")
        return (
            dc.DeepCTRLClassifier(rules=[rule], random_state=seed, **params),
            X,
            pd.Series(labels),
            "accuracy",
        )
    est = dc.DeepCTRLClassifier(
        rules=[dc.Monotonic("x0", "increasing")], random_state=seed, **params
    )
    return est, X, (y > y.median()).astype(int), "auc"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--table", required=True, choices=["friedman", "median-classes", "three-classes"]
    )
    parser.add_argument("--rows", type=int, default=40_000)
    parser.add_argument("--test-rows", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    add_param_option(parser, "hidden_size=48")
    args = parser.parse_args(argv)
    params = params_of(args)
    total = args.rows + args.test_rows
    if args.table == "friedman":
        est, X, y, metric = _friedman(total, args.seed, params)
    else:
        est, X, y, metric = _classes(total, args.seed, params, args.table == "three-classes")
    n = args.rows
    est, seconds, _ = timed(lambda: est.fit(X[:n], y[:n]))
    X_te, y_te = X[n:], y[n:]
    score = (
        r2_score(y_te, est.predict(X_te))
        if metric == "r2"
        else roc_auc_score(y_te, est.predict_proba(X_te)[:, 1])
        if metric == "auc"
        else accuracy_score(y_te, est.predict(X_te))
    )
    print(
        json.dumps(
            {
                "table": args.table,
                "rows": n,
                "seed": args.seed,
                "params": params,
                "fit_seconds": seconds,
                metric: float(score),
                "alpha": est.alpha_,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
