"""Quality of DeepCTRLRegressor / DeepCTRLClassifier with default settings, side by side
with HistGradientBoosting (monotonic_cst) and a linear model, on tables with a rule known
to hold, plus one table whose training labels contradict the rule.

    OMP_NUM_THREADS=1 python benchmarks/tabular_quality.py --repeats 3 > quality.json
    python benchmarks/tabular_quality.py --repeats 3 --markdown docs/results/tabular.md
    python benchmarks/tabular_quality.py --param validation=cross_fit > cross_fit.json

Prints JSON: per table and repeat (train/test split seed), the test error of each model,
DeepCTRL's error at its default alpha (the lowest validation error among alphas whose
validation verification reaches 0.99), at the lowest-validation-error alpha
(``alpha="min_error"``) and at the best alpha on the test set, and its verification
ratios. Nothing is downloaded: the tables are generated here or ship with scikit-learn.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from sklearn.compose import ColumnTransformer
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import HistGradientBoostingClassifier, HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression, RidgeCV
from sklearn.metrics import log_loss, mean_squared_error, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

import deepctrl as dc
from estimator_params import add_param_option, params_of

ALPHAS = [round(0.1 * i, 10) for i in range(11)]


@dataclass
class Table:
    """A benchmark table: features, target, the rule (column, direction) and its task."""

    name: str
    X: pd.DataFrame
    y: pd.Series
    task: str
    column: str
    direction: str
    perturbation: Any = None
    X_test: pd.DataFrame | None = None  # a fixed test set (the contradiction case)
    y_test: pd.Series | None = None


def demand(
    seed: int = 0, n: int = 2000, price_effect: float = -1.5
) -> tuple[pd.DataFrame, pd.Series]:
    """Sales falling with price, plus quality, season and a nonlinear income effect."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "price": rng.uniform(1, 10, n),
            "quality": rng.uniform(0, 1, n),
            "income": rng.normal(0, 1, n),
            "season": rng.choice(["winter", "spring", "summer", "autumn"], n),
        }
    )
    season = X["season"].map({"winter": -2.0, "spring": 0.0, "summer": 2.5, "autumn": 0.5})
    y = (
        20
        + price_effect * X["price"]
        + 4 * X["quality"] ** 2
        + season
        + 2 * np.sin(2 * X["income"])
        + rng.normal(0, 1.0, n)
    )
    return X, y.rename("demand")


