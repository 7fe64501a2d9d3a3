"""``fit``: train one model per seed, all seeds at once, with early stopping.

>>> import torch, deepctrl as dc
>>> X = torch.randn(64, 3); y = X.sum(1, keepdim=True)
>>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
>>> rule = dc.rules.Monotonic(0, "increasing")
>>> result = dc.fit(model, rule, dc.methods.DeepCTRL(rho=1.0), train=(X, y), max_epochs=2)
>>> result.epochs
[2]
"""

from __future__ import annotations

import copy
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import Tensor, nn

from deepctrl import distributed as dist
from deepctrl.data import as_pair
from deepctrl.ensemble import FlatAdam, Stack
from deepctrl.methods import DeepCTRL, Method, Terms
from deepctrl.metrics import PerSample, per_sample
from deepctrl.progress import progress_bar
from deepctrl.rules.base import Rule, forward_all, make_context, perturb_all
from deepctrl.scale import data_scales, reference_rule_loss
from deepctrl.seeding import derive_seed


@dataclass
class FitResult:
    """What :func:`fit` returns: one trained model per seed (best weights restored)."""

    models: list[nn.Module]
    seeds: list[int]
    method: Method
    history: list[dict[str, list[float]]]
    epochs: list[int]
    best_epochs: list[int]
    seconds: float
    val_loss: list[float] = field(default_factory=list)

    @property
    def model(self) -> nn.Module:
        """The model of the first seed."""
        return self.models[0]


def init_models(model: nn.Module, seeds: Sequence[int], reinit: bool = True) -> list[nn.Module]:
    """One copy of ``model`` per seed, re-initialised from that seed (``reset_parameters``)."""
    out = []
    for seed in seeds:
        m = copy.deepcopy(model)
        if reinit:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(derive_seed(seed, "init"))
                for module in m.modules():
                    if hasattr(module, "reset_parameters"):
                        module.reset_parameters()
        out.append(m)
    return out


class _Streams:
    """Per-seed random generators for shuffling, input noise and perturbations."""

    def __init__(self, seeds: Sequence[int], device: torch.device) -> None:
        def gens(stream: str) -> list[torch.Generator]:
            return [torch.Generator(device).manual_seed(derive_seed(s, stream)) for s in seeds]

        self.shuffle, self.noise, self.perturb = gens("shuffle"), gens("noise"), gens("perturb")
        self.val, self.eval = gens("val"), gens("eval")

    def keep(self, mask: list[bool]) -> None:
        for name in ("shuffle", "noise", "perturb", "val", "eval"):
            setattr(self, name, [g for g, k in zip(getattr(self, name), mask, strict=True) if k])


def batch_terms(
    stack: Stack, rule: Rule | None, loss_fn: PerSample, method: Method,
    x: Tensor, y: Tensor, perturbed: list[Tensor | None], alpha: Tensor, n_global: int,
    need_violations: bool,
) -> Terms:
    """Per-seed task loss, rule loss and signed violations of one (S, batch) slice.

    Sums over the local samples divided by ``n_global`` (the global batch under DDP).
    """
    S, b = x.shape[0], x.shape[1]
    use_rule = rule is not None and method.uses_rule
    y_hat, y_p = forward_all(lambda z: stack(z, alpha), x, perturbed if use_rule else [], dim=1)
    task = loss_fn(y_hat.flatten(0, 1), y.flatten(0, 1)).view(S, b).sum(1) / n_global
    zero = torch.zeros(S, device=x.device, dtype=task.dtype)
    if not use_rule:
        return Terms(task, zero, zero[:, None], alpha)
    flat = [None if t is None else t.flatten(0, 1) for t in perturbed]
    flat_y = [None if t is None else t.flatten(0, 1) for t in y_p]
    ctx = make_context(rule, x.flatten(0, 1), y_hat.flatten(0, 1), flat, flat_y)
    rule_loss = rule.loss(ctx).view(S, b).sum(1) / n_global
    if need_violations:
        parts = ctx.parts or (ctx,)
        viol = torch.stack([leaf.violation(c).view(S, b).sum(1) / n_global
                            for leaf, c in zip(rule.leaves(), parts, strict=True)], dim=1)
    else:
        viol = zero[:, None]
    return Terms(task, rule_loss, viol, alpha)


