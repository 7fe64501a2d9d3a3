"""Reproduce the healthcare use case (paper Sec. 4.3, Fig. 6) and its perturbation-scale
study (Appendix A.2, Fig. 8): one classifier trained on a Source population, adapted to
Target populations by the rule strength alone.

Data: the Kaggle ``cardio_train.csv`` (``csv``) or, offline, the synthetic cohort of
:mod:`deepctrl.paper.datasets.cardio_synthetic` (70,000 patients, seed 0). The partition into
Source and Targets 1-3 is :func:`deepctrl.paper.datasets.cardio.prepare` (paper App. A.1).

Rule: the disease probability rises with systolic pressure. ap_hi is raised by
gamma |ap_hi| with gamma ~ U[0, u], u = 0.1, in raw mmHg before scaling; the authors
perturbed the standardized value instead (0 at the mean pressure, and a shift in the
wrong units). Verification: y_hat_p > y_hat.

Network (paper App. A): encoders 19-100-16, decision Linear(32, 1)-Sigmoid. TaskOnly is
the data path of that network, 19-100-16-1 with a sigmoid (the DeepCTRL network at
alpha = 0). BCE, batch 32, Adam 1e-3, early stopping on the validation BCE (alpha 0) every
epoch with patience 10, seeds 0, 1, ... (the authors' cardio seeds). DeepCTRL uses the
Beta(0.1, 0.1) prior with rho "auto" (the library default; the values it resolves to are
recorded per seed) and with the authors' fixed values 1.0, 0.1, 0.05 and 0.01. The
perturbation study fixes rho = 1.0: "auto" scales rho with the rule's reference loss, which
grows with u, and would partly undo the effect under study.

``best_alpha`` of a domain is the alpha of the lowest mean BCE of DeepCTRL (rho auto) on
it; ``adaptation`` chooses alpha per seed on a small labelled sample of a Target (200
patients) and scores it on the rest of that Target, as a user without the full labels would.
The top-level ``methods`` and ``selection`` of results.json are those of the main setting,
the Source domain (the methods are trained and validated there; the Targets only test them).

>>> sum(p.numel() for p in deepctrl_net().parameters())
7265
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import Tensor, nn

import deepctrl as dc
from deepctrl.io import reports
from deepctrl.paper.datasets.cardio import CardioTask, Domain, load_cardio_csv, prepare
from deepctrl.paper.datasets.cardio_synthetic import synthetic_cohort
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.common import MethodRun, alpha_grid

ALPHAS = alpha_grid(1.5, 0.1)
METRICS = ("bce", "accuracy", "auc")
MAIN = "DeepCTRL"
FIXED_RHOS = (1.0, 0.1, 0.05, 0.01)
QUICK_RHOS = (1.0,)
PERTURBATION_RHO = 1.0
PERTURBATION_US = (0.01, 0.05, 0.1, 0.2, 0.5)
RULE_U = 0.1
COHORT_SIZE = 70_000
SAMPLE_SIZE = 200


def deepctrl_net() -> dc.DeepCTRL:
    """Paper cardio network: encoders Linear(19,100)-ReLU-Linear(100,16), decision
    Linear(32,1)-Sigmoid."""
    return dc.DeepCTRL(
        dc.mlp(19, 100, 16), dc.mlp(19, 100, 16), dc.mlp(32, 1, out_activation="sigmoid")
    )


def task_net() -> nn.Module:
    """TaskOnly network: the data path, Linear(19,100)-ReLU-Linear(100,16)-Linear(16,1)-Sigmoid.

    >>> task_net()(torch.zeros(2, 19)).shape
    torch.Size([2, 1])
    """
    return nn.Sequential(dc.mlp(19, 100, 16), dc.mlp(16, 1, out_activation="sigmoid"))


@dataclass(frozen=True)
class Settings:
    """Training protocol; ``quick`` is a smoke run (at most 2 seeds, 6 epochs, patience 3)."""

    seeds: tuple[int, ...]
    quick: bool = False
    max_epochs: int = 1000
    patience: int = 10
    batch_size: int = 32
    lr: float = 1e-3

    @classmethod
    def make(cls, seeds: int, quick: bool) -> Settings:
        ids = common.seed_range(seeds, quick)
        return cls(ids, quick=True, max_epochs=6, patience=3) if quick else cls(ids)

    def fit_kwargs(self, device: str, progress: bool) -> dict[str, Any]:
        return {
            "task_loss": "bce",
            "batch_size": self.batch_size,
            "lr": self.lr,
            "max_epochs": self.max_epochs,
            "patience": self.patience,
            "val_every": 1,
            "device": device,
            "progress": progress,
        }

    def describe(self) -> dict[str, Any]:
        return {
            "quick": self.quick,
            "max_epochs": self.max_epochs,
            "patience": self.patience,
            "batch_size": self.batch_size,
            "lr": self.lr,
            "task_loss": "bce",
            "prior": "Beta(0.1, 0.1)",
            "validation": "BCE at alpha 0, every epoch",
        }


def load_task(csv: str | None, cohort_size: int = COHORT_SIZE) -> tuple[CardioTask, dict]:
    """The prepared task and a description of where its data came from."""
    if csv is not None:
        return prepare(load_cardio_csv(csv)), {"source": "csv", "csv": str(csv)}
    frame = synthetic_cohort(cohort_size, seed=0)
    return prepare(frame), {"source": "synthetic", "rows": cohort_size, "seed": 0}


def _tensors(d: Domain) -> tuple[Tensor, Tensor]:
    return torch.from_numpy(d.X), torch.from_numpy(d.y)


def train(
    task: CardioTask,
    name: str,
    model: nn.Module,
    method: dc.methods.Method,
    rule: dc.rules.Monotonic,
    s: Settings,
    device: str,
    progress: bool,
) -> MethodRun:
    """Fit on Source train (early stopping on Source val), sweep Source val and test."""
    return common.run_method(
        name,
        model,
        rule,
        method,
        _tensors(task.train),
        _tensors(task.val),
        _tensors(task.test),
        ALPHAS,
        METRICS,
        s.seeds,
        **s.fit_kwargs(device, progress),
    )


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
    X, y = _tensors(domain)
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


PRESETS = ("paper", "authors")
"""``paper``: the main DeepCTRL measures rho at the start (the library's "auto", the paper's
idea; its own ratio is near 0 for a perturbation rule), beside the authors' fixed values;
``authors``: the main DeepCTRL has the authors' main cardio value, rho = 1, beside their
other values. Both train in batches of 32, as the paper's appendix and the authors' code
do."""


def methods_to_train(
    quick: bool = False, preset: str = "paper"
) -> list[tuple[str, dc.methods.Method]]:
    """The main DeepCTRL (rho auto, or 1 for the ``authors`` preset) and the authors' other
    fixed rho of 1.0, 0.1, 0.05, 0.01 (quick: 1.0 only).

    >>> [name for name, _ in methods_to_train(quick=True)]
    ['DeepCTRL', 'DeepCTRL(rho=1)']
    >>> [name for name, _ in methods_to_train(preset="authors")]
    ['DeepCTRL', 'DeepCTRL(rho=0.1)', 'DeepCTRL(rho=0.05)', 'DeepCTRL(rho=0.01)']
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {', '.join(PRESETS)}, got {preset!r}")
    prior = dc.priors.Beta(0.1, 0.1)
    main: float | str = "auto" if preset == "paper" else 1.0
    out: list[tuple[str, dc.methods.Method]] = [(MAIN, dc.methods.DeepCTRL(prior, rho=main))]
    out += [
        (f"DeepCTRL(rho={r:g})", dc.methods.DeepCTRL(prior, rho=r))
        for r in (QUICK_RHOS if quick else FIXED_RHOS)
        if r != main
    ]
    return out


