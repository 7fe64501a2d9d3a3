"""What the trainer feeds its stack of seeds besides the rows: per-seed random streams,
input noise, and sample weights scaled to mean 1."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, apply
from deepctrl.core.seeding import derive_seed


class Streams:
    """Per-seed random generators for shuffling, input noise and perturbations."""

    NAMES = ("shuffle", "noise", "perturb", "val", "eval")
    shuffle: list[torch.Generator]
    noise: list[torch.Generator]
    perturb: list[torch.Generator]
    val: list[torch.Generator]
    eval: list[torch.Generator]

    def __init__(self, seeds: Sequence[int], device: torch.device) -> None:
        self.device = device
        for name in self.NAMES:
            setattr(self, name, [torch.Generator(device).manual_seed(derive_seed(s, name))
                                 for s in seeds])
        self.seeds = list(seeds)

    def fresh(self, stream: str) -> list[torch.Generator]:
        """New generators of ``stream`` for the seeds still training (same draws each time)."""
        return [torch.Generator(self.device).manual_seed(derive_seed(s, stream))
                for s in self.seeds]

    def keep(self, mask: list[bool]) -> None:
        for name in (*self.NAMES, "seeds"):
            setattr(self, name, [g for g, k in zip(getattr(self, name), mask, strict=True) if k])


def seed_rows(x: Inputs, part: slice) -> Inputs:
    """Rows ``part`` of stacked (S, rows, ...) inputs."""
    return apply(lambda t: t[:, part], x)


def add_noise(xs: Inputs, std: float, gens: Sequence[torch.Generator]) -> Inputs:
    """Fresh N(0, std^2) noise on every floating-point input, each seed from its generator."""

    def noisy(t: Tensor) -> Tensor:
        if not t.dtype.is_floating_point:
            return t
        return t + std * torch.stack([torch.randn(t.shape[1:], generator=g, device=t.device,
                                                  dtype=t.dtype) for g in gens])

    return apply(noisy, xs)


def mean_one(w: Tensor | None, device: torch.device, dtype: torch.dtype) -> Tensor | None:
    """Weights w / mean(w) (computed in float64) in ``dtype``; None stays None."""
    if w is None:
        return None
    w = w.to(device, torch.float64)
    return (w / w.mean()).to(dtype)
