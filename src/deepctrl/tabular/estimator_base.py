"""What DeepCTRLRegressor and DeepCTRLClassifier share: input checks, a network sized from
the data and training with `deepctrl.fit`; evaluation over the rule strength comes from
`deepctrl.tabular.alpha_evaluation`."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, cast

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from torch import Tensor
from typing_extensions import Self

from deepctrl.core import methods, priors
from deepctrl.core.data import resolve_device
from deepctrl.core.methods import RHO_MODES
from deepctrl.core.metrics import PerSample
from deepctrl.core.model import DeepCTRL
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine import training
from deepctrl.engine.options import LR_SCHEDULES
from deepctrl.engine.progress import stage
from deepctrl.engine.result import FitResult
from deepctrl.engine.workers import free_threads, single_thread, threads
from deepctrl.tabular import model_file
from deepctrl.tabular.alpha_choice import (
    ALPHA_GRID,
    check_alpha,
)
from deepctrl.tabular.alpha_evaluation import AlphaEvaluation
from deepctrl.tabular.column_kinds import CATEGORICAL, DATE
from deepctrl.tabular.date_columns import date_values
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.fit_summary import summary_lines
from deepctrl.tabular.frames import checked_frame, refuse_lazy, row_weights, sample_weights
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.network import LOOKUP_WIDTH, build_network, network_spec
from deepctrl.tabular.onnx_graph import OnnxExport
from deepctrl.tabular.params import (
    COUNT,
    COUNT_OR_AUTO,
    FRACTION,
    POSITIVE,
    POSITIVE_OR_AUTO,
    Allowed,
    check,
    fit_snapshot,
    number_or,
    one_of,
)
from deepctrl.tabular.recipe import RECIPES, Recipe, training_recipe
from deepctrl.tabular.rule_checks import (
    check_expressions,
    check_rule_classes,
    check_rule_columns,
    ruled_columns,
)
from deepctrl.tabular.table_rules import resolve

FEW_VALIDATION_ROWS = 30
"""Below this many held-out rows the estimators warn that the default alpha, chosen on
them, says little about new rows."""


def _is_fitted(name: str) -> bool:
    """Whether an attribute is fitted state (scikit-learn's convention: a trailing
    underscore)."""
    return name.endswith("_") and not name.startswith("__")


class Labels(NamedTuple):
    """The targets as the networks train on them, as the metrics read them, and the row
    weights (None without)."""

    train: np.ndarray
    metric: np.ndarray
    weight: np.ndarray | None


Data = tuple[Tensor, ...]
"""Encoded rows with their targets, and their weights if any: what `deepctrl.fit` trains on."""

PARAMETERS: dict[str, Allowed] = {
    "beta": POSITIVE,
    "rho": number_or(RHO_MODES),
    "max_epochs": COUNT_OR_AUTO,
    "patience": COUNT_OR_AUTO,
    "n_seeds": COUNT_OR_AUTO,
    "hidden_size": COUNT,
    "latent_size": COUNT,
    "batch_size": COUNT_OR_AUTO,
    "learning_rate": POSITIVE_OR_AUTO,
    "lr_schedule": one_of("auto", *LR_SCHEDULES),
    "validation_fraction": FRACTION,
    "validation": one_of("holdout", "last", "cross_fit"),
    "recipe": one_of(*RECIPES),
}
"""What each parameter the estimators share may be (`alpha` and `device` have their own
checks; subclasses add theirs)."""


class DeepCTRLEstimator(OnnxExport, AlphaEvaluation, BaseEstimator):
    """Base class; use `deepctrl.DeepCTRLRegressor` or `deepctrl.DeepCTRLClassifier`."""

    _parameters: ClassVar[dict[str, Allowed]] = PARAMETERS
    """What each parameter may be, checked by `fit` (declared, as scikit-learn's
    parameter constraints are)."""

    def __init__(
        self,
        rules: Any = None,
        alpha: float | str = "auto",
        *,
        hidden_size: int | None = None,
        latent_size: int | None = None,
        beta: float = 0.1,
        rho: float | str = "auto",
        batch_size: int | str = "auto",
        learning_rate: float | str = "auto",
        max_epochs: int | str = "auto",
        patience: int | str = "auto",
        lr_schedule: str = "auto",
        validation_fraction: float = 0.2,
        validation: str = "holdout",
        n_seeds: int | str = "auto",
        recipe: str = "auto",
        random_state: Any = None,
        verbose: bool = False,
        device: str = "cpu",
    ) -> None:
        self.rules = rules
        self.alpha = alpha
        self.hidden_size = hidden_size
        self.latent_size = latent_size
        self.beta = beta
        self.rho = rho
        self.batch_size = batch_size
        self.learning_rate = learning_rate
        self.max_epochs = max_epochs
        self.patience = patience
        self.lr_schedule = lr_schedule
        self.validation_fraction = validation_fraction
        self.validation = validation
        self.n_seeds = n_seeds
        self.recipe = recipe
        self.random_state = random_state
        self.verbose = verbose
        self.device = device

    # -- hooks for the subclasses ------------------------------------------------------
    def _set_targets(self, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Learn the target encoding; (training targets, targets for metrics)."""
        raise NotImplementedError

    def _metric_targets(self, y: Any, n: int) -> np.ndarray:
        raise NotImplementedError

    def rule_outputs(self) -> Outputs:
        """The model's outputs by name, as rules on the target see them.

        Returns:
            The outputs, by target name or class label.
        """
        raise NotImplementedError

    def _combine(self, outputs: Tensor) -> Tensor:
        """Average (seeds, ...) model outputs into one prediction."""
        return outputs.mean(dim=0)

    def _metrics(
        self, y_model: Tensor, y_true: Tensor, weight: Tensor | None = None
    ) -> dict[str, float]:
        """Error metrics of model outputs (float64) against targets, weighted by row if
        given (`deepctrl.core.metrics.score`)."""
        raise NotImplementedError

    def _class_weights(
        self, y_metric: np.ndarray, sample_weight: np.ndarray | None
    ) -> np.ndarray | None:
        """Per-row weights from `class_weight` (classifiers), with the classes counted on the
        rows of positive `sample_weight`; or None."""
        return None

    def _check_weights(self, y_metric: np.ndarray, weight: np.ndarray | None) -> None:
        """Warnings on the targets given the row weights, None for none (a classifier's
        class that weighs nothing, or has too few rows of positive weight)."""

    def _weigh_targets(
        self, y_train: np.ndarray, y_metric: np.ndarray, weight: np.ndarray
    ) -> np.ndarray:
        """The training targets again once row weights are known (a regressor scales its
        target by the weighted mean and standard deviation)."""
        return y_train

    @property
    def _head(self) -> str:
        return "identity"

    @property
    def _task_loss(self) -> str | PerSample:
        return "mse"

    primary_metric = "mse"
    """The error metric that chooses alpha (lowest on the validation rows)."""

    # -- checks --------------------------------------------------------------------------
    def _check_params(self) -> None:
        check_alpha(self.alpha)
        check(self.get_params(deep=False), self._parameters)
        resolve_device(self.device)

    def _frame(self, X: Any, reset: bool) -> pd.DataFrame:
        """X as a DataFrame with its column names (`frames.checked_frame`)."""
        return checked_frame(self, X, reset, None if reset else self.encoder_.names)

    @property
    def alpha(self) -> Any:
        """The rule strength `predict` uses by default (see the class's `alpha`). Set on a
        fitted estimator, by assignment or `set_params`, it is checked and becomes `alpha_`
        at once, with no refit."""
        return self._alpha

    @alpha.setter
    def alpha(self, value: Any) -> None:
        if hasattr(self, "models_"):  # fitted: predict follows now (checked before it is kept)
            self.alpha_ = self.resolve_alpha(value)
        self._alpha = value

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle, also an estimator pickled before `alpha` became a property (its
        `alpha` then stood in the instance's attributes)."""
        if "alpha" in state:
            state = {**state, "_alpha": state["alpha"]}
            del state["alpha"]
        super().__setstate__(state)

    def set_params(self, **params: Any) -> Self:
        """Set parameters, as in scikit-learn. On a fitted estimator a new `alpha` also
        becomes the alpha `predict` uses (`alpha_`), with no refit, as assigning
        `est.alpha` does; the other parameters take effect at the next `fit`.

        Args:
            **params: Parameter values by name.

        Returns:
            The estimator.

        Raises:
            ValueError: When `alpha` is not a valid alpha (on a fitted estimator); no
                parameter is set then.
        """
        if "alpha" in params and hasattr(self, "models_"):
            self.resolve_alpha(params["alpha"])  # checked before any parameter is set
        return super().set_params(**params)

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.input_tags.sparse = True
        tags.input_tags.categorical = True
        tags.input_tags.string = True
        return tags

    def _encode(self, X: Any) -> Tensor:
        check_is_fitted(self, "models_")
        return torch.from_numpy(self.encoder_.transform(self._frame(X, reset=False)))

    def resolve_alpha(self, alpha: float | str | None = None) -> float:
        """The rule strength used for `alpha`.

        Args:
            alpha: A number (used as given); `"auto"`, the alpha chosen on the validation
                rows at fit to keep the rule (`selected_alpha_`); `"min_error"`, the one with
                the lowest validation error (`min_error_alpha_`); None, the estimator's own
                `alpha_` (from its `alpha`, or what `select_alpha` chose).

        Returns:
            The alpha; 0 without rules.

        Raises:
            ValueError: When `alpha` is neither a finite number >= 0 nor one of the two names.
        """
        check_is_fitted(self, "models_")
        if self.rule_ is None:
            return 0.0
        if alpha is None:
            return float(self.alpha_)
        value = check_alpha(alpha)
        if value == "auto":
            return float(self.selected_alpha_)
        return float(self.min_error_alpha_) if value == "min_error" else float(value)

    # -- training ------------------------------------------------------------------------
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

    def fit(self, X: Any, y: Any, sample_weight: Any = None) -> Self:
        """Train on a table and choose alpha on its validation rows. A fit that raises or is
        interrupted (KeyboardInterrupt) leaves the estimator as it was before it.

        Args:
            X: The table: a pandas, polars or pyarrow data frame, a numpy array or a
                scipy.sparse matrix.
            y: The targets, one row per row of X.
            sample_weight: One weight >= 0 per row: it weighs the row's task and rule loss
                in training and its error in the validation metrics that choose alpha
                (an integer weight acts as repeated rows in expectation; minibatches and the
                validation split are drawn at random). Rows of weight 0 are left out as if
                absent, also from the columns' statistics (means, spreads, categories)
                that the encoding learns; the other rows count once in those statistics,
                whatever their weight (so do the rules' default perturbation sizes, a
                tenth of a column's spread), while the target's scaling is weighted.
                With `class_weight="balanced"` the classes are counted on the rows of
                positive weight. None weighs every row alike.

        Returns:
            The estimator itself, fitted.

        Raises:
            ValueError: When a parameter is out of range, `y` is None or does not fit X,
                the weights are not valid, or a rule names a column X does not have.
        """
        before = {k: v for k, v in vars(self).items() if _is_fitted(k)}
        for key in before:
            delattr(self, key)
        try:
            self.fitted_params_ = fit_snapshot(self.get_params(deep=False))
            return self._fit(X, y, sample_weight)
        except BaseException:
            for key in [k for k in vars(self) if _is_fitted(k)]:
                delattr(self, key)
            self.__dict__.update(before)
            raise

    def _fit(self, X: Any, y: Any, sample_weight: Any) -> Self:
        self._check_params()
        with stage("reading the table", bool(self.verbose)):
            frame, labels = self._prepared(X, y, sample_weight)
        self.rule_ = resolve(self.rules, self.encoder_, self.rule_outputs())
        check_rule_columns(self.rules, self.encoder_, frame)
        check_rule_classes(self.rules, self.rule_outputs())
        rng = check_random_state(self.random_state)
        outputs: list[tuple[Tensor, np.ndarray]] = []
        if self.validation == "cross_fit":
            self._fit_cross(frame, labels, rng, outputs)
        else:
            self._fit_holdout(frame, labels, rng, outputs)
        self.min_error_alpha_ = self._select(self.validation_sweep_, min_error=True)
        self.selected_alpha_ = self._select(self.validation_sweep_)
        self.alpha_ = self.resolve_alpha(self.alpha)
        self._check_validation_outputs(*outputs[0])
        return self

    def _prepared(self, X: Any, y: Any, sample_weight: Any) -> tuple[pd.DataFrame, Labels]:
        """The table and its targets and weights as training takes them (rows of weight 0
        left out), with the table's encoder fitted (`encoder_`)."""
        frame = self._frame(X, reset=True)
        if y is None:
            raise ValueError(
                f"{type(self).__name__} requires y to be passed, but the target y is None"
            )
        refuse_lazy(y, "y")
        y_train, y_metric = self._set_targets(y, len(frame))
        given = sample_weights(sample_weight, frame)
        weight = row_weights(given, self._class_weights(y_metric, given), frame)
        self._check_weights(y_metric, weight)
        if weight is not None and (weight == 0).any():  # as if those rows were not there
            kept = np.flatnonzero(weight > 0)
            frame = frame.iloc[kept].reset_index(drop=True)
            y_train, y_metric, weight = y_train[kept], y_metric[kept], weight[kept]
        if weight is not None:
            y_train = self._weigh_targets(y_train, y_metric, weight)
            if np.all(weight == weight[0]):
                weight = None  # the rows left weigh alike: trained as without weights
        self.encoder_ = TableEncoder.fit(frame, ruled_columns(self.rules, frame.columns))
        return frame, Labels(y_train, y_metric, weight)

    def _warn_untrained(self, y_metric: np.ndarray, n_val: int) -> None:
        """With `validation="last"`: a warning for a class whose rows all lie in the last
        `n_val` (classifiers; none by default)."""

    def _check_validation_outputs(self, outputs: Tensor, y_true: np.ndarray) -> None:
        """Warnings on the model's outputs for the rows that chose alpha, (alphas of
        ``ALPHA_GRID``, rows, outputs), and their targets; none by default."""

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
        with single_thread() if recipe.one_thread else threads(free_threads()):
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

    def _keep(self, result: FitResult, recipe: Recipe, n_train: int, n_val: int) -> None:
        """The fitted networks and what their fit reports; an error when none of them
        reached a finite validation loss (they would predict from their initial weights)."""
        if n_val and result.best_epochs and not any(result.best_epochs):
            raise ValueError(
                "no network reached a finite validation loss (NaN or infinite outputs): "
                "a column or the target may hold values too large for float32 once scaled"
            )
        self.models_ = [cast(DeepCTRL, m.cpu().eval()) for m in result.models]
        self.rho_ = [float(r) for r in result.state["rho"]] if "rho" in result.state else []
        self.n_epochs_ = max(result.epochs)
        self.best_epochs_ = list(result.best_epochs)
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
            warnings.warn(
                f"the default alpha will be chosen on {where}, so how well it keeps the rule "
                "on new rows is uncertain; cross-fitting chooses it on every row "
                "(validation='cross_fit', or deepctrl fit --cross-fit)",
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
                f"validation='cross_fit' needs at least 2 rows per fold: {n} rows, {k} folds"
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
        self._keep(result, recipe, n, k * len(folds[0]))
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

    def summary(self) -> str:
        """What the fit did, in a few lines: rows, inputs, imputed values, what each rule
        acts on, epochs, and the two alpha choices with their validation error and
        verification.

        Returns:
            The lines, joined by newlines.
        """
        check_is_fitted(self, "models_")
        return "\n".join(summary_lines(self))

    def _n_model_outputs(self) -> int:
        return self.rule_outputs().n_model_outputs

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the fitted model to one file: safetensors weights with the preprocessing,
        rules and architecture as JSON; the write is atomic.

        Args:
            path: The file to write; its folder must exist.

        Returns:
            The path written.

        Raises:
            sklearn.exceptions.NotFittedError: Before `fit`.
        """
        check_is_fitted(self, "models_")
        return model_file.save_estimator(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Read a model written by `save`; never unpickles.

        Args:
            path: The model file.

        Returns:
            The fitted estimator.

        Raises:
            ValueError: When the file cannot be read or holds another kind of model.
        """
        return cast(Self, model_file.load_estimator(path, cls))


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
