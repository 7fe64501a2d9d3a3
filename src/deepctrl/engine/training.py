"""`fit`: train one model per seed, all seeds at once, with early stopping.

Examples:
    >>> import torch, deepctrl as dc
    >>> X = torch.randn(64, 3); y = X.sum(1, keepdim=True)
    >>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    >>> rule = dc.rules.Monotonic(0, "increasing")
    >>> result = dc.fit(model, rule, dc.methods.DeepCTRL(rho=1.0), train=(X, y), max_epochs=2)
    >>> result.epochs, result.path
    ([2], 'lowered')
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar, cast

import torch
from torch import nn

from deepctrl.core.methods import DeepCTRLMethod, Method
from deepctrl.core.metrics import PerSample
from deepctrl.core.rules.base import Rule
from deepctrl.engine.callbacks import Callback, EpochEnd
from deepctrl.engine.fit_run import fit_in_workers
from deepctrl.engine.options import Options
from deepctrl.engine.result import FitResult

ModelT = TypeVar("ModelT", bound=nn.Module)
"""The type of the model given to `fit`, which its result's models have."""
EpochFunction = Callback | Callable[[EpochEnd], Any]
OneOrMoreCallbacks = EpochFunction | Sequence[EpochFunction]
"""`fit`'s callbacks: one, or a list of them."""


