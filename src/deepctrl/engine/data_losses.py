"""Mean losses of a stack of seeds over a whole data set: the calibration of rho before
training (the rule loss at alpha 1 and the task loss at alpha 0 over the training rows) and
the validation loss after each epoch.

Rows come from tensors (in blocks of at least 4,096 rows) or from a Dataset/DataLoader.
With per-row weights the means are weighted, sum(w l) / sum(w). With folds
(:mod:`deepctrl.engine.folds`) every seed's means run over its own rows, with its own data
scales. Under DDP every rank draws the same perturbations for a block, evaluates its share
of the block's rows, and the sums are added over the ranks, so the result does not depend
on the number of ranks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.calls import in_mode
from deepctrl.core.inputs import (
    REFUSALS,
    Inputs,
    apply,
    expand_seeds,
    refused_rows,
    rows,
    stack_inputs,
)
from deepctrl.core.losses import block_sums
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule
from deepctrl.core.scale import Scales, at_least_float32, data_scales, scales_of
from deepctrl.core.sources import blocks, is_loader
from deepctrl.core.world import World
from deepctrl.engine.ensemble import Stack
from deepctrl.engine.feed import Streams, add_noise, perturb_seeds, seed_rows, with_noise
from deepctrl.engine.folds import SeedFolds

Blocks = Iterator[tuple[Inputs, Tensor, Tensor | None]]
"""(inputs (S, m, ...), targets (S, m, ...), per-row weights (S, m) or None) per block of
rows."""


class DataLosses:
    """Per-seed mean losses of ``stack`` over the training and validation data.

    ``train``, ``val``: ``(X, y)`` tensors or a Dataset/DataLoader (``val`` may be None);
    ``train_weights``, ``val_weights``: per-row weights of tensor data scaled to mean 1, or
    None. ``noise``: the validation inputs get N(0, noise^2) per seed, drawn once.
    ``folds``: every seed's training and validation rows of ``train`` (``val`` is then
    None), with their weights.
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
        folds: SeedFolds | None = None,
    ) -> None:
        self.stack, self.rule, self.loss_fn = stack, rule, loss_fn
        self.folds = folds
        self.train, self.val = train, val
        self.train_weights, self.val_weights = train_weights, val_weights
        self.step = max(batch_size, 4096)
        self.streams, self.world, self.noise, self.exact = streams, world, noise, exact
        self.device = streams.device
        self.dtype = next(iter(stack.template.parameters())).dtype
        self.scales: tuple[Scales, Tensor] | None = None
        self.val_noisy = self._noisy_validation()

    def _noisy_validation(self) -> list[Inputs] | None:
        if self.noise == 0:
            return None
        if self.folds is not None:
            X = self.train[0]
            return [
                with_noise(rows(X, r), self.noise, g)
                for r, g in zip(self.folds.val, self.streams.val, strict=True)
            ]
        if self.val is None or is_loader(self.val):
            return None
        return [with_noise(self.val[0], self.noise, g) for g in self.streams.val]

    def keep(self, mask: list[bool]) -> None:
        """Seeds that stopped leave the noisy validation inputs, and with folds their rows,
        weights and data scales."""
        if self.val_noisy is not None:
            self.val_noisy = [x for x, k in zip(self.val_noisy, mask, strict=True) if k]
        if self.folds is None:
            return
        kept = torch.tensor(mask, device=self.device)
        self.folds.keep(kept)
        if self.scales is not None:
            x_scale, y_scale = self.scales
            self.scales = apply(lambda t: t[kept], x_scale), y_scale[kept]

    def _tensor_blocks(
        self, X: list[Inputs] | Inputs, y: Tensor, w: Tensor | None = None
    ) -> Blocks:
        S, n = self.stack.size, y.shape[0]
        for start in range(0, n, self.step):
            part = slice(start, min(start + self.step, n))
            wp = None if w is None else expand_seeds(w[part], S)
            if isinstance(X, list):
                xs = stack_inputs([rows(x, part) for x in X])
            else:
                xs = expand_seeds(rows(X, part), S)
            yield xs, expand_seeds(y[part], S), wp

    def _fold_blocks(self, index: Tensor, w: Tensor | None, noisy: list[Inputs] | None) -> Blocks:
        """Blocks of every seed's own rows ``index`` (S, m) of the training tensors, with
        its weights ``w`` (S, n); ``noisy``: the seeds' rows as they are to be read."""
        X, y = self.train
        for start in range(0, index.shape[1], self.step):
            idx = index[:, start : start + self.step]
            wp = None if w is None else w.gather(1, idx)
            if noisy is None:
                xs = rows(X, idx)
            else:
                part = slice(start, start + idx.shape[1])
                xs = stack_inputs([rows(x, part) for x in noisy])
            yield xs, y[idx], wp

    def _loader_blocks(self, data: Any, noisy: bool, what: str) -> Blocks:
        gens = self.streams.fresh("val") if noisy else []
        S = self.stack.size
        for x, y in blocks(data, self.step, self.device, self.dtype, what):
            assert y is not None  # blocks read targets unless told not to
            xs = expand_seeds(x, S)
            yield (add_noise(xs, self.noise, gens) if noisy else xs), expand_seeds(y, S), None

    def _train_blocks(self) -> Blocks:
        if is_loader(self.train):
            return self._loader_blocks(self.train, noisy=False, what="train")
        if self.folds is not None:
            return self._fold_blocks(self.folds.train, self.folds.train_weights, None)
        X, y = self.train
        return self._tensor_blocks(X, y, self.train_weights)

    @torch.no_grad()
    def mean_over(
        self, data: Blocks, alpha: float | Tensor, what: str, rows_of: str = "training"
    ) -> Tensor:
        """Per-seed mean of the task (or rule) loss over the blocks of ``data`` at ``alpha``
        (one value, or one per seed), in eval mode; with weights the weighted mean.

        ``what``: "task", "rule", or "reference" (rule loss on the reference response of
        :mod:`deepctrl.core.scale`). A model that cannot take the first block's rows fails
        with one line naming them as the ``rows_of`` rows.
        """
        S = self.stack.size
        total = torch.zeros(S, device=self.device, dtype=torch.float64)
        n: int | Tensor = 0
        a = (
            alpha.to(self.device)
            if isinstance(alpha, Tensor)
            else torch.full((S,), float(alpha), device=self.device)
        )
        rule = self.rule if what != "task" else None
        checked = False

        def forward(z: Inputs) -> Tensor:
            try:
                return self.stack(z, a)
            except REFUSALS as exc:
                if checked:
                    raise
                raise refused_rows(apply(lambda t: t[0], z), exc, rows_of) from exc

        with in_mode(self.stack.template, False):
            for xs, y, w in data:
                m = y.shape[1]
                perturbed = perturb_seeds(rule, xs, self.streams.eval)
                lo, hi = self.world.shard(0, m)
                n = n + (m if w is None else w.double().sum(dim=1))
                if hi == lo:  # fewer rows than ranks: this rank's share is empty
                    continue
                part = slice(lo, hi)
                perturbed = [None if p is None else seed_rows(p, part) for p in perturbed]
                total += block_sums(
                    forward,
                    rule,
                    self.loss_fn,
                    seed_rows(xs, part),
                    y[:, part],
                    perturbed,
                    what,
                    self._block_scales(hi - lo),
                    self.exact,
                    None if w is None else w[:, part],
                )
                checked = True
        return (self.world.all_reduce_sum(total) / n).to(at_least_float32(self.dtype))

    def _block_scales(self, m: int) -> tuple[Scales, Tensor] | None:
        """The data scales as the reference rule loss reads them: shared, or with folds one
        row per seed repeated for each of the block's ``m`` rows (S * m, ...)."""
        if self.scales is None or self.folds is None:
            return self.scales
        x_scale, y_scale = self.scales
        return apply(lambda t: per_row(t, m), x_scale), per_row(y_scale, m)

    def initial(self, reference: bool = False) -> tuple[Tensor, Tensor]:
        """Per-seed (L_rule at alpha 1, L_task at alpha 0) over the training set (weighted
        means with sample weights); ``reference`` measures a perturbation rule on the
        reference response (rho="auto")."""
        if reference:
            self.scales = self._data_scales()
        rule_loss = self.mean_over(self._train_blocks(), 1.0, "reference" if reference else "rule")
        task_loss = self.mean_over(self._train_blocks(), 0.0, "task")
        return rule_loss.cpu(), task_loss.cpu()

    def validation(self, alphas: Tensor) -> Tensor:
        """Per-seed task loss over the validation set at ``alphas`` (one per seed)."""
        if self.folds is not None:
            data = self._fold_blocks(self.folds.val, self.folds.val_weights, self.val_noisy)
        elif is_loader(self.val):
            data = self._loader_blocks(self.val, noisy=self.noise > 0, what="val")
        elif self.val_noisy is not None:
            data = self._tensor_blocks(self.val_noisy, self.val[1], self.val_weights)
        else:
            Xv, yv = self.val
            data = self._tensor_blocks(Xv, yv, self.val_weights)
        return self.mean_over(data, alphas, "task", "val")

    def _data_scales(self) -> tuple[Scales, Tensor]:
        """The data scales of ``rho="auto"`` over the training rows; with folds, each
        seed's over its own rows, stacked (S, ...)."""
        if self.folds is None:
            return scales_of(
                self.train, self.step, self.device, self.dtype, self.train_weights, what="train"
            )
        X, y = self.train
        w = self.folds.train_weights
        per_seed = [
            data_scales(rows(X, r), y[r], None if w is None else w[i, r])
            for i, r in enumerate(self.folds.train)
        ]
        x_scales = [x for x, _ in per_seed]
        return stack_inputs(x_scales), torch.stack([s for _, s in per_seed])


def per_row(t: Tensor, m: int) -> Tensor:
    """Per-seed values (S, ...) repeated for ``m`` rows of every seed: (S * m, ...)."""
    return t.unsqueeze(1).expand(t.shape[0], m, *t.shape[1:]).flatten(0, 1)
