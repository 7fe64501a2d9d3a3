"""The state of one :func:`deepctrl.fit` call: S seeds trained as one stacked model.

A fit is four steps a reader can name: :meth:`Trainer.check` (the outputs fit the targets,
before any training), :meth:`Trainer.calibrate` (the method's per-seed state, with rho
measured over the training data), :meth:`Trainer.run` (epochs until early stopping) and
:meth:`Trainer.method_state`. Its parts: the epochs' batches and optimizer steps
(:mod:`deepctrl.engine.epoch_training`), the per-seed random streams, noise and
perturbations (:mod:`deepctrl.engine.feed`), the losses over whole data sets for rho and
validation (:mod:`deepctrl.engine.data_losses`), early stopping
(:mod:`deepctrl.engine.early_stopping`), the stacked model and its Adam
(:mod:`deepctrl.engine.ensemble`) and the compiled step (:mod:`deepctrl.engine.compiled`).

Tensors may come with per-row sample weights: training multiplies every row's losses by
w_i / mean(w) (so integer weights act as repeated rows), the rho estimate and the
validation loss are weighted means sum(w l) / sum(w).

With folds (:mod:`deepctrl.engine.folds`) every seed draws its batches from its own
training rows and validates on its own fold.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import Tensor, nn
from torch.utils.data import DataLoader, IterableDataset

from deepctrl.core.calls import in_mode
from deepctrl.core.inputs import REFUSALS, Inputs, expand_seeds, refused_rows, rows
from deepctrl.core.losses import check_outputs
from deepctrl.core.method_checks import method_state
from deepctrl.core.method_state import SeedState
from deepctrl.core.methods import Method
from deepctrl.core.metrics import per_sample
from deepctrl.core.rules.base import Rule
from deepctrl.core.sources import LoaderBatches, blocks, is_loader
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine.callbacks import Callback, EpochEnd, per_copy_values
from deepctrl.engine.compiled import CompiledStep
from deepctrl.engine.data_losses import DataLosses
from deepctrl.engine.distributed import check_ranks_agree, join_world
from deepctrl.engine.early_stopping import EarlyStopping
from deepctrl.engine.ensemble import FlatAdam, Stack, load_copy
from deepctrl.engine.epoch_training import EpochTraining, chunk_rows
from deepctrl.engine.feed import Streams, mean_one
from deepctrl.engine.folds import SeedFolds
from deepctrl.engine.lowering import ExactSums
from deepctrl.engine.options import Options, scheduled_lr
from deepctrl.engine.progress import progress_bar

NAN_CAUSES = (
    "look for a task or rule loss that is NaN or infinite on some rows, or whose gradient "
    "is (a square root or log at 0, a division by 0), or lower lr"
)


class DivergenceWarning(RuntimeWarning):
    """`deepctrl.fit`'s warning that a seed's training loss went NaN or infinite, or that a
    seed reached no finite validation loss (the table estimators word their own)."""


History = list[dict[str, list[float]]]
"""Per seed: training loss per epoch, and the epochs and losses of its validations."""


class Trainer(EpochTraining):
    """Trains the seeds of one :func:`deepctrl.fit` call with ``options``: call
    :meth:`check`, :meth:`calibrate`, then :meth:`run`.

    ``copy_seeds``: the seed of every copy of the model in the stack (the fit's seeds, once
    per method). ``train``, ``val``: ``(X, y)`` tensors or a Dataset/DataLoader (``val`` may
    be None);
    ``train_weights``, ``val_weights``: per-row sample weights (n,) of tensor data, or None.
    ``folds``: every copy's training and validation rows of ``train`` (then ``val`` is None).
    """

    def __init__(
        self,
        models: list[nn.Module],
        rule: Rule | None,
        method: Method,
        train: Any,
        val: Any,
        options: Options,
        *,
        copy_seeds: list[int],
        device: torch.device,
        train_weights: Tensor | None = None,
        val_weights: Tensor | None = None,
        folds: SeedFolds | None = None,
    ) -> None:
        if (train_weights is not None and is_loader(train)) or (
            val_weights is not None and is_loader(val)
        ):
            raise ValueError(
                "sample weights are supported for tensors only, not for a Dataset or DataLoader"
            )
        self.rule, self.method, self.options = rule, method, options
        self.loss_fn, self.task_loss = per_sample(options.task_loss), options.task_loss
        self.batch_size, self.noise = options.batch_size, options.input_noise
        self.seeds = copy_seeds
        self.shuffle, self.device = options.shuffle, device
        self.chunk = max(1, min(options.chunk_batches, chunk_rows(train) // self.batch_size))
        self.dtype = next(models[0].parameters()).dtype
        self.folds = folds
        self.train_weights = mean_one(train_weights, device, self.dtype)
        if folds is not None:
            folds.weigh(train_weights, self.dtype)
        self.world = join_world(device)
        check_ranks_agree(
            self.world,
            copy_seeds,
            options,
            (train, train_weights),
            (val, val_weights),
            device,
            rule,
            method,
        )
        self.models = models
        self.exact = options.exact_sums
        reduce = self.world.all_reduce_ if self.world.size > 1 else None
        self.sums = ExactSums(reduce) if self.exact else None
        self.stack = Stack(models, copy_seeds, self.sums)
        self.world.broadcast_(self.stack.flat.detach())
        self.opt = FlatAdam(self.stack, lr=options.lr)
        self.streams = Streams(copy_seeds, device)
        self.active = list(range(len(copy_seeds)))
        self.use_rule = rule is not None and method.uses_rule
        self.need_violations = self.use_rule and method.needs_violations
        self.train_data, self.val_data = train, val
        self.batches = (
            LoaderBatches(train, self.batch_size, self.shuffle, copy_seeds, device, self.dtype)
            if is_loader(train)
            else None
        )
        self.losses = DataLosses(
            self.stack,
            rule,
            self.loss_fn,
            train,
            val,
            batch_size=self.batch_size,
            streams=self.streams,
            world=self.world,
            noise=self.noise,
            exact=self.exact,
            train_weights=self.train_weights,
            val_weights=mean_one(val_weights, device, self.dtype),
            folds=folds,
        )
        self.validates = val is not None or folds is not None
        self.checked = False
        self.rule_checked = False  # the rule's loss has a gradient (on the first batch)
        self.want_compile = options.compile
        self.compiled: CompiledStep | None = None
        self.rule_leaves = len(rule.leaves()) if self.need_violations else 1  # type: ignore[union-attr]
        self.state = SeedState(0)
        """The method's state of the seeds still training (sliced when seeds stop)."""
        self.stopped: dict[int, SeedState] = {}
        """The method's final state of every seed that stopped, by its index in ``seeds``."""

    def check(self) -> None:
        """Outputs that do not fit the targets fail here, before any training: their shapes
        on a few rows, the targets' values (labels, bce targets) on every row of tensors
        (data from a DataLoader are checked on the first training batch instead)."""
        if not is_loader(self.train_data):
            X, y = self.train_data
            x = rows(X, slice(0, 8))
        elif isinstance(self.train_data, DataLoader | IterableDataset):
            return
        else:
            x, y = next(blocks(self.train_data, 8, self.device, self.dtype, "train"))
        S = self.stack.size
        alphas = torch.full((S,), float(self.method.val_alpha), device=self.device)
        with torch.no_grad(), in_mode(self.stack.template, False):
            out = self._first_call(x, alphas)
            check_outputs(out[0], y[: len(out[0])], self.task_loss)  # shapes, as they ran
            check_outputs(out[0], y, self.task_loss)  # the values of every target
            if self.val_data is not None and not is_loader(self.val_data):
                Xv, yv = self.val_data
                xv = rows(Xv, slice(0, 8))
                try:
                    val_out = self.stack(expand_seeds(xv, S), alphas)
                except REFUSALS as exc:
                    raise refused_rows(xv, exc, "val") from exc
                try:  # the shapes on a few rows, the values (labels, bce targets) on all
                    check_outputs(val_out[0], yv, self.task_loss)
                except ValueError as exc:
                    raise ValueError(f"val: {exc}") from None
        self.checked = True

    def _first_call(self, x: Inputs, alphas: Tensor) -> Tensor:
        """The stack on the first training rows; a model that cannot take them (inputs of
        another width or dtype) fails with one line naming them."""
        try:
            return self.stack(expand_seeds(x, self.stack.size), alphas)
        except REFUSALS as exc:
            raise refused_rows(x, exc, "training") from exc

    def calibrate(self) -> None:
        """The method's state of every seed before the first batch (rho measured over the
        training data at the initial weights, where the method needs it)."""
        n_rules = len(self.rule.leaves()) if self.rule is not None else 0
        self.state = method_state(self.method, self.seeds, n_rules, self.losses.initial)

    def drop(self, keep: list[bool]) -> None:
        """Seeds marked False stop: their weights, Adam moments, streams and validation
        noise leave the stack, and their method state is kept as it is now."""
        mask = torch.tensor(keep, device=self.device)
        self.opt.keep(mask)
        for j, k in enumerate(keep):
            if not k:
                self.stopped[self.active[j]] = self.state.select(_only(j, len(keep)))
        self.state = self.state.select(keep)
        self.streams.keep(keep)
        if self.batches is not None:
            self.batches.keep(keep)
        self.losses.keep(keep)  # with folds, also the seeds' rows
        self.active = [g for g, k in zip(self.active, keep, strict=True) if k]

    def _never_finite(self, never: list[int], diverged: dict[int, int]) -> str:
        """The warning for the seeds (indices) ``never`` that reached no finite validation
        loss, with its cause where the training loss went non-finite (``diverged``)."""
        cause = {g: e for g, e in diverged.items() if g in never}
        why = (
            f"the training loss went NaN or infinite ({_at_epochs(cause, self.seeds)}): "
            f"{NAN_CAUSES}"
            if cause
            else "NaN or infinite outputs or data, or no validation rows"
        )
        return (
            f"seed(s) {[self.seeds[g] for g in never]} never reached a finite validation loss "
            f"({why}), so they keep their initial weights"
        )

    def method_state(self) -> SeedState:
        """The method's state of every seed in ``seeds`` order: as it was when the seed
        stopped, or as it is now."""
        if not self.stopped:
            return self.state
        states = dict(self.stopped)
        for j, g in enumerate(self.active):
            states[g] = self.state.select(_only(j, len(self.active)))
        return SeedState.join([states[g] for g in range(len(self.seeds))])

    def _validate(
        self, epoch: int, history: History, stopping: EarlyStopping
    ) -> tuple[list[float], list[bool]]:
        """Validate the seeds still training after ``epoch``: their losses, recorded in the
        history and by early stopping, and which of them go on."""
        val_loss = self.losses.validation(self.method.val_alphas(self.state)).tolist()
        for j, g in enumerate(self.active):
            history[g]["val_epoch"].append(epoch)
            history[g]["val_loss"].append(val_loss[j])
        return val_loss, stopping.update(epoch, self.active, val_loss, self.stack.state_of)

    def run(
        self, desc: str, callbacks: Sequence[Callback] = ()
    ) -> tuple[History, list[int], list[int], list[float]]:
        """Train until every seed stopped, ``max_epochs`` or a callback asks to stop; the
        models get their best weights (or their last, without validation data) and eval
        mode; each epoch's learning rate follows the options' schedule.

        Returns (history, epochs, best epochs, best validation losses) per seed.
        """
        if len(self.state) != len(self.active):
            raise RuntimeError("Trainer.run needs the method's state: call calibrate() first")
        o = self.options
        S = len(self.seeds)
        stopping = EarlyStopping(S, o.patience, self.stack.state_of)
        epochs = [0] * S
        history: History = [{"train_loss": [], "val_epoch": [], "val_loss": []} for _ in range(S)]
        diverged: dict[int, int] = {}  # seed index -> the first epoch of a non-finite loss
        bar = progress_bar(o.max_epochs, desc, o.progress and self.world.is_main)
        said: set[int] = set()  # callbacks warned about what they returned
        compiling = self.want_compile or self.compiled is not None
        if compiling:
            bar.set_postfix_str("compiling the training step")
        try:  # an interrupt or a callback's error takes the bar off the screen too
            for epoch in range(1, o.max_epochs + 1):
                self.opt.set_lr(scheduled_lr(o.lr_schedule, o.lr, epoch, o.max_epochs))
                for c in callbacks:
                    c.on_epoch_start(epoch)
                started = time.perf_counter()
                train_loss = self.train_epoch().tolist()
                train_seconds = time.perf_counter() - started
                self.method.after_epoch(self.losses.initial, self.state)
                trained = list(self.active)
                val_loss: list[float] | None = None
                for j, g in enumerate(self.active):
                    history[g]["train_loss"].append(train_loss[j])
                    epochs[g] = epoch
                    if not math.isfinite(train_loss[j]):
                        diverged.setdefault(g, epoch)
                keep = [True] * len(self.active)
                if self.validates and (epoch % o.val_every == 0 or epoch == o.max_epochs):
                    val_loss, keep = self._validate(epoch, history, stopping)
                if compiling and epoch == 1:
                    bar.reset()  # the rate and time left leave the compilation out
                bar.update(1)
                best = min(stopping.best)  # inf until a validation has run
                shown = {"best": f"{best:.4g}"} if math.isfinite(best) else {}
                bar.set_postfix(seeds=sum(keep), **shown)  # those that go on
                end = EpochEnd(
                    epoch,
                    [self.seeds[g] for g in trained],
                    train_loss,
                    val_loss,
                    train_seconds,
                    self.opt.lr,
                    per_copy_values(self.state) if callbacks else {},
                )
                stop = [_asks_to_stop(c, c.on_epoch_end(end), said) for c in callbacks]
                if not all(keep):
                    self.drop(keep)
                # a callback that stops one rank (a clock) stops them all: none is left waiting
                wants = torch.tensor([float(any(stop))], device=self.device)
                stopping_now = bool(self.world.all_reduce_sum(wants) > 0)
                if stopping_now and val_loss is None and self.validates:
                    self._validate(epoch, history, stopping)  # the epoch trained: judge it
                if not self.active or stopping_now:
                    break
        finally:
            bar.close()
        best_state, best_epochs = stopping.best_state, stopping.best_epochs
        never = [g for g in range(S) if self.validates and best_epochs[g] == 0]
        if never and o.max_epochs > 0:
            warnings.warn(
                self._never_finite(never, diverged),
                DivergenceWarning,
                stacklevel=outside_stacklevel(),
            )
        later = {g: e for g, e in diverged.items() if g not in never}
        if later and self.validates:
            warnings.warn(
                f"the training loss went NaN or infinite ({_at_epochs(later, self.seeds)}); "
                "those models keep the weights of their best validation epoch "
                f"({_best_at(later, best_epochs, self.seeds)}): {NAN_CAUSES}",
                DivergenceWarning,
                stacklevel=outside_stacklevel(),
            )
        if diverged and not self.validates:
            warnings.warn(
                f"the training loss went NaN or infinite ({_at_epochs(diverged, self.seeds)}) "
                "and those models keep the weights of the last epoch (NaN after a NaN "
                f"gradient): {NAN_CAUSES}",
                DivergenceWarning,
                stacklevel=outside_stacklevel(),
            )
        if not self.validates:
            best_state = [self.stack.state_of(j) for j in range(S)]
            best_epochs = list(epochs)
        for m, state in zip(self.models, best_state, strict=True):
            load_copy(m, state)
            m.eval()
        return history, epochs, best_epochs, stopping.best


def _asks_to_stop(callback: Callback, value: Any, said: set[int]) -> bool:
    """Whether a callback's return value stops training: True does; None and False go on,
    and so does anything else, with a warning once per callback (a logging function
    returning what it wrote must not end the run)."""
    if value is None or isinstance(value, bool | np.bool_):
        return bool(value)
    if id(callback) not in said:
        said.add(id(callback))
        warnings.warn(
            f"a callback returned {type(value).__name__} {value!r:.40}, not True, False or "
            "None: training goes on (return True to stop it)",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
    return False


def _best_at(diverged: dict[int, int], best_epochs: list[int], seeds: list[int]) -> str:
    """Each such seed's best validation epoch, in words."""
    return ", ".join(f"seed {seeds[g]}: epoch {best_epochs[g]}" for g in sorted(diverged))


def _at_epochs(diverged: dict[int, int], seeds: list[int]) -> str:
    """Which seed's loss went non-finite at which epoch, in words."""
    return ", ".join(f"seed {seeds[g]} at epoch {e}" for g, e in sorted(diverged.items()))


def _only(index: int, n: int) -> list[bool]:
    """A mask of ``n`` entries marking ``index`` alone."""
    return [i == index for i in range(n)]
