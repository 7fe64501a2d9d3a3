"""Pieces every paper reproduction shares: train a method over seeds, sweep alpha on the
validation and test sets, summarise over seeds, write results.json atomically.

results.json has this layout: ``methods[name]["test"][metric] = {"mean": [...], "std": [...]}``
over the experiment's alpha grid; a method that does not draw alphas repeats its value at
its ``eval_alpha`` (:func:`at_eval_alpha`). docs/paper/index.md describes the whole file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from torch import Tensor, nn

import deepctrl as dc
from deepctrl.engine.workers import single_thread

Table = dict[str, list[float]]
"""One alpha sweep (:func:`deepctrl.sweep`): ``alpha`` and one list per metric."""


def alpha_grid(stop: float = 1.0, step: float = 0.1, start: float = 0.0) -> list[float]:
    """[start, start + step, ..., stop] rounded to 10 decimals.

    >>> alpha_grid(0.3)
    [0.0, 0.1, 0.2, 0.3]
    """
    n = round((stop - start) / step)
    return [round(start + i * step, 10) for i in range(n + 1)]


def announce_written(label: str, folder: str | Path, results: Mapping[str, Any]) -> None:
    """Print where a reproduction wrote its report, results and figures (the folder in
    full, since a relative one depends on where the command ran) and how long it took.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp())
    >>> for name in ("report.md", "results.json", "a.png", "b.png"):
    ...     _ = (out / name).write_text("")
    >>> announce_written("demo", out, {"wall_seconds": 3.2})  # doctest: +ELLIPSIS
    demo: wrote report.md, results.json and 2 figures to /.../ in 3 s
    """
    folder = Path(folder).resolve()
    figures = len(list(folder.glob("*.png")))
    print(
        f"{label}: wrote report.md, results.json and {figures} figure{'s' * (figures != 1)} "
        f"to {folder}{'/' if str(folder) != '/' else ''} in {results['wall_seconds']:.0f} s"
    )


def save_models(runs: Mapping[str, MethodRun], folder: Path, experiment: str) -> Path:
    """Write every seed's trained network of ``runs`` (by name) to
    ``folder/models/<name>/seed<S>.safetensors`` with :func:`deepctrl.save`, the method, seed
    and experiment in its config; returns the models folder.

    A DeepCTRL network built from MLP parts loads without code (``dc.load(path)``); other
    networks load into one built by the experiment's code (``dc.load(path, model)``).
    """
    root = folder / "models"
    for name, run in runs.items():
        target = root / re.sub(r"[^\w.()=+-]+", "_", name)
        target.mkdir(parents=True, exist_ok=True)
        for seed, model in zip(run.fit.seeds, run.fit.models, strict=True):
            config = {"experiment": experiment, "method": name, "seed": seed}
            dc.save(model, target / f"seed{seed}.safetensors", config)
    return root


def check(name: str, claim: str, holds: bool, detail: str, **numbers: Any) -> dict[str, Any]:
    """One claim of the paper checked on a run, in the layout every experiment's
    results.json shares in its ``checks`` list: a short ``name``, the ``claim`` in words,
    whether it ``holds``, a ``detail`` with the numbers in words, and the numbers.

    >>> check("ratio_at_1", "ratio at alpha 1", True, "0.99 (required >= 0.95)", value=0.99)
    {'name': 'ratio_at_1', 'claim': 'ratio at alpha 1', 'holds': True, \
'detail': '0.99 (required >= 0.95)', 'value': 0.99}
    """
    return {"name": name, "claim": claim, "holds": bool(holds), "detail": detail, **numbers}


def seed_range(seeds: int, quick: bool, start: int = 0) -> tuple[int, ...]:
    """The seeds of a run: ``seeds`` consecutive ones from ``start``, at most 2 when ``quick``.

    >>> seed_range(10, quick=True, start=10)
    (10, 11)
    """
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    return tuple(range(start, start + (min(seeds, 2) if quick else seeds)))


def at_eval_alpha(entry: dict[str, Any], alphas: Sequence[float]) -> dict[str, Any]:
    """A results.json method ``entry`` as it is written: when its ``eval_alpha`` is not
    None (a method that does not draw alphas), every ``test`` and ``val`` curve over
    ``alphas`` becomes its value (mean and std) at ``eval_alpha``, repeated; other entries
    come back unchanged.

    >>> e = {"eval_alpha": 1.0, "test": {"mae": {"mean": [3.0, 2.0], "std": [0.3, 0.2]}}}
    >>> at_eval_alpha(e, [0.0, 1.0])["test"]
    {'mae': {'mean': [2.0, 2.0], 'std': [0.2, 0.2]}}

    Raises:
        ValueError: When ``eval_alpha`` is not one of ``alphas``.
    """
    own = entry.get("eval_alpha")
    if own is None:
        return entry
    if own not in alphas:
        raise ValueError(f"eval_alpha {own:g} is not on the alpha grid {list(alphas)}")
    i = list(alphas).index(own)
    held: dict[str, Any] = {
        split: {
            metric: {k: [values[i]] * len(values) for k, values in stats.items()}
            for metric, stats in entry[split].items()
        }
        for split in ("test", "val")
        if split in entry
    }
    return {**entry, **held}


def summarize(tables: Sequence[Table]) -> dict[str, dict[str, list[float]]]:
    """Mean and standard deviation over seeds of every metric column (``alpha`` excluded)."""
    out: dict[str, dict[str, list[float]]] = {}
    for key in tables[0]:
        if key == "alpha":
            continue
        values = np.array([t[key] for t in tables], dtype=float)
        out[key] = {
            "mean": np.nanmean(values, axis=0).tolist(),
            "std": np.nanstd(values, axis=0).tolist(),
        }
    return out


@dataclass
class MethodRun:
    """One method trained over all seeds, with per-seed sweep tables on val and test."""

    name: str
    fit: dc.FitResult
    val: list[Table]
    test: list[Table]

    @property
    def eval_alpha(self) -> float | None:
        """The alpha the method trains and is validated at; None when it draws alphas."""
        method = self.fit.method
        return None if method.draws_alpha else float(method.val_alpha)

    def entry(self) -> dict[str, Any]:
        """The results.json entry of this method. ``eval_alpha`` is the alpha at which a
        method that does not draw alphas is validated and reported (RuleOnly trains at
        alpha 1, the other baselines at 0), and its ``test`` and ``val`` curves repeat
        their value there (:func:`at_eval_alpha`); None for a method that draws them (its
        curve over alpha is the result)."""
        entry = {
            "eval_alpha": self.eval_alpha,
            "test": summarize(self.test),
            "val": summarize(self.val),
            "epochs": list(self.fit.epochs),
            "best_epochs": list(self.fit.best_epochs),
            "train_seconds": round(self.fit.seconds, 3),
        }
        return at_eval_alpha(entry, self.test[0]["alpha"])


def merge_runs(parts: Sequence[MethodRun]) -> MethodRun:
    """One method trained on disjoint seed sets (in jobs side by side) as one run: the fits
    joined (:meth:`FitResult.join`) and the per-seed sweep tables in order."""
    if len(parts) == 1:
        return parts[0]
    return MethodRun(
        parts[0].name,
        dc.FitResult.join([p.fit for p in parts]),
        [t for p in parts for t in p.val],
        [t for p in parts for t in p.test],
    )


def run_method(
    name: str,
    model: nn.Module,
    rule: dc.rules.Rule,
    method: dc.methods.Method,
    *args: Any,
    **kwargs: Any,
) -> MethodRun:
    """:func:`run_methods` for one method: fit it for all seeds at once, then sweep alpha on
    val and test per seed."""
    return run_methods([name], model, rule, [method], *args, **kwargs)[0]


def run_methods(
    names: Sequence[str],
    model: nn.Module,
    rule: dc.rules.Rule,
    methods: Sequence[dc.methods.Method],
    train: tuple[Tensor, Tensor],
    val: tuple[Tensor, Tensor],
    test: tuple[Tensor, Tensor],
    alphas: Sequence[float],
    metrics: Sequence[str],
    seeds: Sequence[int],
    val_eval: tuple[Tensor, Tensor] | None = None,
    **fit_kwargs: Any,
) -> list[MethodRun]:
    """Fit several methods of one network for all ``seeds`` as one stacked job
    (:func:`deepctrl.fit_methods`), then sweep alpha on val and test per seed; one run per
    method, in order. ``val_eval`` replaces ``val`` for the sweep (e.g. validation inputs
    with noise).

    The job runs on one thread: the paper's networks are too small for a second one to pay
    (``deepctrl reproduce retail --quick`` took 17 s on one thread and 18 s on two on a quiet
    2-core machine, 25 s against 101 s beside two busy processes), and the results are the
    same bit for bit."""
    with single_thread():
        results = dc.fit_methods(
            model,
            rule,
            methods,
            train=train,
            val=val,
            seeds=seeds,
            desc=" + ".join(names),
            **fit_kwargs,
        )
        return [
            _swept(name, result, rule, val_eval or val, test, alphas, metrics)
            for name, result in zip(names, results, strict=True)
        ]


def _swept(
    name: str,
    result: dc.FitResult,
    rule: dc.rules.Rule,
    val: tuple[Tensor, Tensor],
    test: tuple[Tensor, Tensor],
    alphas: Sequence[float],
    metrics: Sequence[str],
) -> MethodRun:
    """Per-seed alpha sweeps of a fit on ``val`` and ``test``."""
    val_tables = [dc.sweep(m, rule, val[0], val[1], alphas, metrics) for m in result.models]
    test_tables = [dc.sweep(m, rule, test[0], test[1], alphas, metrics) for m in result.models]
    return MethodRun(name, result, val_tables, test_tables)