def fit(
    model: nn.Module,
    rule: Rule | None = None,
    method: Method | None = None,
    train: tuple[Tensor, Tensor] | None = None,
    val: tuple[Tensor, Tensor] | None = None,
    task_loss: str | PerSample = "mae",
    batch_size: int = 64,
    lr: float = 1e-3,
    max_epochs: int = 1000,
    patience: int = 10,
    val_every: int = 1,
    seeds: Sequence[int] = (0,),
    progress: bool = False,
    input_noise: float = 0.0,
    shuffle: bool = True,
    device: str | torch.device | None = None,
    reinit: bool = True,
    chunk_batches: int = 64,
    desc: str | None = None,
) -> FitResult:
    """Train ``model`` with ``method`` (default DeepCTRL) under ``rule``, one copy per seed.

    All seeds train at once as one vectorized model (see :mod:`deepctrl.ensemble`); each
    keeps its own init, batch order, alpha draws, perturbations, input noise, rho,
    early stopping and best weights, so a seed trained in a group ends where it ends alone.
    Adam with ``lr``; ``input_noise`` adds fresh N(0, input_noise^2) noise to every training
    batch (and, drawn once, to the validation inputs). Early stopping validates the task
    loss at ``method.val_alpha`` every ``val_every`` epochs and stops a seed after
    ``patience`` checks without improvement, restoring its best weights. Under ``torchrun``
    (WORLD_SIZE > 1) each rank trains on its shard of every batch (data parallel).
    """
    if train is None:
        raise ValueError("fit needs train=(X, y)")
    method = copy.deepcopy(method) if method is not None else DeepCTRL()
    if method.uses_rule and rule is None:
        raise ValueError(f"{method.name} needs a rule")
    if batch_size < 1 or max_epochs < 0 or patience < 1 or val_every < 1:
        raise ValueError("batch_size, patience and val_every must be >= 1, max_epochs >= 0")
    if input_noise < 0:
        raise ValueError(f"input_noise must be >= 0, got {input_noise}")
    seeds = [int(s) for s in seeds]
    if not seeds or len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds must be a non-empty list of distinct integers, got {seeds}")
    device = torch.device(device) if device is not None else torch.device("cpu")
    X, y = as_pair(train, "train", device)
    Xv, yv = as_pair(val, "val", device) if val is not None else (None, None)
    trainer = _Trainer(model, rule, method, X, y, Xv, yv, per_sample(task_loss), batch_size, lr,
                       seeds, input_noise, shuffle, device, reinit, chunk_batches)
    return trainer.run(max_epochs, patience, val_every, progress, desc or method.name)


