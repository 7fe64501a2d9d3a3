"""Pieces every paper reproduction shares: train a method over seeds, sweep alpha on the
validation and test sets, summarise over seeds, write results.json atomically.

results.json has this layout: ``methods[name]["test"][metric] = {"mean": [...], "std": [...]}``
over the experiment's alpha grid (a method without alpha repeats its value).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch.multiprocessing
from torch import Tensor, nn

from deepctrl.core.evaluation import Table, sweep
from deepctrl.core.method_state import SeedState
from deepctrl.core.methods import Method
from deepctrl.core.rules.base import Rule
from deepctrl.engine.progress import set_bar_position
from deepctrl.engine.training import FitResult, fit_methods


def alpha_grid(stop: float = 1.0, step: float = 0.1, start: float = 0.0) -> list[float]:
    """[start, start + step, ..., stop] rounded to 10 decimals.

    >>> alpha_grid(0.3)
    [0.0, 0.1, 0.2, 0.3]
    """
    n = round((stop - start) / step)
    return [round(start + i * step, 10) for i in range(n + 1)]


T = TypeVar("T")


def seed_range(seeds: int, quick: bool, start: int = 0) -> tuple[int, ...]:
    """The seeds of a run: ``seeds`` consecutive ones from ``start``, at most 2 when ``quick``.

    >>> seed_range(10, quick=True, start=10)
    (10, 11)
    """
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    return tuple(range(start, start + (min(seeds, 2) if quick else seeds)))


def default_workers(device: str = "cpu") -> int:
    """Processes for independent training jobs: one per usable CPU core on CPU; one on a
    GPU or under ``torchrun`` (there the ranks already share the work).

    The experiments' networks are tiny, so one single-threaded process per core trains
    about twice as fast on 2 cores as one process with 2 threads.
    """
    if device != "cpu" or int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _join_pool(counter: Any) -> None:
    with counter.get_lock():
        position = counter.value
        counter.value += 1
    set_bar_position(position)


def run_jobs(job: Callable[..., T], args: Sequence[tuple], workers: int) -> list[T]:
    """``[job(*a) for a in args]``, in ``workers`` processes when ``workers`` > 1.

    ``job`` must be a module-level function and ``args`` picklable; put the longest jobs
    first. Each job computes what it computes alone (same seeds, one thread), so the
    results do not depend on ``workers``; only the wall time does.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or len(args) <= 1:
        return [job(*a) for a in args]
    ctx = torch.multiprocessing.get_context("spawn")
    counter = ctx.Value("i", 0)
    with ProcessPoolExecutor(min(workers, len(args)), mp_context=ctx, initializer=_join_pool,
                             initargs=(counter,)) as pool:
        futures = [pool.submit(job, *a) for a in args]
        return [f.result() for f in futures]


def summarize(tables: Sequence[Table]) -> dict[str, dict[str, list[float]]]:
    """Mean and standard deviation over seeds of every metric column (``alpha`` excluded)."""
    out: dict[str, dict[str, list[float]]] = {}
    for key in tables[0]:
        if key == "alpha":
            continue
        values = np.array([t[key] for t in tables], dtype=float)
        out[key] = {"mean": np.nanmean(values, axis=0).tolist(),
                    "std": np.nanstd(values, axis=0).tolist()}
    return out


@dataclass
class MethodRun:
    """One method trained over all seeds, with per-seed sweep tables on val and test."""

    name: str
    fit: FitResult
    val: list[Table]
    test: list[Table]

    def entry(self) -> dict[str, Any]:
        """The results.json entry of this method."""
        return {
            "test": summarize(self.test),
            "val": summarize(self.val),
            "epochs": list(self.fit.epochs),
            "best_epochs": list(self.fit.best_epochs),
            "train_seconds": round(self.fit.seconds, 3),
            "seconds_per_epoch": round(self.fit.seconds / max(1, max(self.fit.epochs)), 4),
        }


def seed_parts(seeds: Sequence[int], parts: int) -> list[tuple[int, ...]]:
    """``seeds`` cut into at most ``parts`` contiguous, nearly equal, non-empty parts.

    >>> seed_parts(range(10), 3)
    [(0, 1, 2, 3), (4, 5, 6), (7, 8, 9)]
    """
    seeds = list(seeds)
    chunks = np.array_split(np.asarray(seeds), max(1, min(parts, len(seeds))))
    return [tuple(int(s) for s in chunk) for chunk in chunks]


def merge_runs(parts: Sequence[MethodRun]) -> MethodRun:
    """One method trained on disjoint seed sets (in jobs side by side) as one run: per-seed
    lists joined in order, the method's per-seed states joined, and the
    training time of the slowest part."""
    if len(parts) == 1:
        return parts[0]
    fits = [p.fit for p in parts]
    fit = dataclasses.replace(
        fits[0], state=SeedState.join([f.state for f in fits]),
        seconds=max(f.seconds for f in fits),
        models=[m for f in fits for m in f.models], seeds=[s for f in fits for s in f.seeds],
        history=[h for f in fits for h in f.history], epochs=[e for f in fits for e in f.epochs],
        best_epochs=[e for f in fits for e in f.best_epochs],
        val_loss=[v for f in fits for v in f.val_loss])
    return MethodRun(parts[0].name, fit, [t for p in parts for t in p.val],
                     [t for p in parts for t in p.test])


def run_method(name: str, model: nn.Module, rule: Rule, method: Method, *args: Any,
               **kwargs: Any) -> MethodRun:
    """:func:`run_methods` for one method: fit it for all seeds at once, then sweep alpha on
    val and test per seed."""
    return run_methods([name], model, rule, [method], *args, **kwargs)[0]


def run_methods(
    names: Sequence[str],
    model: nn.Module,
    rule: Rule,
    methods: Sequence[Method],
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
    with noise)."""
    results = fit_methods(model, rule, methods, train=train, val=val, seeds=seeds,
                          desc=" + ".join(names), **fit_kwargs)
    return [_swept(name, result, rule, val_eval or val, test, alphas, metrics)
            for name, result in zip(names, results, strict=True)]


def _swept(name: str, result: FitResult, rule: Rule, val: tuple[Tensor, Tensor],
           test: tuple[Tensor, Tensor], alphas: Sequence[float],
           metrics: Sequence[str]) -> MethodRun:
    """Per-seed alpha sweeps of a fit on ``val`` and ``test``."""
    val_tables = [sweep(m, rule, val[0], val[1], alphas, metrics) for m in result.models]
    test_tables = [sweep(m, rule, test[0], test[1], alphas, metrics) for m in result.models]
    return MethodRun(name, result, val_tables, test_tables)