def credit(seed: int = 1, n: int = 3000) -> tuple[pd.DataFrame, pd.Series]:
    """Loan defaults: more likely with a higher debt ratio."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "debt_ratio": rng.uniform(0.05, 1.0, n),
            "income": rng.lognormal(10.5, 0.5, n),
            "age": rng.uniform(20, 70, n),
            "employment": rng.choice(["salaried", "self-employed", "none"], n, p=[0.6, 0.3, 0.1]),
        }
    )
    emp = X["employment"].map({"salaried": 0.0, "self-employed": 0.5, "none": 1.5})
    logit = (
        -1.0
        + 3.5 * X["debt_ratio"] ** 2
        - 0.8 * np.log(X["income"] / 36000)
        + 0.001 * (X["age"] - 45) ** 2
        + emp
        - 1.0
    )
    y = rng.random(n) < 1 / (1 + np.exp(-logit))
    return X, pd.Series(y.astype(int), name="default")


def tables() -> list[Table]:
    diab = load_diabetes(as_frame=True)
    cancer = load_breast_cancer(as_frame=True)
    bmi_std = float(diab.data["bmi"].std())
    X_tr, y_tr = demand(seed=10, n=1500, price_effect=+1.0)
    X_te, y_te = demand(seed=11, n=1500, price_effect=-1.5)
    return [
        Table("demand (generated)", *demand(), "regression", "price", "decreasing"),
        Table(
            "diabetes (sklearn)",
            diab.data,
            diab.target.rename("progression"),
            "regression",
            "bmi",
            "increasing",
            dc.rules.Additive(0.1 * bmi_std),
        ),
        Table(
            "breast cancer (sklearn)",
            cancer.data,
            cancer.target.rename("benign"),
            "classification",
            "worst area",
            "decreasing",
        ),
        Table("credit (generated)", *credit(), "classification", "debt_ratio", "increasing"),
        Table(
            "contradiction (generated)",
            X_tr,
            y_tr,
            "regression",
            "price",
            "decreasing",
            X_test=X_te,
            y_test=y_te,
        ),
    ]


def _linear(table: Table) -> Any:
    cats = [
        c
        for c in table.X.columns
        if table.X[c].dtype == object or pd.api.types.is_string_dtype(table.X[c].dtype)
    ]
    nums = [c for c in table.X.columns if c not in cats]
    prep = ColumnTransformer(
        [("num", StandardScaler(), nums), ("cat", OneHotEncoder(handle_unknown="ignore"), cats)]
    )
    model = (
        RidgeCV(alphas=np.logspace(-3, 3, 13))
        if table.task == "regression"
        else LogisticRegression(max_iter=5000)
    )
    return make_pipeline(prep, model)


def _hgb(table: Table, seed: int) -> Any:
    sign = 1 if table.direction == "increasing" else -1
    kind = (
        HistGradientBoostingRegressor
        if table.task == "regression"
        else HistGradientBoostingClassifier
    )
    return kind(
        monotonic_cst={table.column: sign}, categorical_features="from_dtype", random_state=seed
    )


def _as_category(X: pd.DataFrame) -> pd.DataFrame:
    X = X.copy()
    for c in X.columns:
        if X[c].dtype == object or pd.api.types.is_string_dtype(X[c].dtype):
            X[c] = X[c].astype("category")
    return X


def _errors(task: str, y: np.ndarray, pred: np.ndarray) -> dict[str, float]:
    """Regression: mse; classification: log loss (bce), accuracy, auc. ``pred`` is the
    prediction or the probability of class 1."""
    if task == "regression":
        return {"mse": float(mean_squared_error(y, pred)), "mae": float(np.abs(y - pred).mean())}
    return {
        "bce": float(log_loss(y, np.clip(pred, 1e-7, 1 - 1e-7), labels=[0, 1])),
        "accuracy": float(((pred > 0.5) == y).mean()),
        "auc": float(roc_auc_score(y, pred)),
    }


def run_table(
    table: Table, seed: int, n_seeds: str, params: dict[str, Any] | None = None
) -> dict[str, Any]:
    if table.X_test is not None:
        X_tr, y_tr, X_te, y_te = table.X, table.y, table.X_test, table.y_test
    else:
        strat = table.y if table.task == "classification" else None
        X_tr, X_te, y_tr, y_te = train_test_split(
            table.X, table.y, test_size=0.25, random_state=seed, stratify=strat
        )
    metric = "mse" if table.task == "regression" else "bce"
    out: dict[str, Any] = {"seed": seed, "n_train": len(X_tr), "n_test": len(X_te)}

    def predict(model: Any, X: pd.DataFrame) -> np.ndarray:
        return model.predict(X) if table.task == "regression" else model.predict_proba(X)[:, 1]

    for name, make in {
        "linear": lambda: _linear(table),
        "hgb_monotonic": lambda: _hgb(table, seed),
    }.items():
        start = time.perf_counter()
        prep: Callable[[pd.DataFrame], pd.DataFrame] = (
            _as_category if name == "hgb_monotonic" else (lambda X: X)
        )
        model = make().fit(prep(X_tr), y_tr)
        out[name] = {
            **_errors(table.task, y_te.to_numpy(), predict(model, prep(X_te))),
            "seconds": time.perf_counter() - start,
        }

    kwargs = {} if table.perturbation is None else {"perturbation": table.perturbation}
    rule = dc.Monotonic(table.column, table.direction, **kwargs)
    kind = dc.DeepCTRLRegressor if table.task == "regression" else dc.DeepCTRLClassifier
    start = time.perf_counter()
    est = kind(
        rules=[rule],
        random_state=seed,
        n_seeds=n_seeds if n_seeds == "auto" else int(n_seeds),
        **(params or {}),
    ).fit(X_tr, y_tr)
    seconds = time.perf_counter() - start
    sweep = est.sweep(X_te, y_te, ALPHAS)
    chosen, lowest = est.selected_alpha_, est.min_error_alpha_
    at_chosen, at_lowest = (row for _, row in est.sweep(X_te, y_te, [chosen, lowest]).iterrows())
    best = sweep.loc[sweep[metric].idxmin()]
    out["deepctrl"] = {
        "selected_alpha": chosen,
        "at_selected": {k: float(v) for k, v in at_chosen.items()},
        "min_error_alpha": lowest,
        "at_min_error": {k: float(v) for k, v in at_lowest.items()},
        "best_alpha_on_test": {k: float(v) for k, v in best.items()},
        "sweep": sweep.to_dict(orient="list"),
        "epochs": est.n_epochs_,
        "seconds": seconds,
        "rho": est.rho_,
    }
    return out


def _mean(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for run in runs:
        v: Any = run
        for key in path:
            v = v[key]
        values.append(float(v))
    return float(np.mean(values))


def summary(name: str, task: str, runs: list[dict[str, Any]]) -> dict[str, Any]:
    metric = "mse" if task == "regression" else "bce"
    lin, hgb = _mean(runs, "linear", metric), _mean(runs, "hgb_monotonic", metric)
    sel = _mean(runs, "deepctrl", "at_selected", metric)
    sel_ratio = _mean(runs, "deepctrl", "at_selected", "verification_ratio")
    low = _mean(runs, "deepctrl", "at_min_error", metric)
    best = _mean(runs, "deepctrl", "best_alpha_on_test", metric)
    sweeps = [r["deepctrl"]["sweep"] for r in runs]
    ratio = np.mean([s["verification_ratio"] for s in sweeps], axis=0)
    err = np.mean([s[metric] for s in sweeps], axis=0)
    return {
        "table": name,
        "metric": metric,
        "linear": lin,
        "hgb_monotonic": hgb,
        "deepctrl_selected_alpha": sel,
        "verification_selected": sel_ratio,
        "deepctrl_min_error_alpha": low,
        "deepctrl_best_alpha": best,
        "deepctrl_alpha0": float(err[0]),
        "deepctrl_alpha1": float(err[-1]),
        "verification_alpha0": float(ratio[0]),
        "verification_alpha1": float(ratio[-1]),
        "selected_alphas": [r["deepctrl"]["selected_alpha"] for r in runs],
        "min_error_alphas": [r["deepctrl"]["min_error_alpha"] for r in runs],
        "within_5pct_selected": bool(sel <= 1.05 * min(lin, hgb)),
        "within_5pct_best": bool(best <= 1.05 * min(lin, hgb)),
    }


def markdown(summaries: list[dict[str, Any]], repeats: int, n_seeds: str) -> str:
    head = (
        "| table | metric | linear | HGB monotonic | DeepCTRL default alpha "
        "(verification) | DeepCTRL min_error alpha | DeepCTRL best alpha (test) | alpha 0 | "
        "alpha 1 | verification alpha 0 | verification alpha 1 | within 5 % (default / best) |"
    )
    lines = [head, "|" + "---|" * 12]
    for s in summaries:
        lines.append(
            f"| {s['table']} | {s['metric']} | {s['linear']:.4g} | {s['hgb_monotonic']:.4g} | "
            f"{s['deepctrl_selected_alpha']:.4g} ({s['verification_selected']:.3f}) | "
            f"{s['deepctrl_min_error_alpha']:.4g} | {s['deepctrl_best_alpha']:.4g} | "
            f"{s['deepctrl_alpha0']:.4g} | {s['deepctrl_alpha1']:.4g} | "
            f"{s['verification_alpha0']:.3f} | {s['verification_alpha1']:.3f} | "
            f"{'yes' if s['within_5pct_selected'] else 'no'} / "
            f"{'yes' if s['within_5pct_best'] else 'no'} |"
        )
    lines.append("")
    lines.append(
        f"Means over {repeats} train/test splits; DeepCTRL with default settings "
        f"(n_seeds={n_seeds})."
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="train/test splits per table")
    parser.add_argument("--n-seeds", default="auto", help="DeepCTRL n_seeds (default: its own)")
    parser.add_argument("--only", default=None, help="run only tables whose name has this")
    parser.add_argument("--markdown", default=None, help="also print a markdown table here")
    add_param_option(parser, "validation=cross_fit")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    results, summaries = [], []
    for table in tables():
        if args.only and args.only not in table.name:
            continue
        runs = []
        for seed in range(args.repeats):
            runs.append(run_table(table, seed, args.n_seeds, params_of(args)))
            print(f"{table.name} seed {seed}: done", file=sys.stderr)
        results.append(
            {
                "table": table.name,
                "task": table.task,
                "rule": f"{table.column} {table.direction}",
                "runs": runs,
            }
        )
        summaries.append(summary(table.name, table.task, runs))
    print(
        json.dumps({"params": params_of(args), "summaries": summaries, "tables": results}, indent=1)
    )
    if args.markdown:
        with open(args.markdown, "w", encoding="utf-8") as f:
            f.write(markdown(summaries, args.repeats, args.n_seeds) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
