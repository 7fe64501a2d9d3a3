"""How a table estimator's networks train on its rows: the validation split or the folds,
the training recipe, the networks' size, `deepctrl.fit` and what the fit keeps (mixed into
`DeepCTRLEstimator`, which reads the table, checks the parameters and provides the
subclasses' hooks)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, NamedTuple, cast

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from deepctrl.core import methods, priors
from deepctrl.core.metrics import PerSample
from deepctrl.core.model import DeepCTRL
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine import training
from deepctrl.engine.progress import stage
from deepctrl.engine.result import FitResult
from deepctrl.engine.trainer import DivergenceWarning
from deepctrl.engine.workers import free_threads, single_thread, threads
from deepctrl.tabular.alpha_choice import ALPHA_GRID
from deepctrl.tabular.alpha_evaluation import AlphaEvaluation
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE
from deepctrl.tabular.date_columns import date_values
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.network import LOOKUP_WIDTH, build_network, network_spec
from deepctrl.tabular.recipe import Recipe, training_recipe
from deepctrl.tabular.rule_checks import check_expressions

DIVERGED_REMEDY = (
    "a lower learning_rate or rho (deepctrl fit --rho) may help, or a column or the target "
    "may hold values too large for float32 once scaled"
)
"""What to try when a network's training went NaN or infinite."""
FEW_VALIDATION_ROWS = 30
"""Below this many held-out rows the estimators warn that the default alpha, chosen on
them, says little about new rows."""


class Labels(NamedTuple):
    """The targets as the networks train on them, as the metrics read them, and the row
    weights (None without)."""

    train: np.ndarray
    metric: np.ndarray
    weight: np.ndarray | None


Data = tuple[Tensor, ...]
"""Encoded rows with their targets, and their weights if any: what `deepctrl.fit` trains on."""