def fit(
    model: ModelT,
    rule: Rule | None = None,
    method: Method | None = None,
    train: Any = None,
    val: Any = None,
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
    compile: bool = False,
    exact_sums: bool = False,
    lr_schedule: str = "constant",
    callbacks: OneOrMoreCallbacks = (),
    workers: int = 1,
    folds: Sequence[Any] | None = None,
) -> FitResult[ModelT]:
    """Train `model` with `method` (default DeepCTRL) under `rule`, one copy per seed.

    All seeds train at once as one stacked model (see `deepctrl.engine.ensemble` for the
    three ways it runs); each keeps its own init, batch order, alpha draws, perturbations,
    input noise, dropout masks, rho, early stopping and best weights. Adam with `lr`;
    `input_noise` adds fresh N(0, input_noise^2) noise to every floating-point input of
    every training batch (and, drawn once, to the validation inputs). Early stopping
    validates the task loss at `method.val_alpha` every `val_every` epochs and stops a
    seed after `patience` checks without improvement, restoring its best weights.
    Training runs in train mode; validation, the rho estimate and the returned models in
    eval mode. Under `torchrun` (WORLD_SIZE > 1) each rank trains on its shard of every
    batch (data parallel).

    `train` and `val`: `(X, y)` with X a tensor (array, DataFrame) or a dict of them
    (several inputs; integer tensors keep their dtype), or a `torch.utils.data.Dataset` of
    `(x, y)` pairs, or a `DataLoader` of such batches (read batch by batch: memory stays
    bounded by the batch). A Dataset is batched with `batch_size` and, with `shuffle`,
    each seed draws its own order; a DataLoader's batches are used as they come, by every
    seed.

    Sample weights: `(X, y, w)` with `w` 1-D, one finite weight >= 0 per row, not all
    zero (tensors only, not a Dataset or DataLoader; `w=None` is no weights). In training
    every row's task loss, rule loss and signed violations are multiplied by w_i / mean(w)
    before the sum over the batch (divided by the batch size as without weights), so
    integer weights act as repeated rows; the rho estimate and the validation loss are the
    weighted means sum(w l) / sum(w), and the data scales of `rho="auto"` are weighted
    likewise.

    `compile=True` compiles the whole training step (forward, rule, task loss, the method's
    objective and their backward) into one graph with `torch.compile`
    (`deepctrl.engine.compiled`), for MLP-made models and linear methods (every built-in
    one); others train eagerly, with one line saying why. On the pendulum an epoch is about
    2.6 times faster for one seed and 1.5 to 1.7 times for ten, after a compilation of a few
    seconds (inductor's disk cache warm) to tens of seconds; results agree with an eager run
    to float rounding.

    `lr_schedule="cosine"`: every epoch's learning rate follows half a cosine from `lr`
    down to `lr / 50` at `max_epochs`, a budget the run is meant to use up (early stopping
    still stops a seed that stops improving, and its best weights are restored).

    `exact_sums=True` sums every gradient over the rows of a batch in float64 and rounds it
    once (and the losses behind rho, validation and the dual multipliers likewise), so a step
    does not depend on how the batch's rows are split: under `torchrun` every seed then ends
    where one process ends (to about 1e-7 in float32, measured), where float32 sums would
    let training magnify a rounding difference into a few percent for an occasional seed
    (docs/core-api.md, "Devices and several processes"). MLP-made models only; an eager
    epoch takes about 1.5 times as long for one seed and 1.7 times for ten
    (benchmarks/exact_sums_cost.py).

    `folds` cross-fits in one stacked fit: one array of row indices of `train` per seed
    (equally many rows in each); seed i validates (early stopping) on the rows of
    `folds[i]` and trains on all the other rows, rows in no fold training every seed. Each
    seed then computes what a fit of that seed alone with `train` its training rows and
    `val` its fold computes (its rho and the data scales of `rho="auto"` over its own
    training rows, sample weights scaled to mean 1 over its own rows), to float rounding.
    `val` must be None, and `train` tensors.

    `callbacks` are called after every epoch with an
    [EpochEnd][deepctrl.engine.callbacks.EpochEnd] (the epoch, the seeds still training,
    their training and validation losses, the epoch's seconds and learning rate). A
    callback that returns True stops training after that epoch; every seed keeps its best
    weights. Under `torchrun` they run on every rank, with the same values.

    `workers=N` trains the seeds in N processes side by side, each a contiguous share of
    the seeds on one thread (`deepctrl.engine.workers`; on 2 cores about twice as fast
    as one process for small networks): the model, rule, method and data go to each
    process, so they must be picklable (module-level functions, not lambdas), and callbacks
    are refused. Each share computes what `fit` computes for those seeds alone; the result
    joins the shares in seed order ([FitResult.join][deepctrl.engine.result.FitResult.join]).

    Args:
        model: The network to train, copied once per seed: a
            [DeepCTRL][deepctrl.core.model.DeepCTRL] or any module (one whose `forward`
            takes no `alpha` is called without it).
        rule: What the model should respect; None only for methods without a rule
            (`TaskOnly`).
        method: The training objective; None is `dc.methods.DeepCTRL()` (prior
            Beta(0.1, 0.1), rho `"auto"`).
        train: The training data: `(X, y)`, `(X, y, w)`, a Dataset or a DataLoader (see
            above). Required.
        val: Validation data in the same forms, for early stopping; None trains every seed
            for `max_epochs` epochs and keeps its last weights.
        task_loss: `"mae"`, `"mse"`, `"bce"`, `"cross_entropy"`, `"poisson"` (outputs
            are log-rates of counts >= 0: the loss is half the Poisson deviance of
            exp(output)), or a function of `(y_hat, y)` returning one loss per sample,
            shape (batch,).
        batch_size: Rows per batch of tensors or a Dataset (a DataLoader keeps its own).
        lr: Adam's learning rate (the first epoch's under `lr_schedule="cosine"`).
        max_epochs: The most epochs a seed trains.
        patience: Validations without improvement after which a seed stops.
        val_every: Epochs between validations.
        seeds: One model per seed, distinct integers.
        progress: Show a progress bar.
        input_noise: Standard deviation of the noise added to the inputs; 0 adds none.
        shuffle: Give every seed its own order of the rows each epoch; False keeps the
            data's order.
        device: Where training runs (`"cpu"`, `"cuda"`, `"cuda:N"`, `"mps"`); None is the
            CPU.
        reinit: Re-initialise every copy from its seed; False starts every copy from
            `model`'s weights.
        chunk_batches: Batches gathered and perturbed at once (at most 16,384 rows per
            seed, and at most 16 MiB of a seed's inputs): more uses more memory and fewer,
            larger operations.
        desc: The progress bar's label; None is the method's name.
        compile: Compile the training step with `torch.compile` (see above).
        exact_sums: Sum gradients and losses over rows in float64 (see above).
        lr_schedule: `"constant"` (Adam at `lr` throughout, as the paper trains) or
            `"cosine"` (see above).
        callbacks: Functions of [EpochEnd][deepctrl.engine.callbacks.EpochEnd], or
            [Callback][deepctrl.engine.callbacks.Callback] objects (`on_epoch_start`,
            `on_epoch_end`).
        workers: Processes that train shares of the seeds side by side; 1 trains here.
            Workers are spawned: call `fit` under `if __name__ == "__main__":` in a script.
        folds: One array of validation row indices of `train` per seed, or None (see
            above).

    Returns:
        The trained models, one per seed, and how training went.

    Raises:
        ValueError: When `train` is missing, `method` needs a rule and `rule` is None, an
            option is out of range (`batch_size`, `patience`, `val_every` or `workers`
            below 1, `max_epochs` or `input_noise` below 0, an unknown `lr_schedule`), one
            of `progress`, `shuffle`, `reinit`, `compile` and `exact_sums` is not True or
            False (a NumPy bool counts), the seeds are empty or repeated, the model has no
            parameters, or `folds` are not one array of distinct row indices per seed, all
            of one size; with `workers > 1`, also when callbacks are given, under
            `torchrun`, or when the model, rule, method or data cannot be pickled. Also when
            the model cannot take the rows of `train` or `val` (one line naming them and the
            model's error).
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    method = method if method is not None else DeepCTRLMethod()
    options = Options(
        task_loss=task_loss,
        batch_size=batch_size,
        lr=lr,
        max_epochs=max_epochs,
        patience=patience,
        val_every=val_every,
        progress=progress,
        input_noise=input_noise,
        shuffle=shuffle,
        device=device,
        reinit=reinit,
        chunk_batches=chunk_batches,
        compile=compile,
        exact_sums=exact_sums,
        lr_schedule=lr_schedule,
        callbacks=callbacks,  # type: ignore[arg-type]  # Options makes them a tuple
        folds=folds,  # type: ignore[arg-type]
    )
    result = fit_in_workers(model, rule, [method], train, val, seeds, options, desc, workers)[0]
    return cast("FitResult[ModelT]", result)  # its models are copies of `model`


def fit_methods(
    model: ModelT,
    rule: Rule | None,
    methods: Sequence[Method],
    train: Any = None,
    val: Any = None,
    seeds: Sequence[int] = (0,),
    desc: str | None = None,
    workers: int = 1,
    **options: Any,
) -> list[FitResult[ModelT]]:
    """[fit][deepctrl.engine.training.fit] for several methods of the same network, trained
    as ONE stacked job.

    Every method gets every seed; the copies (methods x seeds) run as one vectorized model,
    which costs less than the methods one after another. Each copy computes what it
    computes in its own `fit` call with the same seed, to float rounding (batched
    products of different stack sizes may round differently). A method that re-measures its
    losses every epoch (`rho="epoch"`) measures them for every copy of the stack: train it
    on its own.

    Args:
        model: The network, copied once per method and seed.
        rule: What the models should respect; None only if no method uses a rule.
        methods: The training objectives, at least one.
        train: The training data, as for `fit` (sample weights included).
        val: Validation data for early stopping, as for `fit`.
        seeds: The seeds every method trains with.
        desc: The progress bar's label; None joins the methods' names.
        workers: Processes that train shares of the seeds side by side, as for `fit`.
        **options: `fit`'s other keyword arguments (`task_loss`, `batch_size`, `lr`,
            `max_epochs`, ...).

    Returns:
        One result per method, in the order of `methods`.

    Raises:
        ValueError: When `methods` is empty or `options` has a name `fit` does not take,
            and as `fit` raises.

    Examples:
        >>> import torch, deepctrl as dc
        >>> X = torch.randn(64, 3); y = X.sum(1, keepdim=True)
        >>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
        >>> rule = dc.rules.Monotonic(0, "increasing")
        >>> results = dc.fit_methods(model, rule, [dc.methods.DeepCTRL(rho=1.0),
        ...                          dc.methods.TaskOnly()], train=(X, y), max_epochs=2,
        ...                          seeds=[0, 1])
        >>> [(r.method.name, len(r.models)) for r in results]
        [('DeepCTRL', 2), ('TaskOnly', 2)]
    """
    if not methods:
        raise ValueError("fit_methods needs at least one method")
    members = list(methods)
    unknown = set(options) - set(Options.__dataclass_fields__)
    if unknown:
        raise ValueError(f"fit_methods got unknown options {sorted(unknown)}")
    results = fit_in_workers(
        model,
        rule,
        members,
        train,
        val,
        seeds,
        Options(**options),
        desc,
        workers,
    )
    return cast("list[FitResult[ModelT]]", results)
