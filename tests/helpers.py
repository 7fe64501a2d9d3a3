"""What many tests build: small DeepCTRL networks on 3 inputs, fixed initial-loss
estimates for methods, a table whose category "10" looks like a number, and the check of a
reproduction's results.json layout (imported as ``from helpers import ...``; conftest.py
puts this folder on the path)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import torch

import deepctrl as dc


def small_net(hidden: int | None = None, dtype: torch.dtype = torch.float32) -> dc.DeepCTRL:
    """Encoders 3-8 (3-hidden-8 with ``hidden``) and a decision block 16-1 (16-8-1)."""
    widths = () if hidden is None else (hidden,)
    decision = dc.mlp(16, 1) if hidden is None else dc.mlp(16, 8, 1)
    return dc.DeepCTRL(dc.mlp(3, *widths, 8), dc.mlp(3, *widths, 8), decision).to(dtype)


def loss_estimate(
    n: int, rule: float = 1.0, task: float = 1.0
) -> Callable[[bool], tuple[torch.Tensor, torch.Tensor]]:
    """An ``estimate(reference)`` for ``n`` seeds that answers fixed initial losses."""
    return lambda reference: (torch.full((n,), rule), torch.full((n,), task))


def stores_csv(path: Path, n: int = 300) -> Path:
    """A CSV of ``n`` rows: ``store`` (north, south, or "10", which sells 3 more than north
    and looks like a number), ``x`` and the target ``y`` (rising with x)."""
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, n)
    store = rng.choice(["north", "south", "10"], n)
    y = 2 * x + 3 * (store == "10") - 3 * (store == "south") + rng.normal(0, 0.1, n)
    pd.DataFrame({"store": store, "x": x, "y": y}).to_csv(path, index=False)
    return path


RESULTS_KEYS = ("experiment", "preset", "seeds", "alphas", "methods", "selection")


def check_results_layout(results: dict[str, Any], metrics: tuple[str, ...]) -> None:
    """Assert the top-level results.json layout of docs/paper/index.md: the shared keys,
    every method's ``test`` and ``val`` curves of ``metrics`` and the verification ratio
    with one mean and std per alpha, and those of a method with an ``eval_alpha``
    constant (its value at that alpha)."""
    assert set(RESULTS_KEYS) <= set(results), sorted(set(RESULTS_KEYS) - set(results))
    alphas = results["alphas"]
    assert results["methods"] and results["selection"]
    for name, entry in results["methods"].items():
        assert {"eval_alpha", "test", "val", "epochs", "train_seconds"} <= set(entry), name
        for split in ("test", "val"):
            assert set(entry[split]) == {*metrics, "verification_ratio"}, (name, split)
            for metric, stats in entry[split].items():
                assert len(stats["mean"]) == len(stats["std"]) == len(alphas), (name, metric)
                if entry["eval_alpha"] is not None:
                    i = alphas.index(entry["eval_alpha"])
                    for key in ("mean", "std"):
                        assert stats[key] == [stats[key][i]] * len(alphas), (name, metric, key)


def write_sales(folder: Path, n: int = 60) -> Path:
    """sales.csv in ``folder``: price, size and sales falling with price (noise 0.2)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"price": rng.uniform(1, 10, n).round(3), "size": rng.uniform(0, 1, n)})
    frame["sales"] = 10 - frame["price"] + 2 * frame["size"] + rng.normal(0, 0.2, n)
    path = folder / "sales.csv"
    frame.to_csv(path, index=False)
    return path


def warn_and_note(text: str) -> str:
    """A job for worker processes: a warning and a note naming ``text``, then ``text``."""
    from deepctrl.core.log import info

    warnings.warn(f"warned {text}", RuntimeWarning, stacklevel=1)
    info(f"noted {text}")
    return text


def bar_line(_: int) -> int | None:
    """A job for worker processes: the terminal line its progress bars would take."""
    from deepctrl.engine import progress

    return progress._position
