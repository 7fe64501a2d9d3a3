"""How the cardio reproduction scores its trained methods on each population: a Target's
results.json entry, the best alpha, alpha chosen on a small labelled sample of a Target, the
alphas of the main setting, and the paper's claims checked."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch.nn.functional as F
from torch import Tensor

import deepctrl as dc
from deepctrl.paper.datasets.cardio import Domain
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.cardio_setup import ALPHAS, MAIN, METRICS, domain_tensors
from deepctrl.paper.experiments.common import MethodRun

SAMPLE_SIZE = 200


def domain_entry(run: MethodRun, domain: Domain, rule: dc.rules.Monotonic) -> dict[str, Any]:
    """results.json entry of a trained method evaluated on a whole Target: its Source entry
    with ``test`` swept on the Target and no ``val`` (a Target has no validation split;
    every method was validated on Source)."""
    tables = [dc.sweep(m, rule, domain.X, domain.y, ALPHAS, METRICS) for m in run.fit.models]
    entry = run.entry()
    target = {
        "eval_alpha": entry["eval_alpha"],
        "test": common.summarize(tables),
        "epochs": entry["epochs"],
        "best_epochs": entry["best_epochs"],
        "train_seconds": entry["train_seconds"],
    }
    return common.at_eval_alpha(target, ALPHAS)


def best_alpha(entry: dict[str, Any], metric: str = "bce", split: str = "test") -> float:
    """The alpha of the lowest mean ``metric`` (highest for accuracy and auc).

    >>> best_alpha({"test": {"bce": {"mean": [0.7, 0.6, 0.65] + [1.0] * 13}}})
    0.1
    """
    mean = np.asarray(entry[split][metric]["mean"], dtype=float)
    return ALPHAS[int(np.argmax(mean) if metric in ("accuracy", "auc") else np.argmin(mean))]


def _bce(p: Tensor, y: Tensor) -> float:
    """Mean binary cross entropy of probabilities ``p`` (the ``bce`` of :func:`deepctrl.sweep`)."""
    return float(F.binary_cross_entropy(p, y))


def sample_adaptation(y_hat: Tensor, y: Tensor, sample: np.ndarray) -> dict[str, Any]:
    """Choose alpha by BCE on the rows ``sample`` and score every alpha on the other rows.

    ``y_hat`` is (n_alphas, n, 1) over :data:`ALPHAS`, ``y`` (n, 1).

    >>> import torch
    >>> p = torch.tensor([[[0.5], [0.5], [0.5]], [[0.9], [0.1], [0.9]]] + [[[0.5]] * 3] * 14)
    >>> out = sample_adaptation(p, torch.tensor([[1.0], [0.0], [1.0]]), np.array([0]))
    >>> out["chosen_alpha"], round(out["bce_rest"][1], 4)
    (0.1, 0.1054)
    """
    rest = np.setdiff1d(np.arange(y.shape[0]), sample)
    on_sample = [_bce(y_hat[i, sample], y[sample]) for i in range(len(ALPHAS))]
    chosen = int(np.argmin(on_sample))
    return {
        "chosen_alpha": ALPHAS[chosen],
        "bce_rest": [_bce(y_hat[i, rest], y[rest]) for i in range(len(ALPHAS))],
    }


def adaptation(run: MethodRun, domain: Domain, sample_size: int = SAMPLE_SIZE) -> dict[str, Any]:
    """Per seed: a random labelled sample of the Target picks alpha; BCE on the remainder."""
    k = min(sample_size, len(domain.y) // 4)
    X, y = domain_tensors(domain)
    chosen, curves = [], []
    for seed, model in zip(run.fit.seeds, run.fit.models, strict=True):
        rows = np.random.default_rng(10_000 + seed).choice(len(y), k, replace=False)
        y_hat, _ = dc.predict_sweep(model, None, X, ALPHAS)
        one = sample_adaptation(y_hat.cpu(), y, rows)
        chosen.append(one["chosen_alpha"])
        curves.append(one["bce_rest"])
    rest = np.array(curves)
    at_chosen = rest[np.arange(len(chosen)), [ALPHAS.index(a) for a in chosen]]
    mean_curve = rest.mean(axis=0)
    return {
        "sample_size": k,
        "chosen_alpha": chosen,
        "bce_rest_at_alpha_0": float(rest[:, 0].mean()),
        "bce_rest_at_chosen": float(at_chosen.mean()),
        "bce_rest_at_chosen_std": float(at_chosen.std()),
        "best_fixed_alpha": ALPHAS[int(mean_curve.argmin())],
        "bce_rest_at_best_fixed": float(mean_curve.min()),
    }


def main_selection(domains: dict[str, Any]) -> dict[str, Any]:
    """The top-level ``selection`` of results.json: the alphas chosen in the main setting,
    the Source domain the methods were trained and validated on (its ``best_alpha`` and
    ``best_alpha_by_method``, lowest mean test BCE)."""
    source = domains["Source"]
    return {
        "setting": "Source",
        "best_alpha": source["best_alpha"],
        "best_alpha_by_method": source["best_alpha_by_method"],
    }


def _curve(results: dict[str, Any], domain: str, method: str = MAIN) -> list[float]:
    return results["domains"][domain]["methods"][method]["test"]["bce"]["mean"]


def checks(results: dict[str, Any], method: str = MAIN) -> list[dict[str, Any]]:
    """The three numeric claims (on mean test BCE over seeds), plus whether Target 1
    keeps improving beyond alpha = 1."""
    one = ALPHAS.index(1.0)
    source, t1 = _curve(results, "Source", method), _curve(results, "Target 1", method)
    task_only = _curve(results, "Source", "TaskOnly")[0]
    beyond = min(t1[one + 1 :])
    best1 = results["domains"]["Target 1"]["best_alpha_by_method"][method]
    best3 = results["domains"]["Target 3"]["best_alpha_by_method"][method]
    return [
        common.check(
            "source_task_only_no_worse",
            f"On Source, TaskOnly's BCE is no worse than {method}'s at alpha = 1",
            task_only <= source[one],
            f"TaskOnly {task_only:.4f} vs {method} at alpha 1 {source[one]:.4f}",
        ),
        common.check(
            "target1_falls_to_alpha_1",
            f"On Target 1, {method}'s BCE falls from alpha 0 to alpha 1",
            t1[one] < t1[0],
            f"alpha 0 {t1[0]:.4f} -> alpha 1 {t1[one]:.4f}",
        ),
        common.check(
            "target1_falls_beyond_1",
            "On Target 1 the BCE keeps falling somewhat beyond alpha = 1",
            beyond < t1[one],
            f"alpha 1 {t1[one]:.4f}, lowest beyond 1 {beyond:.4f} "
            f"(at alpha {ALPHAS[one + 1 + int(np.argmin(t1[one + 1 :]))]:g})",
        ),
        common.check(
            "best_alpha_target1_ge_target3",
            "The best alpha of Target 1 is at least that of Target 3",
            best1 >= best3,
            f"Target 1 {best1:g}, Target 3 {best3:g}",
        ),
    ]
