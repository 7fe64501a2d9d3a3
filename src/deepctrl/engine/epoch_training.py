"""One epoch of a :class:`~deepctrl.engine.trainer.Trainer`: every seed's batches and its
optimizer steps, eager or compiled (:mod:`deepctrl.engine.compiled`).

Rows come from tensors (the fast path: every seed shuffles its own index order, batches
are gathered 64 at a time) or from a Dataset/DataLoader (read batch by batch, memory bounded
by the batch). The loss of a batch is :func:`deepctrl.core.losses.compute_terms`, the same
that :class:`deepctrl.Objective` computes for one model.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor

from deepctrl.core.inputs import REFUSALS, Inputs, apply, refused_rows, rows, tensors
from deepctrl.core.log import info
from deepctrl.core.losses import check_outputs, compute_terms
from deepctrl.core.method_checks import method_alphas, method_loss
from deepctrl.core.method_state import SeedState
from deepctrl.core.method_terms import Terms
from deepctrl.core.methods import Method
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule, forward_all
from deepctrl.core.sources import LoaderBatches, is_loader
from deepctrl.core.world import World
from deepctrl.engine.compiled import CompiledStep
from deepctrl.engine.ensemble import FlatAdam, Stack
from deepctrl.engine.feed import Streams, add_noise, perturb_seeds, seed_rows
from deepctrl.engine.folds import SeedFolds
from deepctrl.engine.lowering import ExactSums
from deepctrl.engine.torch_private import compile_errors

CHUNK_ROWS = 16_384
"""An epoch gathers and perturbs ``chunk_batches`` batches at once, but no more than this
many rows per seed (so batches of up to 256 rows keep 64 per chunk): 64 batches of 1,024
rows for 3 seeds held about 60 MB of gathered and perturbed inputs on a table with 37
encoded columns."""
CHUNK_BYTES = 16 * 2**20
"""Nor more rows per seed than fill this many bytes of inputs (16,384 rows of 256 float32
inputs): on a table of 1,952 encoded inputs a chunk of 16,384 rows held 128 MB per seed and
per perturbed copy."""


def chunk_rows(train: Any) -> int:
    """The most rows per seed a chunk of ``train`` (``(X, y)`` tensors) gathers: at most
    :data:`CHUNK_ROWS`, and at most :data:`CHUNK_BYTES` of ``X``.

    >>> chunk_rows((torch.zeros(10, 37), None)), chunk_rows((torch.zeros(10, 1024), None))
    (16384, 4096)
    """
    if is_loader(train):
        return CHUNK_ROWS
    row_bytes = sum(t[:1].numel() * t.element_size() for t in tensors(train[0]))
    return max(1, min(CHUNK_ROWS, CHUNK_BYTES // max(row_bytes, 1)))


class EpochTraining:
    """The training epochs of a :class:`~deepctrl.engine.trainer.Trainer`: :meth:`train_epoch`
    and the optimizer steps it takes, on the state the trainer's constructor sets up."""

    rule: Rule | None
    method: Method
    loss_fn: PerSample
    task_loss: str | PerSample
    batch_size: int
    noise: float
    shuffle: bool
    device: torch.device
    chunk: int
    dtype: torch.dtype
    folds: SeedFolds | None
    train_weights: Tensor | None
    world: World
    exact: bool
    sums: ExactSums | None
    stack: Stack
    opt: FlatAdam
    streams: Streams
    use_rule: bool
    need_violations: bool
    train_data: Any
    batches: LoaderBatches | None
    checked: bool
    rule_checked: bool
    want_compile: bool
    compiled: CompiledStep | None
    rule_leaves: int
    state: SeedState

    def batch_terms(
        self,
        x: Inputs,
        y: Tensor,
        perturbed: list[Inputs | None],
        alpha: Tensor,
        n_global: int,
        weight: Tensor | None = None,
    ) -> Terms:
        """Per-seed terms of one (S, batch) slice; sums over the local rows (times their
        ``weight`` (S, batch) if given) / ``n_global``."""
        rule = self.rule if self.use_rule else None
        try:
            y_hat, y_p = forward_all(
                lambda z: self.stack(z, alpha), x, perturbed if rule is not None else [], dim=1
            )
        except REFUSALS as exc:  # a DataLoader's rows, not checked before training
            if self.checked:
                raise
            raise refused_rows(apply(lambda t: t[0], x), exc, "training") from exc
        if not self.checked:
            check_outputs(y_hat[0].detach(), y[0], self.task_loss)
            self.checked = True
        terms, _ = compute_terms(
            rule,
            self.loss_fn,
            x,
            y,
            y_hat,
            perturbed,
            y_p,
            alpha,
            n_global,
            self.need_violations,
            self.exact,
            weight,
            check_grad=not self.rule_checked,
        )
        self.rule_checked = True
        return terms

    def _compile(self, alpha: Tensor) -> CompiledStep | None:
        if self.stack.path != "lowered":
            info(
                "compile: only MLP-made models (batched matrix products) are compiled; "
                "this one trains eagerly"
            )
            return None
        if self.method.coefficients(alpha.to(self.dtype), self.state) is None:
            info(
                f"compile: {self.method.name} is not a linear method (no coefficients); "
                "the training step runs eagerly"
            )
            return None
        if self.exact and self.world.size > 1:
            info(
                "compile: exact_sums under torchrun sums float64 gradients over the ranks, "
                "which the compiled step does not; the training step runs eagerly"
            )
            return None
        n = self.stack.size
        info(
            f"compile: the training step of {n} network{'s' * (n != 1)} (every method's "
            "seeds, stacked) is compiled on the "
            "second batch (torch.compile; tens of seconds on a CPU, once)"
        )
        return CompiledStep(
            self.stack,
            self.rule if self.use_rule else None,
            self.loss_fn,
            self.need_violations,
            self.exact,
        )

    def _compiled_step(
        self,
        x: Inputs,
        y: Tensor,
        perturbed: list[Inputs | None],
        alpha: Tensor,
        b_global: int,
        weight: Tensor | None,
    ) -> tuple[Tensor, Terms] | None:
        """The compiled step's loss and terms, the weights updated; None (and eager from now
        on) if the step cannot be compiled (not traceable as one graph, or no working C++
        compiler for inductor)."""
        assert self.compiled is not None
        a = alpha.to(self.dtype)
        linear = self.method.coefficients(a, self.state)
        assert linear is not None  # checked before compiling
        coefs = linear.checked(len(a), self.rule_leaves, self.method.name).as_tensors(
            a, self.rule_leaves
        )
        try:
            loss, t, grads = self.compiled(x, y, perturbed, alpha, coefs, b_global, weight)
        except compile_errors() as exc:
            reason = first_words(exc)
            info(f"compile: the training step could not be compiled ({reason}); it runs eagerly")
            self.compiled = None
            return None
        if self.world.size > 1:
            self.compiled.write_grads(grads)
            self.world.all_reduce_(self.stack.flat_grad)
            self.opt.step()
        else:
            self.opt.step_views(self.compiled.names, grads)
        return loss, t

    def _eager_step(
        self,
        x: Inputs,
        y: Tensor,
        perturbed: list[Inputs | None],
        alpha: Tensor,
        b_global: int,
        weight: Tensor | None,
    ) -> tuple[Tensor, Terms]:
        t = self.batch_terms(x, y, perturbed, alpha, b_global, weight)
        loss = method_loss(self.method, t, self.state)
        self.stack.zero_grad()
        loss.sum().backward()
        if self.sums is not None:
            self.sums.finish()
        else:
            self.world.all_reduce_(self.stack.flat_grad)
        self.opt.step()
        if self.want_compile:  # after one eager step: the forward path is known
            self.want_compile = False
            self.compiled = self._compile(alpha)
        return loss, t

    def _step(
        self,
        x: Inputs,
        y: Tensor,
        perturbed: list[Inputs | None],
        alpha: Tensor,
        b_global: int,
        weight: Tensor | None = None,
    ) -> Tensor:
        """One optimizer step of every active seed on its (local shard of the) batch, rows
        weighted by ``weight`` (S, rows) if given."""
        done = (
            self._compiled_step(x, y, perturbed, alpha, b_global, weight) if self.compiled else None
        )
        loss, t = done or self._eager_step(x, y, perturbed, alpha, b_global, weight)
        t = t.detached()
        if self.need_violations:
            t = t._replace(violations=self.world.all_reduce_sum(t.violations))
        self.method.after_step(t, self.state)
        return loss.detach() * b_global

    def _epoch_order(self, n: int) -> Tensor:
        if not self.shuffle:
            return torch.arange(n, device=self.device).expand(self.stack.size, n)
        return torch.stack(
            [torch.randperm(n, generator=g, device=self.device) for g in self.streams.shuffle]
        )

    def train_epoch(self) -> Tensor:
        """One pass over the data for every active seed; per-seed mean training loss."""
        self.stack.template.train()
        if self.batches is not None:
            return self._train_epoch_loader()
        X, y = self.train_data
        w = self.train_weights if self.folds is None else self.folds.train_weights
        n = y.shape[0] if self.folds is None else self.folds.train.shape[1]
        B = self.batch_size
        n_batches = -(-n // B)
        order = self._epoch_order(n)
        if self.folds is not None:
            order = self.folds.train.gather(1, order)
        alphas = method_alphas(self.method, n_batches, self.state).to(self.device)
        total = torch.zeros(self.stack.size, device=self.device)
        used = 0
        for c0 in range(0, n_batches, self.chunk):
            idx = order[:, c0 * B : (c0 + self.chunk) * B]
            xc, yc = rows(X, idx), y[idx]
            wc = None if w is None else (w[idx] if w.dim() == 1 else w.gather(1, idx))
            if self.noise > 0:
                xc = add_noise(xc, self.noise, self.streams.noise)
            pc = perturb_seeds(self.rule, xc, self.streams.perturb) if self.use_rule else []
            for start in range(0, idx.shape[1], B):
                b_global = min(start + B, idx.shape[1]) - start
                if b_global < self.world.size:  # a rank would get no row: left out
                    continue
                sl = slice(*self.world.shard(start, start + b_global))
                used += b_global
                total += self._step(
                    seed_rows(xc, sl),
                    yc[:, sl],
                    [None if p is None else seed_rows(p, sl) for p in pc],
                    alphas[:, c0 + start // B],
                    b_global,
                    None if wc is None else wc[:, sl],
                )
        return self.world.all_reduce_sum(total) / max(used, 1)

    def _train_epoch_loader(self) -> Tensor:
        assert self.batches is not None
        known = self.batches.has_len()
        alphas = (
            method_alphas(self.method, len(self.batches), self.state).to(self.device)
            if known
            else None
        )
        total = torch.zeros(self.stack.size, device=self.device)
        n = 0
        for j, (xb, yb) in enumerate(self.batches.epoch(self.stack.size)):
            if self.noise > 0:
                xb = add_noise(xb, self.noise, self.streams.noise)
            pb = perturb_seeds(self.rule, xb, self.streams.perturb) if self.use_rule else []
            b = yb.shape[1]
            if b < self.world.size:  # a rank would get no row: left out
                continue
            sl = slice(*self.world.shard(0, b))
            a = (
                alphas[:, j]
                if alphas is not None
                else method_alphas(self.method, 1, self.state).to(self.device)[:, 0]
            )
            total += self._step(
                seed_rows(xb, sl),
                yb[:, sl],
                [None if p is None else seed_rows(p, sl) for p in pb],
                a,
                b,
            )
            n += b
        return self.world.all_reduce_sum(total) / max(n, 1)


def first_words(exc: BaseException, limit: int = 160) -> str:
    r"""The first line of an error, with the next one when it only announces it (``backend=
    'inductor' raised:``), cut at ``limit`` characters.

    >>> first_words(RuntimeError("backend='inductor' raised:\nTypeError: Too few arguments"))
    "backend='inductor' raised: TypeError: Too few arguments"
    """
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    if not lines:
        return type(exc).__name__
    text = lines[0]
    if text.endswith(":") and len(lines) > 1:
        text = f"{text} {lines[1]}"
    return text[:limit]