def _rho(run: MethodRun) -> list[float]:
    state = run.fit.state
    return [round(float(v), 6) for v in state["rho"]] if "rho" in state else []


def reproduce(
    seeds: int = 10,
    quick: bool = False,
    out: str = "results/cardio",
    device: str = "cpu",
    progress: bool = True,
    csv: str | None = None,
    cohort_size: int = COHORT_SIZE,
    save_models: bool = False,
    preset: str = "paper",
) -> dict[str, Any]:
    """Train on Source, evaluate on Source and Targets 1-3 over alpha 0..1.5; write
    ``out``/results.json, report.md and figures (and with ``save_models`` every trained
    network, :func:`deepctrl.paper.experiments.common.save_models`). ``preset`` is one of
    :data:`PRESETS`. Returns the results dict."""
    to_train = methods_to_train(quick, preset)  # a wrong preset fails before any work
    start = time.perf_counter()
    s = Settings.make(seeds, quick)
    task, data = load_task(csv, cohort_size)
    rule = task.rule(RULE_U)
    runs = {
        name: train(task, name, deepctrl_net(), method, rule, s, device, progress)
        for name, method in to_train
    }
    runs["TaskOnly"] = train(
        task, "TaskOnly", task_net(), dc.methods.TaskOnly(), rule, s, device, progress
    )
    domains: dict[str, Any] = {}
    for name, domain in task.domains().items():
        methods = {
            m: run.entry() if name == "Source" else domain_entry(run, domain, rule)
            for m, run in runs.items()
        }
        domains[name] = {
            **domain.counts(),
            "methods": methods,
            "best_alpha": best_alpha(methods[MAIN]),
            "best_alpha_by_method": {
                m: best_alpha(e) for m, e in methods.items() if m != "TaskOnly"
            },
        }
        if name != "Source":
            domains[name]["adaptation"] = adaptation(runs[MAIN], domain)
    results: dict[str, Any] = {
        "experiment": "cardio",
        "preset": preset,
        "data": data,
        "quick": s.quick,
        "seeds": list(s.seeds),
        "alphas": ALPHAS,
        "main_method": MAIN,
        "methods": domains["Source"]["methods"],
        "selection": main_selection(domains),
        "settings": s.describe(),
        "rule": {
            "feature": "ap_hi",
            "direction": "increasing",
            "u": RULE_U,
            "perturbation": "relative, raw mmHg",
            "config": rule.config(),
        },
        "rho": {m: _rho(r) for m, r in runs.items() if m != "TaskOnly"},
        "dataset": task.summary(),
        "domains": domains,
    }
    results["checks"] = checks(results)
    results["checks_by_method"] = {m: checks(results, m) for m in results["rho"]}
    results["wall_seconds"] = round(time.perf_counter() - start, 1)
    write_outputs(results, Path(out))
    if save_models:
        print(f"cardio: wrote the networks to {common.save_models(runs, Path(out), 'cardio')}")
    common.announce_written(f"cardio{' (quick)' if quick else ''}", out, results)
    return results


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


