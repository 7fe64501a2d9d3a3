"""What the cardio reproduction trains and how: its constants, the TaskOnly network, the
training protocol (``Settings``), the data, the methods of each preset, and one method trained
on Source."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

import deepctrl as dc
from deepctrl.paper.datasets.cardio import CardioTask, Domain, load_cardio_csv, prepare
from deepctrl.paper.datasets.cardio_synthetic import synthetic_cohort
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.common import MethodRun, alpha_grid

ALPHAS = alpha_grid(1.5, 0.1)
METRICS = ("bce", "accuracy", "auc")
MAIN = "DeepCTRL"
FIXED_RHOS = (1.0, 0.1, 0.05, 0.01)
QUICK_RHOS = (1.0,)
COHORT_SIZE = 70_000


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


def domain_tensors(d: Domain) -> tuple[Tensor, Tensor]:
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
        domain_tensors(task.train),
        domain_tensors(task.val),
        domain_tensors(task.test),
        ALPHAS,
        METRICS,
        s.seeds,
        **s.fit_kwargs(device, progress),
    )


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
