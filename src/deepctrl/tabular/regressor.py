"""`DeepCTRLRegressor`: DeepCTRL for regression on a table, one or several numeric targets,
standardized (for `loss="poisson"` divided by their mean) for the networks."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np
import torch
from sklearn.base import RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.validation import check_array
from torch import Tensor

from deepctrl.core.metrics import score
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.estimator_base import PARAMETERS, DeepCTRLEstimator
from deepctrl.tabular.frames import named_table, refuse_lazy, target_names
from deepctrl.tabular.model_file import register
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.params import Allowed, fitted_param, one_of
from deepctrl.tabular.table_messages import shown
from deepctrl.tabular.targets import (
    CONSTANT_SPREAD,
    check_counts,
    check_target_size,
    constant_scale,
    target_named,
    target_spread,
    warn_far_targets,
)


@register
class DeepCTRLRegressor(RegressorMixin, DeepCTRLEstimator):
    """DeepCTRL for regression on a table (one or several numeric targets).

    The parameters are checked when `fit` runs, as in scikit-learn. `summary()` describes
    the fit in a few lines.

    Args:
        rules: A rule or a list of rules naming columns (see `deepctrl.tabular.table_rules`);
            None trains a plain network, which every alpha leaves as it is.
        alpha: The rule strength `predict` uses: `"auto"` the lowest-error alpha whose
            verification ratio on the validation rows reaches 0.99, `"min_error"` the
            lowest validation error, or a number. Set on a fitted estimator (`est.alpha =
            1.0` or `set_params`), it becomes `alpha_` at once, with no refit.
        loss: The training loss, `"mse"`, `"mae"` or `"poisson"`; it also chooses alpha.
            `"poisson"` is for counts and other targets >= 0 whose spread grows with
            their level: the networks output log-rates, predictions are never negative,
            and the error is the mean Poisson deviance (docs: "Counts: the Poisson loss"
            in tables-cli.md).
        hidden_size: The width of the hidden layers; None is 4 per encoded input, rounded
            up to a power of two from 32 to 128 (32 from 10,000 training rows on).
        latent_size: The width of each encoder's latent; None is a quarter of
            `hidden_size`, at least 8.
        beta: The alpha prior is Beta(beta, beta); 0.1 (the paper's) draws mostly near 0
            and 1.
        rho: `"auto"`, `"paper"`, `"epoch"` or a positive number; see
            [DeepCTRLMethod][deepctrl.methods.DeepCTRLMethod].
        batch_size: Rows per batch; `"auto"` chooses it from the number of training rows.
        learning_rate: Adam's learning rate; `"auto"` is 1e-3 below 10,000 training rows,
            else scaled with the batch.
        max_epochs: The most epochs; `"auto"` is 500 below 10,000 training rows, else a
            budget of about 2,000 optimizer steps.
        patience: Validations without improvement before a network stops; `"auto"` is 20
            below 10,000 training rows, else a third of the recipe's own epoch budget, at
            least 10 (a `max_epochs` you give does not change it).
        lr_schedule: `"constant"` or `"cosine"` (see [fit][deepctrl.engine.training.fit]);
            `"auto"` is constant below 10,000 training rows, else cosine.
        validation_fraction: The share of the rows held out for early stopping and the
            choice of alpha, in [0, 1); when it would hold out fewer than two rows, nothing
            is held out and alpha is chosen on the training rows, and when it would leave
            fewer than two to train on, `fit` raises a ValueError.
        validation: `"holdout"`: every network trains on the same rows and the
            `validation_fraction` held out (at random) stops them and chooses alpha.
            `"last"`: the same with the last `validation_fraction` of the rows held out, as
            given; for rows in time order the model is then stopped and alpha chosen on
            later rows than it trained on, as it will be used. `"cross_fit"`:
            the rows are split into `n_seeds` folds (stratified for a classifier),
            network k trains on all folds but the k-th, which stops it early, and alpha
            is chosen on the folds' rows, each predicted by the one network that did not
            train on it (`validation_fraction` is not used; the folds are cut to one size,
            so fewer than `n_seeds` rows train every network and validate none). Every
            row then trains most networks, and the default alpha keeps the rule better;
            the networks train at once in one stacked fit, as fast as `"holdout"`.
        n_seeds: Networks trained at once and averaged; `"auto"` is 5 below 10,000
            training rows, else 3.
        recipe: Which recipe sets the `"auto"` training parameters above: `"long"` (the
            values given for below 10,000 rows), `"step_budget"` (those from 10,000 rows
            on), or `"auto"`, by the number of training rows. Near the switch the step
            budget fits about ten times faster, the long recipe was the more accurate
            on small tables (docs: "Large tables" in tables-cli.md).
        random_state: Seeds the split, the networks and their training (an int, a
            `numpy.random.RandomState` or None, as in scikit-learn).
        verbose: Show a progress bar.
        device: Where training runs, e.g. `"cuda"`; the fitted networks are kept on the
            CPU.

    Attributes:
        encoder_: The preprocessing, from the table's columns to the network's inputs.
        rule_: The rules on the encoded input (None without rules).
        models_: The trained networks, on the CPU, in eval mode.
        n_features_in_: The number of columns of X.
        feature_names_in_: The column names (for data frames).
        output_names_: The targets' names.
        target_mean_: The targets' means, by which they are standardized; 0 for
            `loss="poisson"`, whose targets are divided by their mean only.
        target_scale_: The targets' standard deviations (for a constant target its
            magnitude, at most 1); for
            `loss="poisson"` their means (1 for a target that is all 0): the networks
            train on y / target_scale_ and output its log-rate f, and predictions are
            target_scale_ * exp(f), so a fresh network predicts the mean.
        target_1d_: Whether y was one-dimensional, so that `predict` returns shape (n,).
        n_epochs_: The most epochs a network trained.
        best_epochs_: The epoch whose weights each network kept: its lowest validation
            loss (its last epoch when no rows were held out).
        n_train_: The rows trained on; with `validation="cross_fit"`, every row (each
            network trains on all folds but one).
        n_validation_: The held-out rows that stopped the networks and chose alpha (0
            when none were held out); with `"cross_fit"`, the rows of the folds.
        batch_size_: The rows per batch of the fit (`batch_size`, or what `"auto"` chose).
        recipe_: Every training parameter of the fit, `"auto"` ones resolved (a
            [Recipe][deepctrl.tabular.recipe.Recipe]; absent on a model read from a file
            written before fits recorded it).
        network_: The networks' sizes, from which `models_` are built: a dict of
            `inputs`, `hidden`, `latent`, `outputs`, `head` (the output layer) and, with
            wide categorical columns, `one_hot` (their input ranges).
        rho_: Each network's rho.
        validation_sweep_: The metrics and verification ratio at every alpha on the
            validation rows, 0 to 1 by 0.05.
        judged_rows_: (rows the rule judged, rows) of those validation rows: a threshold
            rule judges only the rows whose perturbation crosses its threshold, and a row
            whose ruled feature is missing is not judged.
        sample_weighted_: Whether `sample_weight` differed between the rows kept, so that
            the validation errors and the choice of alpha are weighted by it.
        selected_alpha_: The rule-keeping choice on the validation rows (`alpha="auto"`).
        min_error_alpha_: The lowest-error choice on the validation rows.
        alpha_: The alpha `predict` uses by default: from `alpha`, or what `select_alpha`
            chose.
        fitted_params_: The parameters of the fit, which `summary`, `save` and the choice of
            alpha go by (parameters set since then, but `alpha`, wait for the next fit).
    """

    _parameters: ClassVar[dict[str, Allowed]] = {
        **PARAMETERS,
        "loss": one_of("mse", "mae", "poisson"),
    }

    def __init__(
        self,
        rules: Any = None,
        alpha: float | str = "auto",
        *,
        loss: str = "mse",
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
        super().__init__(
            rules,
            alpha,
            hidden_size=hidden_size,
            latent_size=latent_size,
            beta=beta,
            rho=rho,
            batch_size=batch_size,
            learning_rate=learning_rate,
            max_epochs=max_epochs,
            patience=patience,
            lr_schedule=lr_schedule,
            validation_fraction=validation_fraction,
            validation=validation,
            n_seeds=n_seeds,
            recipe=recipe,
            random_state=random_state,
            verbose=verbose,
            device=device,
        )
        self.loss = loss

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @property
    def _task_loss(self) -> str:
        return self.loss

    @property
    def primary_metric(self) -> str:  # type: ignore[override]
        """The error metric that chooses alpha: the training loss, `"mse"`, `"mae"` or
        `"poisson"` (the mean Poisson deviance), of the fit."""
        return str(fitted_param(self, "loss"))

    @property
    def _log_link(self) -> bool:
        """Whether the networks output log-rates (`loss="poisson"`, of the fit)."""
        return bool(fitted_param(self, "loss") == "poisson")

    def _values(self, y: Any, n: int) -> tuple[np.ndarray, bool]:
        """y as (n, n_targets) floats, and whether it was 1-D."""
        try:
            arr = check_array(named_table(y), ensure_2d=False, dtype="numeric", input_name="y")
        except ValueError as exc:
            if "convert" not in str(exc).lower():
                raise
            names = target_names(y) or ["y"]
            flat = np.asarray(y, dtype=object).ravel()
            text = next((v for v in flat if isinstance(v, str | bytes)), None)
            example = shown(text) if text is not None else str(exc).rpartition(": ")[2]
            raise ValueError(
                f"{target_named(names[0]) if len(names) == 1 else 'y'} holds text "
                f"({example}), but a regressor needs numbers: for "
                "classes, use DeepCTRLClassifier (on the command line, --task classification)"
            ) from None
        if arr.ndim > 2 or arr.shape[0] != n:
            raise ValueError(f"y must have one row per row of X ({n}), got shape {arr.shape}")
        values = arr.reshape(n, -1).astype(np.float64)
        check_target_size(values, _output_names(y, values.shape[1]))
        return values, arr.ndim == 1

    def _set_targets(self, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        values, self.target_1d_ = self._values(y, n)
        self.output_names_ = names = _output_names(y, values.shape[1])
        if self._log_link:
            check_counts(values, names)
        mean, std, unit = target_spread(values)
        for name, value, spread, size in zip(names, mean, std, unit, strict=True):
            if spread <= CONSTANT_SPREAD * size and n > 1:
                warnings.warn(
                    f"target {name!r} is constant ({value:g}): the model can only predict it",
                    UserWarning,
                    stacklevel=outside_stacklevel(),
                )
        return self._scaled(values, mean, std, unit), values

    def _check_targets(self, y_metric: np.ndarray, weight: np.ndarray | None) -> None:
        if not self._log_link:
            warn_far_targets(y_metric, self.output_names_, target_spread(y_metric, weight)[1])

    def _weigh_targets(
        self, y_train: np.ndarray, y_metric: np.ndarray, weight: np.ndarray
    ) -> np.ndarray:
        return self._scaled(y_metric, *target_spread(y_metric, weight))

    def _scaled(
        self, values: np.ndarray, mean: np.ndarray, std: np.ndarray, unit: np.ndarray
    ) -> np.ndarray:
        """The targets as the networks train on them, from their (weighted) mean, standard
        deviation and largest magnitude, which set `target_mean_` and `target_scale_`:
        standardized, or for the Poisson loss divided by their mean."""
        if self._log_link:
            self.target_mean_ = np.zeros_like(mean)
            self.target_scale_ = np.where(mean > 0, mean, 1.0)
        else:
            self.target_mean_ = mean
            self.target_scale_ = constant_scale(std, unit)
        return ((values - self.target_mean_) / self.target_scale_).astype(np.float32)

    def _metric_targets(self, y: Any, n: int) -> np.ndarray:
        values, _ = self._values(y, n)
        names = self.output_names_
        if values.shape[1] != len(names):
            raise ValueError(
                f"y has {values.shape[1]} target column(s), the model predicts {len(names)}"
            )
        given = target_names(y)
        matched = self._matched(values, names, given)
        if self._log_link:
            check_counts(matched, names)
        return matched

    @staticmethod
    def _matched(values: np.ndarray, names: list[str], given: list[str] | None) -> np.ndarray:
        """Target columns `values`, named `given`, in the order of the model's `names`."""
        if len(names) < 2 or given is None or given == names:
            return values
        if sorted(given) == sorted(names):  # the same targets in another order
            return values[:, [given.index(name) for name in names]]
        if names == [f"y{j}" for j in range(len(names))]:  # fitted on unnamed targets
            return values
        raise ValueError(f"y has the target columns {given}; the model predicts {names}")

    def rule_outputs(self) -> Outputs:
        return Outputs.regression(
            self.output_names_,
            self.target_mean_,
            self.target_scale_,
            link="log" if self._log_link else "identity",
        )

    def _combine(self, outputs: Tensor) -> Tensor:
        """The networks' mean output; of log-rates, the log of their mean rate."""
        if not self._log_link:
            return outputs.mean(dim=0)
        return torch.logsumexp(outputs, dim=0) - np.log(outputs.shape[0])

    def _raw(self, y_model: np.ndarray) -> np.ndarray:
        """Combined outputs in the target's units."""
        out = np.exp(y_model) if self._log_link else y_model
        return out * self.target_scale_ + self.target_mean_

    def _metrics(
        self, y_model: Tensor, y_true: Tensor, weight: Tensor | None = None
    ) -> dict[str, float]:
        """mae and mse of the predictions, and for the Poisson loss their mean deviance."""
        raw = torch.from_numpy(self._raw(y_model.numpy()))
        out = {name: float(score(name, raw, y_true, weight)) for name in ("mae", "mse")}
        if self._log_link:
            log_rate = y_model + torch.from_numpy(np.log(self.target_scale_))
            out["poisson"] = float(score("poisson", log_rate, y_true, weight))
        return out

    def predict(self, X: Any, alpha: Any = None) -> np.ndarray:
        """Predictions in the target's units.

        Args:
            X: The rows, with the columns the model was fitted on.
            alpha: The rule strength: a number, `"auto"`, `"min_error"`, an array with one
                number per row, or None for `alpha_`.

        Returns:
            The predictions, shape (n,) for a 1-D target, else (n, n_targets).

        Raises:
            ValueError: When X does not have the columns of the fit, or `alpha` is not
                valid.
        """
        raw = self._raw(self._model_outputs(X, alpha))
        return raw[:, 0] if self.target_1d_ else raw

    def score(self, X: Any, y: Any, sample_weight: Any = None) -> float:
        """The coefficient of determination R^2 at `alpha_`, as scikit-learn's regressors
        score (averaged over targets); target columns are matched to the model's by name.

        Args:
            X: The rows.
            y: Their targets.
            sample_weight: Row weights.

        Returns:
            R^2 (1 for perfect predictions).
        """
        refuse_lazy(y, "y")
        pred = self.predict(X).reshape(-1, len(self.output_names_))
        return float(
            r2_score(self._metric_targets(y, len(pred)), pred, sample_weight=sample_weight)
        )


def _output_names(y: Any, n_targets: int) -> list[str]:
    """The targets' names: the columns' own, else y (one target) or y0, y1, ..."""
    names = target_names(y)
    if names is None or len(names) != n_targets:
        names = ["y"] if n_targets == 1 else [f"y{j}" for j in range(n_targets)]
    return names