class _Trainer:
    """The state of one :func:`fit` call."""

    def __init__(self, model, rule, method, X, y, Xv, yv, loss_fn, batch_size, lr, seeds,
                 input_noise, shuffle, device, reinit, chunk_batches) -> None:
        self.rule, self.method, self.loss_fn = rule, method, loss_fn
        self.X, self.y, self.Xv, self.yv = X, y, Xv, yv
        self.batch_size, self.seeds, self.noise = batch_size, seeds, input_noise
        self.shuffle, self.device, self.chunk = shuffle, device, max(1, chunk_batches)
        self.world = dist.World.from_env(device)
        self.models = [m.to(device) for m in init_models(model, seeds, reinit)]
        self.stack = Stack(self.models)
        self.world.broadcast_(self.stack.flat.detach())
        self.opt = FlatAdam(self.stack, lr=lr)
        self.streams = _Streams(seeds, device)
        self.active = list(range(len(seeds)))
        self.use_rule = rule is not None and method.uses_rule
        self.need_violations = self.use_rule and method.needs_violations
        self.Xv_noisy = self._noisy_validation()
        method.setup(seeds, len(rule.leaves()) if rule is not None else 0, self.estimate_losses)

    def _noisy_validation(self) -> list[Tensor] | None:
        if self.Xv is None or self.noise == 0:
            return None
        return [self.Xv + self.noise * torch.randn(self.Xv.shape, generator=g, device=self.device)
                for g in self.streams.val]

    def _alphas(self, value: float) -> Tensor:
        return torch.full((self.stack.size,), float(value), device=self.device)

    @torch.no_grad()
    def _mean_over(self, X: list[Tensor] | Tensor, y: Tensor, alpha: float, what: str) -> Tensor:
        """Per-active-seed mean of the task (or rule) loss over (X, y) at ``alpha``.

        ``what``: "task", "rule", or "reference" (rule loss on the reference response of
        :mod:`deepctrl.scale`). Under DDP every rank draws the same perturbations,
        evaluates its shard of each block and the sums are all-reduced.
        """
        S, n = self.stack.size, y.shape[0]
        total = torch.zeros(S, device=self.device, dtype=torch.float64)
        step = max(self.batch_size, 4096)
        a = self._alphas(alpha)
        rule = self.rule if what != "task" else None
        for start in range(0, n, step):
            stop = min(start + step, n)
            if isinstance(X, list):
                xs = torch.stack([x[start:stop] for x in X])
            else:
                xs = X[start:stop].expand(S, *X[start:stop].shape)
            perturbed = self._perturb(xs, self.streams.eval) if rule is not None else []
            lo, hi = (k - start for k in self.world.shard(start, stop))
            ys = y[start + lo:start + hi].expand(S, *y[start + lo:start + hi].shape)
            perturbed = [None if p is None else p[:, lo:hi] for p in perturbed]
            if what == "reference":
                total += self._reference_sum(xs[:, lo:hi], perturbed, a)
                continue
            t = batch_terms(self.stack, rule, self.loss_fn, self.method, xs[:, lo:hi], ys,
                            perturbed, a, 1, False)
            total += (t.rule if rule is not None else t.task).double()
        return (self.world.all_reduce_sum(total) / n).float()

    def _reference_sum(self, xs: Tensor, perturbed: list[Tensor | None], a: Tensor) -> Tensor:
        """Per-seed sum over the block of :func:`deepctrl.scale.reference_rule_loss`."""
        S, b = xs.shape[:2]
        y_hat, y_p = forward_all(lambda z: self.stack(z, a), xs, perturbed, dim=1)
        ctx = make_context(self.rule, xs.flatten(0, 1), y_hat.flatten(0, 1),
                           [None if p is None else p.flatten(0, 1) for p in perturbed],
                           [None if t is None else t.flatten(0, 1) for t in y_p])
        ref = reference_rule_loss(self.rule, ctx, *self.scales)
        return ref.view(S, b).sum(1).double()

    def estimate_losses(self, reference: bool = False) -> tuple[Tensor, Tensor]:
        """Per-seed (L_rule at alpha 1, L_task at alpha 0) over the training set."""
        if reference:
            self.scales = data_scales(self.X, self.y)
        rule_loss = self._mean_over(self.X, self.y, 1.0, "reference" if reference else "rule")
        task_loss = self._mean_over(self.X, self.y, 0.0, "task")
        return rule_loss.cpu(), task_loss.cpu()

    def _perturb(self, xs: Tensor, gens: list[torch.Generator]) -> list[Tensor | None]:
        """Per-leaf perturbed copies of xs (S, n, ...), each seed with its own generator."""
        per_seed = [perturb_all(self.rule, xs[i], g) for i, g in enumerate(gens)]
        return [None if parts[0] is None else torch.stack(parts)
                for parts in zip(*per_seed, strict=True)]

    def _epoch_order(self) -> Tensor:
        n = self.X.shape[0]
        if not self.shuffle:
            return torch.arange(n, device=self.device).expand(self.stack.size, n)
        return torch.stack([torch.randperm(n, generator=g, device=self.device)
                            for g in self.streams.shuffle])

    def train_epoch(self) -> Tensor:
        """One pass over the data for every active seed; per-seed mean training loss."""
        n, B = self.X.shape[0], self.batch_size
        n_batches = -(-n // B)
        order = self._epoch_order()
        alphas = self.method.draw_alphas(n_batches).to(self.device)
        total = torch.zeros(self.stack.size, device=self.device)
        for c0 in range(0, n_batches, self.chunk):
            idx = order[:, c0 * B:(c0 + self.chunk) * B]
            xc, yc = self.X[idx], self.y[idx]
            if self.noise > 0:
                xc = xc + self.noise * torch.stack([
                    torch.randn(xc.shape[1:], generator=g, device=self.device)
                    for g in self.streams.noise])
            pc = self._perturb(xc, self.streams.perturb) if self.use_rule else []
            for start in range(0, idx.shape[1], B):
                lo, hi = self.world.shard(start, min(start + B, idx.shape[1]))
                sl = slice(lo, hi)
                b_global = min(start + B, idx.shape[1]) - start
                t = batch_terms(self.stack, self.rule, self.loss_fn, self.method, xc[:, sl],
                                yc[:, sl], [None if p is None else p[:, sl] for p in pc],
                                alphas[:, c0 + start // B], b_global, self.need_violations)
                loss = self.method.objective(t)
                self.stack.zero_grad()
                loss.sum().backward()
                self.world.all_reduce_(self.stack.flat_grad)
                self.opt.step()
                if self.need_violations:
                    t = t._replace(violations=self.world.all_reduce_sum(t.violations.detach()))
                self.method.after_step(t)
                total += loss.detach() * b_global
        return self.world.all_reduce_sum(total) / n

    def validation_loss(self) -> Tensor:
        X = self.Xv_noisy if self.Xv_noisy is not None else self.Xv
        return self._mean_over(X, self.yv, self.method.val_alpha, "task")

    def drop(self, keep: list[bool]) -> None:
        mask = torch.tensor(keep, device=self.device)
        self.opt.keep(mask)
        self.method.keep(mask.cpu())
        self.streams.keep(keep)
        if self.Xv_noisy is not None:
            self.Xv_noisy = [x for x, k in zip(self.Xv_noisy, keep, strict=True) if k]
        self.active = [g for g, k in zip(self.active, keep, strict=True) if k]

    def run(self, max_epochs: int, patience: int, val_every: int, progress: bool,
            desc: str) -> FitResult:
        S = len(self.seeds)
        best_state = [self.stack.state_of(i) for i in range(S)]
        best = [float("inf")] * S
        wait, epochs, best_epochs = [0] * S, [0] * S, [0] * S
        history: list[dict[str, list[float]]] = [
            {"train_loss": [], "val_epoch": [], "val_loss": []} for _ in range(S)]
        start = time.perf_counter()
        bar = progress_bar(max_epochs, desc, progress and self.world.is_main)
        for epoch in range(1, max_epochs + 1):
            train_loss = self.train_epoch().tolist()
            self.method.after_epoch(self.estimate_losses)
            for j, g in enumerate(self.active):
                history[g]["train_loss"].append(train_loss[j])
                epochs[g] = epoch
            keep = [True] * len(self.active)
            if self.Xv is not None and epoch % val_every == 0:
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
            if not all(keep):
                self.drop(keep)
            if not self.active:
                break
        bar.close()
        if self.Xv is None:
            best_state = [self.stack.state_of(j) for j in range(S)]
            best_epochs = list(epochs)
        for m, state in zip(self.models, best_state, strict=True):
            m.load_state_dict(state)
        return FitResult(self.models, self.seeds, self.method, history, epochs, best_epochs,
                         time.perf_counter() - start, best)
