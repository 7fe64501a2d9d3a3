"""What the pendulum reproduction trains: its constants, the training protocol
(``Settings``), the paper's networks, the energy rule and the noisy validation inputs.

>>> net = deepctrl_net()
>>> sum(p.numel() for p in net.parameters()), sum(p.numel() for p in TaskNet().parameters())
(28692, 13060)
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor, nn

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments import common

SEED_START = 10
INPUT_NOISE = 0.01
VAL_NOISE_SEED = 2021
TARGET_RATIO = 0.9
LAMBDAS = (0.01, 0.1, 1.0)
DUAL_LRS = (0.01, 0.1, 1.0)


@dataclass(frozen=True)
class Settings:
    """Training protocol: the authors' (batch 64, Adam 1e-3, validate every 5 epochs,
    patience 10 checks, at most 1000 epochs) unless ``quick``.

    ``compile``: the full protocol compiles each job's training step (``dc.fit(compile=True)``;
    the compilation takes tens of seconds per job and pays back within minutes), a quick run
    trains eagerly.
    """

    seeds: tuple[int, ...]
    quick: bool = False
    max_epochs: int = 1000
    patience: int = 10
    val_every: int = 5
    batch_size: int = 64
    lr: float = 1e-3
    dual_lrs: tuple[float, ...] = DUAL_LRS
    timing_epochs: int = 2
    compile: bool = True

    @classmethod
    def make(cls, seeds: int, quick: bool) -> Settings:
        """The full protocol, or a smoke run (at most 2 seeds, 8 epochs, 2 dual lrs)."""
        ids = common.seed_range(seeds, quick, SEED_START)
        if not quick:
            return cls(ids)
        return cls(
            ids,
            quick=True,
            max_epochs=8,
            patience=2,
            val_every=2,
            dual_lrs=(0.1, 1.0),
            timing_epochs=1,
            compile=False,
        )

    def fit_kwargs(self, device: str, progress: bool) -> dict[str, Any]:
        return {
            "batch_size": self.batch_size,
            "lr": self.lr,
            "max_epochs": self.max_epochs,
            "patience": self.patience,
            "val_every": self.val_every,
            "input_noise": INPUT_NOISE,
            "device": device,
            "progress": progress,
            "compile": self.compile,
        }


def deepctrl_net(merge: str = "deepctrl") -> dc.DeepCTRL:
    """The paper's pendulum network: shared 4-64-16, encoders 16-64-64-64, decision 128-64-4
    (64-64-4 for ``merge="add"`` and ``"input"``), output + x."""
    decision_in = 64 if merge in ("add", "input") else 128
    if merge == "input":
        return dc.DeepCTRL(
            dc.mlp(17, 64, 64, 64),
            None,
            dc.mlp(decision_in, 64, 4),
            shared=dc.mlp(4, 64, 16),
            merge="input",
            residual=True,
        )
    return dc.DeepCTRL(
        dc.mlp(16, 64, 64, 64),
        dc.mlp(16, 64, 64, 64),
        dc.mlp(decision_in, 64, 4),
        shared=dc.mlp(4, 64, 16),
        merge=merge,
        residual=True,
    )


def TaskNet() -> dc.Residual:  # noqa: N802 (the network's name in the paper's appendix)
    """The baselines' network: data encoder 4-64-64-64, decision 64-64-4, output + x.

    Built from plain parts (``dc.Residual`` of a ``Sequential``), so stacked seeds run it as
    batched matrix products (:mod:`deepctrl.engine.lowering`).
    """
    return dc.Residual(
        nn.Sequential(OrderedDict(encoder=dc.mlp(4, 64, 64, 64), decision=dc.mlp(64, 64, 4)))
    )


def energy_rule() -> dc.rules.Penalty:
    """The energy-damping rule E(y_hat) < E(x); loss relu(E(y_hat) - E(x))."""
    return dc.rules.Penalty(pendulum.energy_increase, strict=True)


def noisy_validation(val: tuple[Tensor, Tensor]) -> tuple[Tensor, Tensor]:
    """Validation inputs with N(0, 0.01^2) noise drawn once from a fixed generator."""
    gen = torch.Generator().manual_seed(VAL_NOISE_SEED)
    return val[0] + INPUT_NOISE * torch.randn(val[0].shape, generator=gen), val[1]