def write_outputs(results: dict[str, Any], out: Path) -> None:
    """results.json, the figures and report.md into ``out``."""
    from deepctrl.paper.experiments.cardio_report import report_markdown
    from deepctrl.paper.plots.cardio import domain_grid, domains_overlay

    out.mkdir(parents=True, exist_ok=True)
    reports.write_json(out / "results.json", results)
    domain_grid(results, "bce", out / "bce_vs_alpha.png")
    domain_grid(results, "accuracy", out / "accuracy_vs_alpha.png")
    domain_grid(results, "verification_ratio", out / "verification_vs_alpha.png")
    domains_overlay(results, out / "domains_bce.png")
    reports.write_text(out / "report.md", report_markdown(results))


def reproduce_perturbation(
    seeds: int = 10,
    quick: bool = False,
    out: str = "results/cardio-perturbation",
    device: str = "cpu",
    progress: bool = True,
    csv: str | None = None,
    cohort_size: int = COHORT_SIZE,
    us: Sequence[float] = PERTURBATION_US,
) -> dict[str, Any]:
    """Appendix A.2: DeepCTRL (rho 1.0) trained on Source with perturbation bound u for each
    u in ``us``; BCE, accuracy and verification ratio vs alpha on the Source test split."""
    from deepctrl.paper.experiments.cardio_report import perturbation_markdown
    from deepctrl.paper.plots.cardio import perturbation_figure

    start = time.perf_counter()
    s = Settings.make(seeds, quick)
    task, data = load_task(csv, cohort_size)
    methods: dict[str, Any] = {}
    rho: dict[str, list[float]] = {}
    for u in us:
        name = f"DeepCTRL(u={u:g})"
        method = dc.methods.DeepCTRL(dc.priors.Beta(0.1, 0.1), rho=PERTURBATION_RHO)
        run = train(task, name, deepctrl_net(), method, task.rule(u), s, device, progress)
        methods[name], rho[name] = run.entry(), _rho(run)
    methods["TaskOnly"] = train(
        task, "TaskOnly", task_net(), dc.methods.TaskOnly(), task.rule(RULE_U), s, device, progress
    ).entry()
    best = {m: best_alpha(e) for m, e in methods.items() if m != "TaskOnly"}
    results = {
        "experiment": "cardio-perturbation",
        "preset": "paper",
        "data": data,
        "quick": s.quick,
        "seeds": list(s.seeds),
        "alphas": ALPHAS,
        "perturbations": list(us),
        "settings": s.describe(),
        "rho": rho,
        "rho_setting": PERTURBATION_RHO,
        "dataset": task.summary(),
        "domain": "Source",
        "methods": methods,
        "selection": {"setting": "Source", "best_alpha_by_method": best},
        "best_alpha": best,
        "wall_seconds": round(time.perf_counter() - start, 1),
    }
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    reports.write_json(folder / "results.json", results)
    perturbation_figure(results, folder / "perturbation.png")
    reports.write_text(folder / "report.md", perturbation_markdown(results))
    common.announce_written(f"cardio-perturbation{' (quick)' if quick else ''}", folder, results)
    return results
