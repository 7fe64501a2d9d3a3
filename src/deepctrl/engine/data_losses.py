"""Mean losses of a stack of seeds over a whole data set: the calibration of rho before
training (the rule loss at alpha 1 and the task loss at alpha 0 over the training rows) and
the validation loss after each epoch.

Rows come from tensors (in blocks of at least 4,096 rows) or from a Dataset/DataLoader.
With per-row weights the means are weighted, sum(w l) / sum(w). Under DDP every rank draws
the same perturbations for a block, evaluates its share of the block's rows, and the sums
are added over the ranks, so the result does not depend on the number of ranks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.calls import in_mode
from deepctrl.core.inputs import Inputs, expand_seeds, rows, stack_inputs
from deepctrl.core.losses import block_sums
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule
from deepctrl.core.scale import Scales, scales_of
from deepctrl.core.sources import blocks, is_loader
from deepctrl.core.world import World
from deepctrl.engine.ensemble import Stack
from deepctrl.engine.feed import Streams, add_noise, perturb_seeds, seed_rows, with_noise

Blocks = Iterator[tuple[Inputs, Tensor, Tensor | None]]
"""(inputs (S, m, ...), targets (m, ...), per-row weights (m,) or None) per block of rows."""


class DataLosses:
    """Per-seed mean losses of ``stack`` over the training and validation data.

    ``train``, ``val``: ``(X, y)`` tensors or a Dataset/DataLoader (``val`` may be None);
    ``train_weights``, ``val_weights``: per-row weights of tensor data scaled to mean 1, or
    None. ``noise``: the validation inputs get N(0, noise^2) per seed, drawn once.
    """

    def __init__(
        self,
        stack: Stack,
        rule: Rule | None,
        loss_fn: PerSample,
        train: Any,
        val: Any,
        *,
        batch_size: int,
        streams: Streams,
        world: World,
        noise: float,
        exact: bool,
        train_weights: Tensor | None,
        val_weights: Tensor | None,
    ) -> None:
        self.stack, self.rule, self.loss_fn = stack, rule, loss_fn
        self.train, self.val = train, val
        self.train_weights, self.val_weights = train_weights, val_weights
        self.step = max(batch_size, 4096)
        self.streams, self.world, self.noise, self.exact = streams, world, noise, exact
        self.device = streams.device
        self.dtype = next(iter(stack.template.parameters())).dtype
        self.scales: tuple[Scales, Tensor] | None = None
        self.val_noisy = self._noisy_validation()

    def _noisy_validation(self) -> list[Inputs] | None:
        if self.val is None or self.noise == 0 or is_loader(self.val):
            return None
        return [with_noise(self.val[0], self.noise, g) for g in self.streams.val]

    def keep(self, mask: list[bool]) -> None:
        """Seeds that stopped leave the noisy validation inputs."""
        if self.val_noisy is not None:
            self.val_noisy = [x for x, k in zip(self.val_noisy, mask, strict=True) if k]

    def _tensor_blocks(
        self, X: list[Inputs] | Inputs, y: Tensor, w: Tensor | None = None
    ) -> Blocks:
        S, n = self.stack.size, y.shape[0]
        for start in range(0, n, self.step):
            part = slice(start, min(start + self.step, n))
            wp = None if w is None else w[part]
            if isinstance(X, list):
                yield stack_inputs([rows(x, part) for x in X]), y[part], wp
            else:
                yield expand_seeds(rows(X, part), S), y[part], wp

    def _loader_blocks(self, data: Any, noisy: bool) -> Blocks:
        gens = self.streams.fresh("val") if noisy else []
        for x, y in blocks(data, self.step, self.device, self.dtype, "val"):
            xs = expand_seeds(x, self.stack.size)
            yield (add_noise(xs, self.noise, gens) if noisy else xs), y, None  # type: ignore[misc]

    def _train_blocks(self) -> Blocks:
        if is_loader(self.train):
            return self._loader_blocks(self.train, noisy=False)
        X, y = self.train
        return self._tensor_blocks(X, y, self.train_weights)

    @torch.no_grad()
    def mean_over(self, data: Blocks, alpha: float | Tensor, what: str) -> Tensor:
        """Per-seed mean of the task (or rule) loss over the blocks of ``data`` at ``alpha``
        (one value, or one per seed), in eval mode; with weights the weighted mean.

        ``what``: "task", "rule", or "reference" (rule loss on the reference response of
        :mod:`deepctrl.core.scale`).
        """
        S = self.stack.size
        total = torch.zeros(S, device=self.device, dtype=torch.float64)
        n: int | float = 0
        a = (
            alpha.to(self.device)
            if isinstance(alpha, Tensor)
            else torch.full((S,), float(alpha), device=self.device)
        )
        rule = self.rule if what != "task" else None
        with in_mode(self.stack.template, False):
            for xs, y, w in data:
                m = y.shape[0]
                perturbed = perturb_seeds(rule, xs, self.streams.eval)
                lo, hi = self.world.shard(0, m)
                ys = expand_seeds(y[lo:hi], S)
                ws = None if w is None else expand_seeds(w[lo:hi], S)
                part = slice(lo, hi)
                perturbed = [None if p is None else seed_rows(p, part) for p in perturbed]
                total += block_sums(
                    lambda z: self.stack(z, a),
                    rule,
                    self.loss_fn,
                    seed_rows(xs, part),
                    ys,
                    perturbed,
                    what,
                    self.scales,
                    self.exact,
                    ws,
                )
                n += m if w is None else float(w.double().sum())
        return (self.world.all_reduce_sum(total) / n).float()

    def initial(self, reference: bool = False) -> tuple[Tensor, Tensor]:
        """Per-seed (L_rule at alpha 1, L_task at alpha 0) over the training set (weighted
        means with sample weights); ``reference`` measures a perturbation rule on the
        reference response (rho="auto")."""
        if reference:
            self.scales = scales_of(
                self.train, self.step, self.device, self.dtype, self.train_weights
            )
        rule_loss = self.mean_over(self._train_blocks(), 1.0, "reference" if reference else "rule")
        task_loss = self.mean_over(self._train_blocks(), 0.0, "task")
        return rule_loss.cpu(), task_loss.cpu()

    def validation(self, alphas: Tensor) -> Tensor:
        """Per-seed task loss over the validation set at ``alphas`` (one per seed)."""
        if is_loader(self.val):
            data = self._loader_blocks(self.val, noisy=self.noise > 0)
        elif self.val_noisy is not None:
            data = self._tensor_blocks(self.val_noisy, self.val[1], self.val_weights)
        else:
            Xv, yv = self.val
            data = self._tensor_blocks(Xv, yv, self.val_weights)
        return self.mean_over(data, alphas, "task")
