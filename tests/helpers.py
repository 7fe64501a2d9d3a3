"""What many tests build: small DeepCTRL networks on 3 inputs, fixed initial-loss
estimates for methods and a table whose category "10" looks like a number (imported as
``from helpers import ...``; conftest.py puts this folder on the path)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

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