class NetworkTraining(AlphaEvaluation):
    """The estimators' training: the rows split or cut into folds, the networks sized and
    trained with `deepctrl.fit`, and what their fit keeps."""

    rules: Any
    alpha: Any
    hidden_size: int | None
    latent_size: int | None
    beta: float
    rho: float | str
    batch_size: int | str
    learning_rate: float | str
    max_epochs: int | str
    patience: int | str
    lr_schedule: str
    validation_fraction: float
    validation: str
    n_seeds: int | str
    recipe: str
    verbose: bool
    device: str
    encoder_: TableEncoder

    if TYPE_CHECKING:  # provided by DeepCTRLEstimator

        def rule_outputs(self) -> Outputs: ...
        @property
        def _head(self) -> str: ...
        @property
        def _task_loss(self) -> str | PerSample: ...

    def _n_validation(self, n: int) -> int:
        """How many of `n` rows validate: none when fewer than 2 would; an error when fewer
        than 2 would be left to train on, a warning when fewer train than validate."""
        n_val = round(self.validation_fraction * n)
        if n_val < 2:
            return 0
        if n - n_val < 2:
            raise ValueError(
                f"validation_fraction={self.validation_fraction:g} leaves {n - n_val} of {n} "
                "rows to train on; lower it (--val-fraction on the command line)"
            )
        if n - n_val < n_val:
            warnings.warn(
                f"validation_fraction={self.validation_fraction:g} trains on {n - n_val} rows "
                f"and validates on {n_val}: fewer rows train than validate",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        return n_val

    def _split(
        self, n: int, y: np.ndarray, rng: np.random.RandomState
    ) -> tuple[np.ndarray, np.ndarray]:
        n_val = self._n_validation(n)
        order = rng.permutation(n)
        if not n_val:
            return order, order[:0]
        return order[n_val:], order[:n_val]

    def _folds(self, n: int, y: np.ndarray, k: int, rng: np.random.RandomState) -> list[np.ndarray]:
        """The rows of `k` folds of nearly equal size (classifiers: stratified)."""
        return [np.sort(f) for f in np.array_split(rng.permutation(n), k)]

    def _equal_folds(
        self, n: int, y: np.ndarray, k: int, rng: np.random.RandomState
    ) -> list[np.ndarray]:
        """`_folds` cut to the size of the smallest, so that the networks train in step: the
        fewer than `k` rows cut (drawn at random) train every network and validate none."""
        folds = self._folds(n, y, k, rng)
        size = min(len(f) for f in folds)
        return [f if len(f) == size else np.sort(rng.choice(f, size, replace=False)) for f in folds]

    def _warn_untrained(self, y_metric: np.ndarray, n_val: int) -> None:
        """With `validation="last"`: a warning for a class whose rows all lie in the last
        `n_val` (classifiers; none by default)."""

    def _recipe(self, n_train: int, n_seeds: Any) -> Recipe:
        return training_recipe(
            n_train,
            self.batch_size,
            self.learning_rate,
            self.max_epochs,
            self.patience,
            self.lr_schedule,
            n_seeds,
            self.recipe,
        )

    def _train(
        self,
        train: Data,
        val: Data | None,
        recipe: Recipe,
        seeds: range,
        desc: str = "",
        folds: list[np.ndarray] | None = None,
    ) -> FitResult:
        """`deepctrl.fit` of fresh networks (`network_`) on encoded rows with the recipe
        (cross-fitted with `folds`); `desc` follows the class name on the progress bar."""
        with (
            single_thread() if recipe.one_thread else threads(free_threads()),
            warnings.catch_warnings(),
        ):
            warnings.simplefilter("ignore", DivergenceWarning)  # `_keep` words its own
            return training.fit(
                build_network(self.network_),
                self.rule_,
                self._training_method(),
                train=train,
                val=val,
                task_loss=self._task_loss,
                batch_size=recipe.batch_size,
                lr=recipe.learning_rate,
                max_epochs=recipe.max_epochs,
                patience=recipe.patience,
                lr_schedule=recipe.lr_schedule,
                seeds=seeds,
                progress=bool(self.verbose),
                desc=f"{type(self).__name__}{desc}",
                device=self.device,
                folds=folds,
            )

    def _keep(
        self, result: FitResult, recipe: Recipe, n_train: int, n_val: int, cross: bool = False
    ) -> None:
        """The fitted networks and what their fit reports. A network that did not train
        (no finite validation loss, or weights gone NaN without validation rows) would
        predict from its initial weights or not at all: it is left out with a warning, and
        its absence is an error when every network failed or, cross-fitted (``cross``), when
        its fold would have no network to predict it."""
        trained = [
            epoch > 0 if n_val else all(bool(p.isfinite().all()) for p in m.parameters())
            for m, epoch in zip(result.models, result.best_epochs, strict=True)
        ]
        diverged = [any(not math.isfinite(v) for v in h["train_loss"]) for h in result.history]
        failed = [i for i, ok in enumerate(trained) if not ok]
        why = (
            "their training loss went NaN or infinite"
            if failed and all(diverged[i] for i in failed)
            else "NaN or infinite outputs"
        )
        if len(failed) == len(trained) or (cross and failed):
            which = (
                "no network" if len(failed) == len(trained) else f"the networks of folds {failed}"
            )
            raise ValueError(f"{which} trained ({why}): {DIVERGED_REMEDY}")
        if failed:
            warnings.warn(
                f"{len(failed)} of {len(trained)} networks did not train ({why}) and are left "
                f"out: the model averages the other {len(trained) - len(failed)}; "
                f"{DIVERGED_REMEDY}",
                RuntimeWarning,
                stacklevel=outside_stacklevel(),
            )
        later = sum(d and ok for d, ok in zip(diverged, trained, strict=True))
        if later and n_val:
            warnings.warn(
                f"the training loss of {later} of {len(trained)} networks went NaN or infinite; "
                f"they keep the weights of their best validation epoch; {DIVERGED_REMEDY}",
                RuntimeWarning,
                stacklevel=outside_stacklevel(),
            )
        kept = [i for i, ok in enumerate(trained) if ok]
        self.models_ = [cast(DeepCTRL, result.models[i].cpu().eval()) for i in kept]
        rho = [float(r) for r in result.state["rho"]] if "rho" in result.state else []
        self.rho_ = [rho[i] for i in kept] if rho else []
        self.n_epochs_ = max(result.epochs)
        self.best_epochs_ = [result.best_epochs[i] for i in kept]
        self.batch_size_ = recipe.batch_size
        self.recipe_ = recipe
        self.n_train_, self.n_validation_ = n_train, n_val

    def _fit_holdout(
        self,
        frame: pd.DataFrame,
        labels: Labels,
        rng: np.random.RandomState,
        outputs: list[tuple[Tensor, np.ndarray]],
    ) -> None:
        """All networks on the same training rows, stopped and alpha chosen on the held-out
        `validation_fraction` of the rows (their outputs go to `outputs`)."""
        y_train, y_metric, weight = labels
        if self.validation == "last":  # rows in time order: validate on the latest
            n_val = self._n_validation(len(frame))
            train_idx, val_idx = (
                np.arange(len(frame) - n_val),
                np.arange(len(frame) - n_val, len(frame)),
            )
            self._warn_untrained(y_metric, n_val)
            _warn_unsorted_dates(frame, self.encoder_, n_val)
        else:
            train_idx, val_idx = self._split(len(frame), y_train, rng)
        chosen = isinstance(self.alpha, str)  # "auto" or "min_error": not a fixed alpha
        if self.rule_ is not None and chosen and len(val_idx) < FEW_VALIDATION_ROWS:
            where = f"only {len(val_idx)} validation rows" if len(val_idx) else "the training rows"
            # rows in time order keep the latest for validation, which cross-fitting would not
            folds = self._recipe(len(frame), self.n_seeds).n_seeds  # one fold per network
            remedy = (
                "a larger validation_fraction (--val-fraction) holds out more of the latest rows"
                if self.validation == "last"
                else "cross-fitting chooses it on every row (validation='cross_fit', or "
                "deepctrl fit --cross-fit)"
                if len(frame) >= 2 * max(folds, 2)
                else f"with {len(frame)} rows there are too few for cross-fitting's "
                f"{max(folds, 2)} folds of 2 rows or more: gather more rows, or fix alpha "
                "(alpha=1.0 keeps the rule; deepctrl predict --alpha 1)"
            )
            warnings.warn(
                f"the default alpha will be chosen on {where}, so how well it keeps the rule "
                f"on new rows is uncertain; {remedy}",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
        recipe = self._recipe(len(train_idx), self.n_seeds)
        seed = int(rng.randint(0, 2**31 - 1 - recipe.n_seeds))
        # one encoded table, training rows first: the two parts are views of it
        with stage("encoding the table", bool(self.verbose)):
            X_all = torch.from_numpy(
                self.encoder_.transform(frame, np.concatenate([train_idx, val_idx]))
            )
        self.network_ = self._network_spec(X_all.shape[1], recipe)
        order = np.concatenate([train_idx, val_idx])
        self._check_expressions(X_all, y_train[order], order)
        n = len(train_idx)
        train = _labelled(X_all[:n], y_train, weight, train_idx)
        val = _labelled(X_all[n:], y_train, weight, val_idx) if len(val_idx) else None
        result = self._train(train, val, recipe, range(seed, seed + recipe.n_seeds))
        self._keep(result, recipe, len(train_idx), len(val_idx))
        rows = val_idx if len(val_idx) else train_idx
        judged: list[int] = []
        with stage("choosing alpha on the validation rows", bool(self.verbose)):
            self.validation_sweep_ = self._sweep_encoded(
                (val or train)[0],
                y_metric[rows],
                ALPHA_GRID,
                None if weight is None else weight[rows],
                judged=judged,
                outputs=outputs,
            )
        self.judged_rows_ = (judged[0], len(rows))

    def _fit_cross(
        self,
        frame: pd.DataFrame,
        labels: Labels,
        rng: np.random.RandomState,
        outputs: list[tuple[Tensor, np.ndarray]],
    ) -> None:
        """Cross-fitting: network k trains on every fold but the k-th, which stops it early;
        alpha is chosen on the folds' rows, each predicted by the network that did not train
        on it (their outputs go to `outputs`). The networks train at once, in one stacked fit
        (`deepctrl.fit`'s `folds`)."""
        y_train, y_metric, weight = labels
        n = len(frame)
        k = self._recipe(n, self.n_seeds).n_seeds
        if k < 2:
            raise ValueError(f"validation='cross_fit' needs n_seeds >= 2 (one fold each), got {k}")
        if n < 2 * k:
            raise ValueError(
                f"validation='cross_fit' needs at least 2 rows per fold: {n} rows, {k} folds "
                f"(one per network: n_seeds={k}; the command line trains 5)"
            )
        folds = self._equal_folds(n, y_train, k, rng)
        recipe = self._recipe(n - len(folds[0]), k)
        seed = int(rng.randint(0, 2**31 - 1 - k))
        with stage("encoding the table", bool(self.verbose)):
            X_all = torch.from_numpy(self.encoder_.transform(frame))
        self.network_ = self._network_spec(X_all.shape[1], recipe)
        self._check_expressions(X_all, y_train, np.arange(n))
        train = _labelled(X_all, y_train, weight, np.arange(n))
        seeds = range(seed, seed + k)
        result = self._train(train, None, recipe, seeds, f" ({k} folds)", folds)
        self._keep(result, recipe, n, k * len(folds[0]), cross=True)
        judged: list[int] = []
        with stage("choosing alpha on the folds' rows", bool(self.verbose)):
            self.validation_sweep_ = self._sweep_encoded(
                X_all, y_metric, ALPHA_GRID, weight, folds=folds, judged=judged, outputs=outputs
            )
        self.judged_rows_ = (judged[0], sum(len(f) for f in folds))

    def _check_expressions(self, X: Tensor, y_train: np.ndarray, rows: np.ndarray) -> None:
        """Expression rules must have a value on every training row (see
        :func:`deepctrl.tabular.rule_checks.check_expressions`)."""
        outputs = self.rule_outputs()
        regression = outputs.kind == "regression"
        at = outputs.at_targets(torch.from_numpy(y_train)) if regression else None
        check_expressions(self.rules, self.encoder_, outputs, X, at, rows)

    def _network_spec(self, n_inputs: int, recipe: Recipe) -> dict[str, Any]:
        wide = [
            (c.start, c.start + c.width)
            for c in self.encoder_.columns
            if c.kind == CATEGORICAL and c.width >= LOOKUP_WIDTH
        ]
        return network_spec(
            n_inputs,
            self._n_model_outputs(),
            self._head,
            self.hidden_size,
            self.latent_size,
            recipe.max_hidden,
            one_hot=wide,
        )

    def _training_method(self) -> methods.Method:
        """The objective the networks train with: the paper's (Beta(beta, beta) prior and
        `rho`) when there is a rule, the task loss alone otherwise. Benchmarks override it
        to train the same networks with another objective."""
        if self.rule_ is None:
            return methods.TaskOnly()
        return methods.DeepCTRLMethod(prior=priors.Beta(self.beta, self.beta), rho=self.rho)

    def _n_model_outputs(self) -> int:
        return self.rule_outputs().n_model_outputs


def _warn_unsorted_dates(frame: pd.DataFrame, encoder: TableEncoder, n_val: int) -> None:
    """With `validation="last"`: a warning when a date column shows that the last `n_val`
    rows are not the latest (a table sorted by store, then date)."""
    if not n_val or n_val == len(frame):
        return
    for col in encoder.columns:
        if col.kind != DATE:
            continue
        dates = pd.Series(date_values(frame[col.name]))
        early, late = dates.iloc[:-n_val].max(), dates.iloc[-n_val:].min()
        if late < early:  # NaT (no date on one side) compares False
            warnings.warn(
                f"validation='last' holds out the last {n_val} rows as given, but by "
                f"{col.name!r} they are not the latest (they start before the training rows "
                f"end): sort the rows by {col.name!r} to validate on the latest",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )
            return


def _labelled(x: Tensor, y: np.ndarray, weight: np.ndarray | None, rows: np.ndarray) -> Data:
    """(x, y[rows]) or, with weights, (x, y[rows], weight[rows]): `x` holds the encoded
    `rows`."""
    targets = torch.from_numpy(y[rows])
    return (x, targets) if weight is None else (x, targets, torch.from_numpy(weight[rows]))
