"""How `deepctrl.fit` runs: the arguments checked, one copy of the model per seed, the data
on the device, and the trainer's steps (check, calibrate, run); or the seeds in shares in
worker processes (`workers=N`), joined.
"""

from __future__ import annotations

import copy
import math
import numbers
import os
import pickle
import sys
import time
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.utils.data import Dataset, IterableDataset

from deepctrl.core.calls import warn_if_alpha_unused
from deepctrl.core.checks import module
from deepctrl.core.data import as_data, check_materialized, resolve_device
from deepctrl.core.method_checks import check_method
from deepctrl.core.method_stack import MethodStack
from deepctrl.core.methods import Method
from deepctrl.core.rules.base import Rule, checked_rule
from deepctrl.core.seeding import derive_seed
from deepctrl.core.sources import is_loader
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine.callbacks import as_callbacks
from deepctrl.engine.folds import SeedFolds
from deepctrl.engine.options import LR_SCHEDULES, SWITCHES, Options
from deepctrl.engine.result import FitResult
from deepctrl.engine.trainer import Trainer
from deepctrl.engine.workers import run_jobs, seed_parts, single_thread


def init_models(model: nn.Module, seeds: Sequence[int], reinit: bool = True) -> list[nn.Module]:
    """One copy of `model` per seed, re-initialised from that seed: every submodule's
    `reset_parameters` (`_reset_parameters` for attention layers) runs under a
    generator seeded from the seed.

    Args:
        model: The module to copy; it is left as it is.
        seeds: One copy per seed.
        reinit: Re-initialise the copies; False returns plain copies of `model`'s weights.
            Parameters with ``requires_grad=False`` keep `model`'s values either way.

    Returns:
        The copies, in the order of `seeds`.
    """
    frozen = {n: p for n, p in model.named_parameters() if not p.requires_grad}
    if reinit and seeds:
        kept = [name for name in not_reset(model) if name not in frozen]
        if kept:
            warnings.warn(
                f"reinit: parameters {', '.join(kept[:5])}{' ...' if len(kept) > 5 else ''} "
                "are in modules without reset_parameters, so "
                "every seed starts from the model's values of them; give those modules a "
                "reset_parameters, or pass reinit=False",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
    out = []
    for seed in seeds:
        m = copy.deepcopy(model)
        if reinit:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(derive_seed(seed, "init"))
                for module in m.modules():
                    reset = _reset_of(module)
                    if reset is not None:
                        reset()
            _keep_frozen(m, frozen)
        out.append(m)
    return out


def _keep_frozen(copy_: nn.Module, frozen: Mapping[str, Tensor]) -> None:
    """Put the values of `frozen` parameters (``requires_grad=False`` in the model given)
    back into a re-initialised copy: fit neither trains nor re-draws them."""
    if not frozen:
        return
    params = dict(copy_.named_parameters())
    with torch.no_grad():
        for name, value in frozen.items():
            params[name].copy_(value)


def _reset_of(module: nn.Module) -> Any:
    """The module's `reset_parameters` (`_reset_parameters` for attention layers), if any."""
    reset = getattr(module, "reset_parameters", None) or getattr(module, "_reset_parameters", None)
    return reset if callable(reset) else None


def not_reset(model: nn.Module) -> list[str]:
    """The parameters that re-initialising `model` leaves as they are: those of modules
    without a `reset_parameters`.

    Examples:
        >>> class Scaled(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.scale, self.inner = nn.Parameter(torch.ones(2)), nn.Linear(2, 1)
        >>> not_reset(Scaled())
        ['scale']
    """
    return [
        f"{prefix}.{name}" if prefix else name
        for prefix, module in model.named_modules()
        if _reset_of(module) is None
        for name, _ in module.named_parameters(recurse=False)
    ]


def _data(
    data: Any, name: str, device: torch.device, dtype: torch.dtype
) -> tuple[Any, Tensor | None]:
    """Tensors (X, y) checked and moved to the device, and their per-row weights (None
    without); a Dataset or DataLoader as it is (no weights)."""
    if is_loader(data):
        _refuse_weighted_samples(data, name)
        return data, None
    X, y, w = as_data(data, name, device, dtype)
    return (X, y), w


def _refuse_weighted_samples(data: Any, name: str) -> None:
    """A clear error for a map-style Dataset whose samples are (x, y, w) triples."""
    if not isinstance(data, Dataset) or isinstance(data, IterableDataset):
        return
    try:
        first = data[0]
    except Exception:  # an empty or unusual dataset: reading it for training will tell
        return
    if isinstance(first, tuple | list) and len(first) == 3:
        raise ValueError(
            f"{name}: the Dataset yields (x, y, w) triples, but sample weights "
            f"are supported for tensors only: pass {name}=(X, y, w)"
        )


def check_fit(
    rule: Rule | None,
    methods: list[Method],
    train: Any,
    seeds: list[int],
    model: nn.Module,
    o: Options,
) -> None:
    if train is None:
        raise ValueError("fit needs train=(X, y), (X, y, w), a Dataset or a DataLoader")
    for method in methods:
        check_method(method, rule, "fit")
    if rule is not None:
        checked_rule(rule)
    for method in methods:
        warn_if_alpha_unused(model, method)
    for name, low in (("batch_size", 1), ("patience", 1), ("val_every", 1), ("max_epochs", 0)):
        value = getattr(o, name)
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    for name in SWITCHES:
        value = getattr(o, name)
        if not isinstance(value, bool | np.bool_):  # "no" or 0 read from a config, say
            raise ValueError(f"{name} must be True or False, got {value!r}")
    if o.chunk_batches < 1:
        raise ValueError(f"chunk_batches must be >= 1, got {o.chunk_batches!r}")
    if not math.isfinite(o.lr) or o.lr <= 0:
        raise ValueError(f"lr must be a finite number > 0, got {o.lr!r}")
    if o.lr_schedule not in LR_SCHEDULES:
        raise ValueError(f"lr_schedule must be one of {LR_SCHEDULES}, got {o.lr_schedule!r}")
    if not o.input_noise >= 0:  # NaN too
        raise ValueError(f"input_noise must be >= 0, got {o.input_noise}")
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list of distinct integers, got {seeds}")
    if next(model.parameters(), None) is None:
        raise ValueError("the model has no parameters to train")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError(
            "every parameter of the model has requires_grad=False, so there is nothing to "
            "train: unfreeze the parameters fit should train"
        )
    check_materialized(model)
    dtypes = sorted({str(p.dtype) for p in model.parameters() if p.is_floating_point()})
    if len(dtypes) > 1:  # the seeds' stack would run it in one, and the model itself fail
        raise ValueError(
            f"the model's parameters are of {len(dtypes)} dtypes ({', '.join(dtypes)}); fit "
            "trains a model of one: move it whole, model.to(torch.float64) say"
        )


def _checked_seeds(seeds: Any) -> list[int]:
    """``seeds`` as a list of integers (numpy integers too); anything else is an error.

    >>> _checked_seeds(range(3))
    [0, 1, 2]
    """
    if isinstance(seeds, str | bytes) or not isinstance(seeds, Sequence | np.ndarray):
        raise ValueError(f"seeds must be a list of distinct integers, got {seeds!r}")
    if any(isinstance(s, bool) or not isinstance(s, numbers.Integral) for s in seeds):
        raise ValueError(f"seeds must be a list of distinct integers, got {list(seeds)!r}")
    if any(s < 0 for s in seeds):
        raise ValueError(f"seeds must be integers >= 0, got {[int(s) for s in seeds]}")
    return [int(s) for s in seeds]


def fit_in_workers(
    model: nn.Module,
    rule: Rule | None,
    methods: list[Method],
    train: Any,
    val: Any,
    seeds: Sequence[int],
    o: Options,
    desc: str | None,
    workers: int,
) -> list[FitResult]:
    """`run_fit` over `workers` shares of the seeds, side by side, joined."""
    module(model, "model")
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    seeds = _checked_seeds(seeds)
    parts = seed_parts(seeds, workers)
    if len(parts) == 1:
        return run_fit(model, rule, methods, train, val, seeds, o, desc)
    check_fit(rule, methods, train, seeds, model, o)
    if o.callbacks:
        raise ValueError(
            "callbacks need workers=1: with several workers they would run in other processes"
        )
    if int(os.environ.get("WORLD_SIZE", "1")) > 1:
        raise ValueError("workers > 1 under torchrun: the ranks already share the work")
    script = getattr(sys.modules["__main__"], "__file__", None)
    if script is not None and not os.path.isfile(script):
        raise ValueError(
            f"workers={workers} starts processes that import your script again, and "
            f"{script} is not a file (a script read from standard input?): save it to a "
            "file, or use workers=1"
        )
    try:
        pickle.dumps((model, rule, methods, o, *(d for d in (train, val) if is_loader(d))))
    except Exception as exc:
        raise ValueError(
            f"workers={workers} sends the model, rule, method and data to other "
            f"processes, so they must be picklable (module-level functions, not "
            f"lambdas): {exc}"
        ) from None
    jobs = [
        (model, rule, methods, train, val, part, _share_folds(o, seeds, part), desc)
        for part in parts
    ]
    shares = run_jobs(_share, jobs, workers)
    return [FitResult.join([share[i] for share in shares]) for i in range(len(methods))]


def _share_folds(o: Options, seeds: Sequence[int], part: Sequence[int]) -> Options:
    """The options of one worker: with folds, those of its seeds."""
    if o.folds is None:
        return o
    _check_fold_count(o.folds, seeds)
    where = {int(s): i for i, s in enumerate(seeds)}
    return replace(o, folds=tuple(o.folds[where[s]] for s in part))


def _check_fold_count(folds: Sequence[Any], seeds: Sequence[int]) -> None:
    if len(folds) != len(seeds):
        raise ValueError(f"folds needs one fold per seed: {len(folds)} folds, {len(seeds)} seeds")


def _seed_folds(
    o: Options, train: Any, val: Any, seeds: list[int], copies: int, device: torch.device
) -> SeedFolds | None:
    """The seeds' own rows of the training tensors, or None without folds."""
    if o.folds is None:
        return None
    if val is not None:
        raise ValueError("folds take their validation rows from train: pass val=None")
    if is_loader(train):
        raise ValueError("folds need train as tensors, not a Dataset or DataLoader")
    _check_fold_count(o.folds, seeds)
    return SeedFolds.of(o.folds, train[1].shape[0], copies, device)


def _share(
    model: nn.Module,
    rule: Rule | None,
    methods: list[Method],
    train: Any,
    val: Any,
    seeds: Sequence[int],
    o: Options,
    desc: str | None,
) -> list[FitResult]:
    """One worker's share of the seeds, on one thread."""
    with single_thread():
        return run_fit(model, rule, methods, train, val, seeds, o, desc)


def run_fit(
    model: nn.Module,
    rule: Rule | None,
    methods: list[Method],
    train: Any,
    val: Any,
    seeds: Sequence[int],
    o: Options,
    desc: str | None,
) -> list[FitResult]:
    """Train `methods` x `seeds` copies as one stack; one result per method (`desc` None
    labels the progress bar with the methods' names)."""
    # a with block adds no frame: warnings still name the caller's line
    with torch.inference_mode(False), torch.enable_grad():  # inside a caller's no_grad
        seeds = list(seeds)
        check_fit(rule, methods, train, seeds, model, o)
        desc = desc or " + ".join(m.name for m in methods)
        callbacks = as_callbacks(o.callbacks)
        device = resolve_device(o.device)
        dtype = next(model.parameters()).dtype
        copies = seeds * len(methods)
        models = [m.to(device) for m in init_models(model, copies, o.reinit)]
        method = methods[0] if len(methods) == 1 else MethodStack(methods, len(seeds))
        train_data, train_w = _data(train, "train", device, dtype)
        val_data, val_w = _data(val, "val", device, dtype) if val is not None else (None, None)
        folds = _seed_folds(o, train_data, val, seeds, len(methods), device)
        trainer = Trainer(
            models,
            rule,
            method,
            train_data,
            val_data,
            o,
            copy_seeds=copies,
            device=device,
            train_weights=train_w,
            val_weights=val_w,
            folds=folds,
        )
        trainer.check()
        trainer.calibrate()
        start = time.perf_counter()
        history, epochs, best_epochs, best = trainer.run(desc, callbacks)
        seconds = time.perf_counter() - start
        path = trainer.stack.path or "lowered"
        k = len(seeds)
        state = trainer.method_state()
        states = state.parts if len(methods) > 1 else [state]
        return [
            FitResult(
                trainer.models[i * k : (i + 1) * k],
                seeds,
                m,
                states[i],
                history[i * k : (i + 1) * k],
                epochs[i * k : (i + 1) * k],
                best_epochs[i * k : (i + 1) * k],
                seconds,
                best[i * k : (i + 1) * k],
                path,
            )
            for i, m in enumerate(methods)
        ]
