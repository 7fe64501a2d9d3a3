"""What DeepCTRLRegressor and DeepCTRLClassifier share: their parameters, input checks,
the table read for `fit`, and `summary`, `save` and `load`; how the networks are sized and
trained with `deepctrl.fit` comes from `deepctrl.tabular.network_training`, evaluation over
the rule strength from `deepctrl.tabular.alpha_evaluation` and the choice of alpha from
`deepctrl.tabular.default_alpha`."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, ClassVar, cast

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted
from torch import Tensor
from typing_extensions import Self

from deepctrl.core.data import resolve_device
from deepctrl.core.methods import RHO_MODES
from deepctrl.core.metrics import PerSample
from deepctrl.engine.options import LR_SCHEDULES
from deepctrl.engine.progress import stage
from deepctrl.tabular import model_file
from deepctrl.tabular.alpha_choice import check_alpha
from deepctrl.tabular.default_alpha import AlphaSelection
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.fit_summary import summary_lines
from deepctrl.tabular.frames import checked_frame, refuse_lazy, row_weights, sample_weights
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.network_training import Labels, NetworkTraining
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
from deepctrl.tabular.recipe import RECIPES
from deepctrl.tabular.rule_checks import check_rule_classes, check_rule_columns, ruled_columns
from deepctrl.tabular.table_rules import resolve


def _is_fitted(name: str) -> bool:
    """Whether an attribute is fitted state (scikit-learn's convention: a trailing
    underscore)."""
    return name.endswith("_") and not name.startswith("__")


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


class DeepCTRLEstimator(OnnxExport, AlphaSelection, NetworkTraining, BaseEstimator):
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

    def _check_targets(self, y_metric: np.ndarray, weight: np.ndarray | None) -> None:
        """Warnings on the targets training keeps (rows of weight 0 left out), given their
        row weights (None for none): a regressor's target whose few far values set its
        scale."""

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
        self.sample_weighted_ = _weights_differ(given, weight)
        if weight is not None and (weight == 0).any():  # as if those rows were not there
            kept = np.flatnonzero(weight > 0)
            frame = frame.iloc[kept].reset_index(drop=True)
            y_train, y_metric, weight = y_train[kept], y_metric[kept], weight[kept]
        self._check_targets(y_metric, weight)
        if weight is not None:
            y_train = self._weigh_targets(y_train, y_metric, weight)
            if np.all(weight == weight[0]):
                weight = None  # the rows left weigh alike: trained as without weights
        self.encoder_ = TableEncoder.fit(frame, ruled_columns(self.rules, frame.columns))
        return frame, Labels(y_train, y_metric, weight)

    def _check_validation_outputs(self, outputs: Tensor, y_true: np.ndarray) -> None:
        """Warnings on the model's outputs for the rows that chose alpha, (alphas of
        ``ALPHA_GRID``, rows, outputs), and their targets; none by default."""

    def summary(self) -> str:
        """What the fit did, in a few lines: rows, inputs, imputed values, what each rule
        acts on, epochs, and the two alpha choices with their validation error and
        verification.

        Returns:
            The lines, joined by newlines.
        """
        check_is_fitted(self, "models_")
        return "\n".join(summary_lines(self))

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


def _weights_differ(given: np.ndarray | None, weight: np.ndarray | None) -> bool:
    """Whether `given` sample weights differ between the rows training keeps (those of
    positive `weight`); never when `weight` is None, which says the rows weigh alike in
    training (class weights may even out the sample weights).

    >>> _weights_differ(np.array([2.0, 0.0, 2.0]), np.array([2.0, 0.0, 2.0]))
    False
    >>> _weights_differ(np.array([1.0, 3.0]), None)
    False
    """
    if given is None or weight is None:
        return False
    kept = given[weight > 0]
    return bool(np.any(kept != kept[0]))
