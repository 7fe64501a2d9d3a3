"""The state of one :func:`deepctrl.fit` call: S seeds trained as one stacked model.

Rows come from tensors (the fast path: every seed shuffles its own index order, batches
are gathered 64 at a time) or from a Dataset/DataLoader (read batch by batch, memory
bounded by the batch). The loss of a batch is :func:`deepctrl.core.losses.compute_terms`, the
same that :class:`deepctrl.Objective` computes for one model.

Tensors may come with per-row sample weights: training multiplies every row's losses by
w_i / mean(w) (so integer weights act as repeated rows), the rho estimate and the
validation loss are weighted means sum(w l) / sum(w).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, IterableDataset

from deepctrl.core.inputs import Inputs, expand_seeds, rows, seed_of, stack
from deepctrl.core.log import info
from deepctrl.core.losses import block_sums, check_outputs, compute_terms
from deepctrl.core.method_state import SeedState
from deepctrl.core.methods import Method, Terms
from deepctrl.core.metrics import PerSample
from deepctrl.core.model import in_mode
from deepctrl.core.rules.base import Rule, forward_all, perturb_all
from deepctrl.core.scale import RunningScales, Scales, data_scales
from deepctrl.core.sources import LoaderBatches, blocks, is_loader
from deepctrl.engine.callbacks import Callback, EpochEnd
from deepctrl.engine.compiled import CompiledStep
from deepctrl.engine.distributed import World
from deepctrl.engine.ensemble import FlatAdam, Stack
from deepctrl.engine.feed import Streams, add_noise, mean_one, seed_rows, with_noise
from deepctrl.engine.lowering import ExactSums
from deepctrl.engine.progress import progress_bar
from deepctrl.engine.torch_private import compile_errors

Blocks = Iterator[tuple[Inputs, Tensor, Tensor | None]]
"""(inputs (S, m, ...), targets (m, ...), per-row weights (m,) or None) per block of rows."""


CHUNK_ROWS = 16_384
"""An epoch gathers and perturbs ``chunk_batches`` batches at once, but no more than this
many rows per seed (so batches of up to 256 rows keep 64 per chunk): 64 batches of 1,024
rows for 3 seeds held about 60 MB of gathered and perturbed inputs on a table with 37
encoded columns."""


class Trainer:
    """Trains the seeds of one :func:`deepctrl.fit` call; see :meth:`run`.

    ``train_weights``, ``val_weights``: per-row sample weights (n,) of tensor data, or None.
    """

    def __init__(self, models: list[nn.Module], rule: Rule | None, method: Method,
                 train: Any, val: Any, *, loss_fn: PerSample, task_loss: object,
                 batch_size: int, lr: float, seeds: list[int], input_noise: float,
                 shuffle: bool, device: torch.device, chunk_batches: int,
                 compile: bool = False, exact_sums: bool = False,
                 train_weights: Tensor | None = None,
                 val_weights: Tensor | None = None) -> None:
        self.rule, self.method, self.loss_fn, self.task_loss = rule, method, loss_fn, task_loss
        self.batch_size, self.seeds, self.noise = batch_size, seeds, input_noise
        self.shuffle, self.device = shuffle, device
        self.chunk = max(1, min(chunk_batches, CHUNK_ROWS // batch_size))
        self.dtype = next(models[0].parameters()).dtype
        if (train_weights is not None and is_loader(train)) or (
                val_weights is not None and is_loader(val)):
            raise ValueError("sample weights are supported for tensors only, not for a "
                             "Dataset or DataLoader")
        self.train_weights = mean_one(train_weights, device, self.dtype)
        self.val_weights = mean_one(val_weights, device, self.dtype)
        self.world = World.from_env(device)
        self.models = models
        self.exact = exact_sums
        reduce = self.world.all_reduce_ if self.world.size > 1 else None
        self.sums = ExactSums(reduce) if exact_sums else None
        self.stack = Stack(models, seeds, self.sums)
        self.world.broadcast_(self.stack.flat.detach())
        self.opt = FlatAdam(self.stack, lr=lr)
        self.streams = Streams(seeds, device)
        self.active = list(range(len(seeds)))
        self.use_rule = rule is not None and method.uses_rule
        self.need_violations = self.use_rule and method.needs_violations
        self.train_data, self.val_data = train, val
        self.batches = (LoaderBatches(train, batch_size, shuffle, seeds, device, self.dtype)
                        if is_loader(train) else None)
        self.Xv_noisy = self._noisy_validation()
        self.scales: tuple[Scales, Tensor] | None = None
        self.checked = False
        self._check_first_rows()
        self.want_compile = compile
        self.compiled: CompiledStep | None = None
        self.rule_leaves = len(rule.leaves()) if self.need_violations else 1  # type: ignore[union-attr]
        self.state = method.init_state(seeds, len(rule.leaves()) if rule is not None else 0,
                                       self.estimate_losses)
        """The method's state of the seeds still training (sliced when seeds stop)."""
        self.stopped: dict[int, SeedState] = {}
        """The method's final state of every seed that stopped, by its index in ``seeds``."""

    # -- checks -------------------------------------------------------------------------
    def _check_first_rows(self) -> None:
        """Outputs that do not fit the targets fail here, before any training (data from a
        DataLoader are checked on the first training batch instead)."""
        if not is_loader(self.train_data):
            X, y = self.train_data
            x = rows(X, slice(0, 8))
            y = y[:8]
        elif isinstance(self.train_data, DataLoader | IterableDataset):
            return
        else:
            x, y = next(blocks(self.train_data, 8, self.device, self.dtype, "train"))
        S = self.stack.size
        with torch.no_grad(), in_mode(self.stack.template, False):
            out = self.stack(expand_seeds(x, S), self._alphas(self.method.val_alpha))
        check_outputs(out[0], y, self.task_loss)
        self.checked = True

    # -- evaluation over data -------------------------------------------------------------
    def _noisy_validation(self) -> list[Inputs] | None:
        if self.val_data is None or self.noise == 0 or is_loader(self.val_data):
            return None
        Xv = self.val_data[0]
        return [with_noise(Xv, self.noise, g) for g in self.streams.val]

    def _alphas(self, value: float) -> Tensor:
        return torch.full((self.stack.size,), float(value), device=self.device)

    def _tensor_blocks(self, X: list[Inputs] | Inputs, y: Tensor,
                       w: Tensor | None = None) -> Blocks:
        S, n = self.stack.size, y.shape[0]
        step = max(self.batch_size, 4096)
        for start in range(0, n, step):
            part = slice(start, min(start + step, n))
            wp = None if w is None else w[part]
            if isinstance(X, list):
                yield stack([rows(x, part) for x in X]), y[part], wp
            else:
                yield expand_seeds(rows(X, part), S), y[part], wp

    def _loader_blocks(self, data: Any, noisy: bool) -> Blocks:
        step = max(self.batch_size, 4096)
        gens = self.streams.fresh("val") if noisy else []
        for x, y in blocks(data, step, self.device, self.dtype, "val"):
            xs = expand_seeds(x, self.stack.size)
            yield (add_noise(xs, self.noise, gens) if noisy else xs), y, None  # type: ignore[misc]

    @torch.no_grad()
    def _mean_over(self, data: Blocks, alpha: float | Tensor, what: str) -> Tensor:
        """Per-active-seed mean of the task (or rule) loss over the blocks of ``data`` at
        ``alpha`` (one value, or one per active seed), in eval mode; with weights the
        weighted mean sum(w l) / sum(w).

        ``what``: "task", "rule", or "reference" (rule loss on the reference response of
        :mod:`deepctrl.core.scale`). Under DDP every rank draws the same perturbations,
        evaluates its shard of each block and the sums are all-reduced.
        """
        S = self.stack.size
        total = torch.zeros(S, device=self.device, dtype=torch.float64)
        n: int | float = 0
        a = alpha.to(self.device) if isinstance(alpha, Tensor) else self._alphas(alpha)
        rule = self.rule if what != "task" else None
        with in_mode(self.stack.template, False):
            for xs, y, w in data:
                m = y.shape[0]
                perturbed = self._perturb(xs, self.streams.eval) if rule is not None else []
                lo, hi = self.world.shard(0, m)
                ys = expand_seeds(y[lo:hi], S)
                ws = None if w is None else expand_seeds(w[lo:hi], S)
                part = slice(lo, hi)
                perturbed = [None if p is None else seed_rows(p, part) for p in perturbed]
                total += block_sums(lambda z: self.stack(z, a), rule, self.loss_fn,
                                    seed_rows(xs, part), ys,
                                    perturbed, what, self.scales, self.exact, ws)
                n += m if w is None else float(w.double().sum())
        return (self.world.all_reduce_sum(total) / n).float()

    def _scales(self) -> tuple[Scales, Tensor]:
        if not is_loader(self.train_data):
            X, y = self.train_data
            return data_scales(X, y, self.train_weights)
        acc = RunningScales()
        for x, y in blocks(self.train_data, max(self.batch_size, 4096), self.device,
                           self.dtype, "train"):
            acc.add(x, y)  # type: ignore[arg-type]
        return acc.result()

    def _train_blocks(self) -> Blocks:
        if is_loader(self.train_data):
            return self._loader_blocks(self.train_data, noisy=False)
        X, y = self.train_data
        return self._tensor_blocks(X, y, self.train_weights)

    def estimate_losses(self, reference: bool = False) -> tuple[Tensor, Tensor]:
        """Per-seed (L_rule at alpha 1, L_task at alpha 0) over the training set (weighted
        means with sample weights)."""
        if reference:
            self.scales = self._scales()
        rule_loss = self._mean_over(self._train_blocks(), 1.0,
                                    "reference" if reference else "rule")
        task_loss = self._mean_over(self._train_blocks(), 0.0, "task")
        return rule_loss.cpu(), task_loss.cpu()

    def validation_loss(self) -> Tensor:
        """Per-active-seed task loss over the validation set at the method's validation
        alpha (the weighted mean with sample weights)."""
        if is_loader(self.val_data):
            data = self._loader_blocks(self.val_data, noisy=self.noise > 0)
        elif self.Xv_noisy is not None:
            data = self._tensor_blocks(self.Xv_noisy, self.val_data[1], self.val_weights)
        else:
            Xv, yv = self.val_data
            data = self._tensor_blocks(Xv, yv, self.val_weights)
        return self._mean_over(data, self.method.val_alphas(self.state), "task")

    # -- training -------------------------------------------------------------------------
    def _perturb(self, xs: Inputs, gens: list[torch.Generator]) -> list[Inputs | None]:
        """Per-leaf perturbed copies of xs (S, n, ...), each seed with its own generator."""
        per_seed = [perturb_all(self.rule, seed_of(xs, i), g)  # type: ignore[arg-type]
                    for i, g in enumerate(gens)]
        return [None if parts[0] is None else stack(parts)
                for parts in zip(*per_seed, strict=True)]

    def batch_terms(self, x: Inputs, y: Tensor, perturbed: list[Inputs | None], alpha: Tensor,
                    n_global: int, weight: Tensor | None = None) -> Terms:
        """Per-seed terms of one (S, batch) slice; sums over the local rows (times their
        ``weight`` (S, batch) if given) / ``n_global``."""
        rule = self.rule if self.use_rule else None
        y_hat, y_p = forward_all(lambda z: self.stack(z, alpha), x,
                                 perturbed if rule is not None else [], dim=1)
        if not self.checked:
            check_outputs(y_hat[0].detach(), y[0], self.task_loss)
            self.checked = True
        terms, _ = compute_terms(rule, self.loss_fn, x, y, y_hat, perturbed, y_p, alpha,
                                 n_global, self.need_violations, self.exact, weight)
        return terms

    def _compile(self, alpha: Tensor) -> CompiledStep | None:
        if self.stack.path != "lowered":
            info("compile: only MLP-made models (batched matrix products) are compiled; "
                 "this one trains eagerly")
            return None
        if self.method.coefficients(alpha.to(self.dtype), self.state) is None:
            info(f"compile: {self.method.name} is not a linear method (no coefficients); "
                 "the training step runs eagerly")
            return None
        if self.exact and self.world.size > 1:
            info("compile: exact_sums under torchrun sums float64 gradients over the ranks, "
                 "which the compiled step does not; the training step runs eagerly")
            return None
        n = self.stack.size
        info(f"compile: the training step of {n} seed{'s' * (n != 1)} is compiled on the "
             "second batch (torch.compile; tens of seconds on a CPU, once)")
        return CompiledStep(self.stack, self.rule if self.use_rule else None, self.loss_fn,
                            self.need_violations, self.exact)

    def _compiled_step(self, x: Inputs, y: Tensor, perturbed: list[Inputs | None],
                       alpha: Tensor, b_global: int,
                       weight: Tensor | None) -> tuple[Tensor, Terms] | None:
        """The compiled step's loss and terms, the weights updated; None (and eager from now
        on) if the step cannot be compiled (not traceable as one graph, or no working C++
        compiler for inductor)."""
        assert self.compiled is not None
        a = alpha.to(self.dtype)
        linear = self.method.coefficients(a, self.state)
        assert linear is not None  # checked before compiling
        coefs = linear.as_tensors(a, self.rule_leaves)
        try:
            loss, t, grads = self.compiled(x, y, perturbed, alpha, coefs, b_global, weight)
        except compile_errors() as exc:
            reason = str(exc).strip().splitlines()[0][:160]
            info(f"compile: the training step could not be compiled ({reason}); "
                 "it runs eagerly")
            self.compiled = None
            return None
        if self.world.size > 1:
            self.compiled.write_grads(grads)
            self.world.all_reduce_(self.stack.flat_grad)
            self.opt.step()
        else:
            self.opt.step_views(self.compiled.names, grads)
        return loss, t

    def _eager_step(self, x: Inputs, y: Tensor, perturbed: list[Inputs | None],
                    alpha: Tensor, b_global: int, weight: Tensor | None) -> tuple[Tensor, Terms]:
        t = self.batch_terms(x, y, perturbed, alpha, b_global, weight)
        loss = self.method.objective(t, self.state)
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

    def _step(self, x: Inputs, y: Tensor, perturbed: list[Inputs | None], alpha: Tensor,
              b_global: int, weight: Tensor | None = None) -> Tensor:
        """One optimizer step of every active seed on its (local shard of the) batch, rows
        weighted by ``weight`` (S, rows) if given."""
        done = (self._compiled_step(x, y, perturbed, alpha, b_global, weight)
                if self.compiled else None)
        loss, t = done or self._eager_step(x, y, perturbed, alpha, b_global, weight)
        if self.need_violations:
            t = t._replace(violations=self.world.all_reduce_sum(t.violations.detach()))
        self.method.after_step(t, self.state)
        return loss.detach() * b_global

    def _epoch_order(self, n: int) -> Tensor:
        if not self.shuffle:
            return torch.arange(n, device=self.device).expand(self.stack.size, n)
        return torch.stack([torch.randperm(n, generator=g, device=self.device)
                            for g in self.streams.shuffle])

    def train_epoch(self) -> Tensor:
        """One pass over the data for every active seed; per-seed mean training loss."""
        self.stack.template.train()
        if self.batches is not None:
            return self._train_epoch_loader()
        X, y = self.train_data
        w = self.train_weights
        n, B = y.shape[0], self.batch_size
        n_batches = -(-n // B)
        order = self._epoch_order(n)
        alphas = self.method.draw_alphas(n_batches, self.state).to(self.device)
        total = torch.zeros(self.stack.size, device=self.device)
        for c0 in range(0, n_batches, self.chunk):
            idx = order[:, c0 * B:(c0 + self.chunk) * B]
            xc, yc = rows(X, idx), y[idx]
            wc = None if w is None else w[idx]
            if self.noise > 0:
                xc = add_noise(xc, self.noise, self.streams.noise)
            pc = self._perturb(xc, self.streams.perturb) if self.use_rule else []
            for start in range(0, idx.shape[1], B):
                sl = slice(*self.world.shard(start, min(start + B, idx.shape[1])))
                b_global = min(start + B, idx.shape[1]) - start
                total += self._step(seed_rows(xc, sl), yc[:, sl],
                                    [None if p is None else seed_rows(p, sl) for p in pc],
                                    alphas[:, c0 + start // B], b_global,
                                    None if wc is None else wc[:, sl])
        return self.world.all_reduce_sum(total) / n

    def _train_epoch_loader(self) -> Tensor:
        assert self.batches is not None
        known = self.batches.has_len()
        alphas = (self.method.draw_alphas(len(self.batches), self.state).to(self.device)
                  if known else None)
        total = torch.zeros(self.stack.size, device=self.device)
        n = 0
        for j, (xb, yb) in enumerate(self.batches.epoch(self.stack.size)):
            if self.noise > 0:
                xb = add_noise(xb, self.noise, self.streams.noise)
            pb = self._perturb(xb, self.streams.perturb) if self.use_rule else []
            b = yb.shape[1]
            sl = slice(*self.world.shard(0, b))
            a = alphas[:, j] if alphas is not None else \
                self.method.draw_alphas(1, self.state).to(self.device)[:, 0]
            total += self._step(seed_rows(xb, sl), yb[:, sl],
                                [None if p is None else seed_rows(p, sl) for p in pb], a, b)
            n += b
        return self.world.all_reduce_sum(total) / max(n, 1)

    def drop(self, keep: list[bool]) -> None:
        mask = torch.tensor(keep, device=self.device)
        self.opt.keep(mask)
        for j, k in enumerate(keep):
            if not k:
                self.stopped[self.active[j]] = self.state.select(_only(j, len(keep)))
        self.state = self.state.select(keep)
        self.streams.keep(keep)
        if self.batches is not None:
            self.batches.keep(keep)
        if self.Xv_noisy is not None:
            self.Xv_noisy = [x for x, k in zip(self.Xv_noisy, keep, strict=True) if k]
        self.active = [g for g, k in zip(self.active, keep, strict=True) if k]

    def method_state(self) -> SeedState:
        """The method's state of every seed in ``seeds`` order: as it was when the seed
        stopped, or as it is now."""
        if not self.stopped:
            return self.state
        states = dict(self.stopped)
        for j, g in enumerate(self.active):
            states[g] = self.state.select(_only(j, len(self.active)))
        return SeedState.join([states[g] for g in range(len(self.seeds))])

    def run(self, max_epochs: int, patience: int, val_every: int, progress: bool, desc: str,
            lr_at: Callable[[int], float] | None = None, callbacks: Sequence[Callback] = (),
            ) -> tuple[list[dict[str, list[float]]], list[int], list[int], list[float]]:
        """Train until every seed stopped, ``max_epochs`` or a callback asks to stop; the
        models get their best weights (or their last, without validation data) and eval
        mode. ``lr_at(epoch)`` sets each epoch's learning rate (default: the one Adam was
        made with).

        Returns (history, epochs, best epochs, best validation losses) per seed.
        """
        S = len(self.seeds)
        best_state = [self.stack.state_of(i) for i in range(S)]
        best = [float("inf")] * S
        wait, epochs, best_epochs = [0] * S, [0] * S, [0] * S
        history: list[dict[str, list[float]]] = [
            {"train_loss": [], "val_epoch": [], "val_loss": []} for _ in range(S)]
        bar = progress_bar(max_epochs, desc, progress and self.world.is_main)
        for epoch in range(1, max_epochs + 1):
            if lr_at is not None:
                self.opt.set_lr(lr_at(epoch))
            for c in callbacks:
                c.on_epoch_start(epoch)
            started = time.perf_counter()
            train_loss = self.train_epoch().tolist()
            train_seconds = time.perf_counter() - started
            self.method.after_epoch(self.estimate_losses, self.state)
            trained = list(self.active)
            val_loss: list[float] | None = None
            for j, g in enumerate(self.active):
                history[g]["train_loss"].append(train_loss[j])
                epochs[g] = epoch
            keep = [True] * len(self.active)
            if self.val_data is not None and epoch % val_every == 0:
                val_loss = self.validation_loss().tolist()
                for j, g in enumerate(self.active):
                    history[g]["val_epoch"].append(epoch)
                    history[g]["val_loss"].append(val_loss[j])
                    if val_loss[j] < best[g]:
                        best[g], wait[g], best_epochs[g] = val_loss[j], 0, epoch
                        best_state[g] = self.stack.state_of(j)
                    else:
                        wait[g] += 1
                        keep[j] = wait[g] < patience
            bar.update(1)
            bar.set_postfix(seeds=len(self.active), best=f"{min(best):.4g}")
            end = EpochEnd(epoch, [self.seeds[g] for g in trained], train_loss, val_loss,
                           train_seconds, self.opt.lr)
            stop = [c.on_epoch_end(end) for c in callbacks]
            if not all(keep):
                self.drop(keep)
            if not self.active or any(stop):
                break
        bar.close()
        if self.val_data is None:
            best_state = [self.stack.state_of(j) for j in range(S)]
            best_epochs = list(epochs)
        for m, state in zip(self.models, best_state, strict=True):
            m.load_state_dict(state)
            m.eval()
        return history, epochs, best_epochs, best


def _only(index: int, n: int) -> list[bool]:
    """A mask of ``n`` entries marking ``index`` alone."""
    return [i == index for i in range(n)]
