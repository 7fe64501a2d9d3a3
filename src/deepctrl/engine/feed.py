"""What the trainer feeds its stack of seeds besides the rows: per-seed random streams,
perturbations, input noise, and sample weights scaled to mean 1."""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, apply, seed_of, stack_inputs
from deepctrl.core.rules.base import Rule, perturb_all
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
            setattr(
                self,
                name,
                [torch.Generator(device).manual_seed(derive_seed(s, name)) for s in seeds],
            )
        self.seeds = list(seeds)

    def fresh(self, stream: str) -> list[torch.Generator]:
        """New generators of ``stream`` for the seeds still training (same draws each time)."""
        return [
            torch.Generator(self.device).manual_seed(derive_seed(s, stream)) for s in self.seeds
        ]

    def keep(self, mask: list[bool]) -> None:
        for name in (*self.NAMES, "seeds"):
            setattr(self, name, [g for g, k in zip(getattr(self, name), mask, strict=True) if k])


def perturb_seeds(
    rule: Rule | None, xs: Inputs, gens: Sequence[torch.Generator]
) -> list[Inputs | None]:
    """Per-leaf perturbed copies of stacked inputs (S, n, ...), seed i's drawn from
    ``gens[i]`` (the draws of seed i alone); none without a rule."""
    if rule is None:
        return []
    per_seed = [perturb_all(rule, seed_of(xs, i), g) for i, g in enumerate(gens)]
    return [
        None if parts[0] is None else stack_inputs(parts) for parts in zip(*per_seed, strict=True)
    ]


def seed_rows(x: Inputs, part: slice) -> Inputs:
    """Rows ``part`` of stacked (S, rows, ...) inputs."""
    return apply(lambda t: t[:, part], x)


def _draw(t: Tensor, std: float, g: torch.Generator) -> Tensor:
    return std * torch.randn(t.shape, generator=g, device=t.device, dtype=t.dtype)


def with_noise(x: Inputs, std: float, g: torch.Generator) -> Inputs:
    """``x`` plus N(0, std^2) noise on every floating-point input, drawn from ``g``."""
    return apply(lambda t: t + _draw(t, std, g) if t.dtype.is_floating_point else t, x)


def add_noise(xs: Inputs, std: float, gens: Sequence[torch.Generator]) -> Inputs:
    """Stacked inputs (S, ...) plus fresh N(0, std^2) noise on every floating-point input,
    seed i's from ``gens[i]`` (the draws :func:`with_noise` makes on seed i alone)."""
    return apply(
        lambda t: (
            t + torch.stack([_draw(t[0], std, g) for g in gens]) if t.dtype.is_floating_point else t
        ),
        xs,
    )


def mean_one(w: Tensor | None, device: torch.device, dtype: torch.dtype) -> Tensor | None:
    """Weights w / mean(w) (computed in float64) in ``dtype``; None stays None."""
    if w is None:
        return None
    w = w.to(device, torch.float64)
    return (w / w.mean()).to(dtype)
