"""`DeepCTRLClassifier`: DeepCTRL for classification on a table, two or more classes, with
class weights, validation rows stratified by class and probabilities averaged over the
networks."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from scipy.special import expit
from sklearn.base import ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length
from torch import Tensor

from deepctrl.core.metrics import score
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.alpha_choice import ALPHA_GRID
from deepctrl.tabular.cell_values import category_key, float_text
from deepctrl.tabular.class_labels import (
    check_one_label_type,
    class_labels,
    one_spelling_per_class,
    stratified_folds,
    warn_rare_and_lookalike_classes,
)
from deepctrl.tabular.class_predictions import warn_unpredicted_classes
from deepctrl.tabular.estimator_base import DeepCTRLEstimator
from deepctrl.tabular.frames import target_names
from deepctrl.tabular.model_file import register
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.params import fitted_param
from deepctrl.tabular.table_messages import listed, shown
from deepctrl.tabular.targets import target_named

_EPS = float(np.finfo(np.float64).eps)
"""The smallest probability a log loss gives a row's class (2.2e-16, a loss of at most 36 per
row), as scikit-learn's ``log_loss`` clips float64 probabilities."""


def _logit_bce(logit: Tensor, y: Tensor) -> Tensor:
    """Per-sample binary cross entropy of a logit output."""
    return F.binary_cross_entropy_with_logits(logit, y.to(logit), reduction="none").mean(dim=1)


@register
class DeepCTRLClassifier(ClassifierMixin, DeepCTRLEstimator):
    """DeepCTRL for classification on a table (two or more classes).

    The parameters are those of [DeepCTRLRegressor][deepctrl.tabular.estimators.DeepCTRLRegressor]
    without `loss` (binary cross entropy, or cross entropy over a softmax for several
    classes), and `class_weight`. A rule's `output` is the class whose probability it
    constrains, by label (`output="late"`; with whole-number labels an integer is the label
    of that value, `2` naming `2` or `2.0`) or by index into `classes_`; without one, a rule
    acts on the probability of `classes_[1]` (of two classes) or `classes_[0]` (of more),
    which `summary()` states. The network outputs the logit (two classes) or the
    log-probabilities (several classes), so rules judge strict changes even where a
    probability rounds to 0 or 1.

    Args:
        rules: A rule or a list of rules naming columns (see `deepctrl.tabular.table_rules`);
            None trains a plain network, which every alpha leaves as it is.
        alpha: The rule strength `predict` uses: `"auto"` the lowest-error alpha whose
            verification ratio on the validation rows reaches 0.99, `"min_error"` the
            lowest validation error, or a number. Set on a fitted estimator (`est.alpha =
            1.0` or `set_params`), it becomes `alpha_` at once, with no refit.
        class_weight: None, `"balanced"` or a dict label -> weight, as in scikit-learn: it
            multiplies the rows' weights.
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
        classes_: The class labels, sorted.
        target_name_: The target's name.
        encoder_: The preprocessing, from the table's columns to the network's inputs.
        rule_: The rules on the encoded input (None without rules).
        models_: The trained networks, on the CPU, in eval mode.
        n_features_in_: The number of columns of X.
        feature_names_in_: The column names (for data frames).
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

    def __init__(
        self,
        rules: Any = None,
        alpha: float | str = "auto",
        *,
        class_weight: Any = None,
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
        self.class_weight = class_weight

    def _class_weights(
        self, y_metric: np.ndarray, sample_weight: np.ndarray | None
    ) -> np.ndarray | None:
        if self.class_weight is None:
            return None
        weight = self.class_weight
        if isinstance(weight, dict):  # labels -> indices of classes_, found as rules find them
            labels = self.classes_.tolist()
            by_text = {category_key(c): i for i, c in enumerate(labels)}
            unknown = [k for k in weight if k not in labels and category_key(k) not in by_text]
            if unknown:
                alike = [c for c in labels if str(c).casefold() == str(unknown[0]).casefold()]
                raise ValueError(
                    f"class_weight names {unknown[0]!r}, which is not a class "
                    f"(classes: {', '.join(map(str, self.classes_))})"
                    + (f"; did you mean {alike[0]!r}?" if alike else "")
                )
            weight = {
                labels.index(k) if k in labels else by_text[category_key(k)]: v
                for k, v in weight.items()
            }
        elif weight != "balanced":
            raise ValueError(f"class_weight must be None, 'balanced' or a dict, got {weight!r}")
        elif sample_weight is not None and (sample_weight > 0).any():  # weight 0: not counted
            present = sample_weight > 0
            out = np.zeros(len(y_metric))
            out[present] = compute_sample_weight(weight, y_metric[present])
            return out
        return compute_sample_weight(weight, y_metric)

    @property
    def _head(self) -> str:
        return "log_softmax" if len(self.classes_) > 2 else "identity"

    @property
    def _task_loss(self) -> str | Callable[[Tensor, Tensor], Tensor]:
        return "cross_entropy" if len(self.classes_) > 2 else _logit_bce

    @property
    def primary_metric(self) -> str:  # type: ignore[override]
        """The error metric that chooses alpha: `"bce"`, or `"cross_entropy"` for several
        classes."""
        return "cross_entropy" if len(self.classes_) > 2 else "bce"

    def _check_weights(self, y_metric: np.ndarray, weight: np.ndarray | None) -> None:
        kept = y_metric if weight is None else y_metric[weight > 0]  # rows of weight 0: absent
        warn_rare_and_lookalike_classes(
            self.classes_, np.bincount(kept, minlength=len(self.classes_)), self.class_weight
        )
        if weight is None:
            return
        totals = np.bincount(y_metric, weights=weight, minlength=len(self.classes_))
        for label in self.classes_[totals == 0].tolist():
            warnings.warn(
                f"class {shown(label)} has a total sample weight of 0, so the model cannot "
                "learn it but still gives it a probability: drop its rows or weigh them",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )

    def _set_targets(self, y: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
        labels = class_labels(y, warn=True)
        check_consistent_length(labels, np.empty(n))
        check_one_label_type(labels)
        check_classification_targets(labels)
        labels = one_spelling_per_class(labels)
        self.target_name_ = (target_names(y) or ["y"])[0]
        self.classes_, index = np.unique(labels, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(
                f"y has only 1 class ({shown(self.classes_[0])}); a classifier needs at least two"
            )
        multi = len(self.classes_) > 2
        train = index.astype(np.int64) if multi else index.astype(np.float32)[:, None]
        return train, index

    def _split(
        self, n: int, y: np.ndarray, rng: np.random.RandomState
    ) -> tuple[np.ndarray, np.ndarray]:
        n_val = self._n_validation(n)
        if not n_val:
            return rng.permutation(n), np.arange(0)
        try:
            return tuple(
                train_test_split(
                    np.arange(n),
                    test_size=n_val,
                    random_state=rng.randint(2**31 - 1),
                    stratify=y.reshape(n, -1)[:, 0],
                )
            )
        except ValueError:
            order = rng.permutation(n)
            return order[n_val:], order[:n_val]

    def _folds(self, n: int, y: np.ndarray, k: int, rng: np.random.RandomState) -> list[np.ndarray]:
        """`k` folds stratified by class: a class of fewer than `k` rows is in as many folds
        as it has rows, and the others are spread evenly all the same; plain folds only when
        every class has fewer than `k` rows."""
        labels = y.reshape(n, -1)[:, 0]
        if np.unique(labels, return_counts=True)[1].max() < k:
            return super()._folds(n, y, k, rng)
        return [fold for _, fold in stratified_folds(k, rng.randint(2**31 - 1), labels)]

    def _metric_targets(self, y: Any, n: int) -> np.ndarray:
        labels = class_labels(y)
        if labels.shape[0] != n:
            raise ValueError(f"y has {labels.shape[0]} rows but X has {n}")
        codes, distinct = pd.factorize(labels)
        exact = {c: i for i, c in enumerate(self.classes_.tolist())}
        by_text: dict[str | None, int] = {}
        for i, c in enumerate(self.classes_.tolist()):  # "0.0" (astype(str)) finds 0.0 too
            for text in (category_key(c), *float_text(c)):
                by_text.setdefault(text, i)
        found = np.array(
            [exact[v] if v in exact else by_text.get(category_key(v), -1) for v in distinct],
            dtype=np.int64,
        )
        index = found[codes]
        unknown = index < 0
        if unknown.any():
            raise ValueError(
                f"{target_named(self.target_name_)} has {int(unknown.sum())} rows with "
                f"classes not seen in training, e.g. {shown(labels[unknown][0])} (the "
                f"model's classes: {listed(self.classes_.tolist())})"
            )
        return index

    def rule_outputs(self) -> Outputs:
        return Outputs.classification([str(c) for c in self.classes_])

    def _combine(self, outputs: Tensor) -> Tensor:
        """Average the seeds' probabilities, kept as log-probabilities (several classes) or
        as the logit (two classes), computed without rounding to 0 or 1."""
        log_n = np.log(outputs.shape[0])
        if self.network_["head"] == "log_softmax":
            return torch.logsumexp(outputs, dim=0) - log_n
        return torch.logsumexp(F.logsigmoid(outputs), dim=0) - torch.logsumexp(
            F.logsigmoid(-outputs), dim=0
        )

    def _proba(self, y_model: np.ndarray, overwrite: bool = False) -> np.ndarray:
        """Probabilities from the combined outputs; with `overwrite`, several classes'
        probabilities are computed in the memory of `y_model` (a million rows of 100
        classes are 800 MB)."""
        if y_model.shape[1] == 1:
            p = expit(y_model[:, 0])
            return np.column_stack([1 - p, p])
        p = np.exp(y_model, out=y_model if overwrite else None)
        p /= p.sum(axis=1, keepdims=True)
        return p

    def _warn_untrained(self, y_metric: np.ndarray, n_val: int) -> None:
        labels = np.asarray(y_metric).reshape(len(y_metric), -1)[:, 0].astype(int)
        cut = len(labels) - n_val
        late = np.bincount(labels[cut:], minlength=len(self.classes_))
        early = np.bincount(labels[:cut], minlength=len(self.classes_))
        for k in np.flatnonzero((late > 0) & (early == 0)):
            warnings.warn(
                f"class {shown(self.classes_.tolist()[k])} has no training row: all "
                f"{late[k]} of its rows are among the last {n_val} (validation='last'), so "
                "the model cannot learn it; put some of them earlier, or hold out rows at "
                "random (validation='holdout')",
                UserWarning,
                stacklevel=outside_stacklevel(),
            )

    def _check_validation_outputs(self, outputs: Tensor, y_true: np.ndarray) -> None:
        """A warning for a class the validation rows hold and the model at `alpha_` never
        predicts (checked when `alpha_` is on the grid 0, 0.05, ..., 1 the validation sweep
        used)."""
        alpha = self.alpha_
        if not isinstance(alpha, float) or alpha not in ALPHA_GRID:
            return
        at = outputs[ALPHA_GRID.index(alpha)].numpy()
        predicted = at[:, 0] > 0 if at.shape[1] == 1 else at.argmax(axis=1)
        rows = (
            "out-of-fold"
            if fitted_param(self, "validation") == "cross_fit"
            else "validation"
            if self.n_validation_
            else "training"
        )
        warn_unpredicted_classes(
            self.classes_, predicted.astype(int), y_true, alpha, self.class_weight is not None, rows
        )

    def _metrics(
        self, y_model: Tensor, y_true: Tensor, weight: Tensor | None = None
    ) -> dict[str, float]:
        """The log loss (bce, or cross_entropy for several classes: the binary cross entropy
        of the probability given to each row's class, at least ``_EPS``, against 1), accuracy,
        and auc (for several classes the mean over the classes of each one against the
        rest; NaN when a class is missing)."""
        proba = torch.from_numpy(self._proba(y_model.numpy()))
        given = proba[torch.arange(y_true.shape[0]), y_true].clamp(_EPS, 1.0)[:, None]
        if proba.shape[1] == 2:
            auc = score("auc", proba[:, 1], y_true, weight)
        else:
            auc = torch.stack(
                [score("auc", proba[:, k], y_true == k, weight) for k in range(proba.shape[1])]
            ).mean()
        return {
            "bce" if proba.shape[1] == 2 else "cross_entropy": float(
                score("bce", given, torch.ones_like(given), weight)
            ),
            "accuracy": float(score("accuracy", proba, y_true, weight)),
            "auc": float(auc),
        }

    def predict_proba(self, X: Any, alpha: Any = None) -> np.ndarray:
        """Class probabilities.

        Args:
            X: The rows, with the columns the model was fitted on.
            alpha: The rule strength: a number, `"auto"`, `"min_error"`, an array with one
                number per row, or None for `alpha_`.

        Returns:
            The probabilities, shape (n, n_classes), classes in the order of `classes_`.

        Raises:
            ValueError: When X does not have the columns of the fit, or `alpha` is not
                valid.
        """
        return self._proba(self._model_outputs(X, alpha), overwrite=True)

    def predict(self, X: Any, alpha: Any = None) -> np.ndarray:
        """The most probable class of each row.

        Args:
            X: The rows, with the columns the model was fitted on.
            alpha: The rule strength: a number, `"auto"`, `"min_error"`, an array with one
                number per row, or None for `alpha_`.

        Returns:
            The class labels, shape (n,).

        Raises:
            ValueError: When X does not have the columns of the fit, or `alpha` is not
                valid.
        """
        proba = self.predict_proba(X, alpha)
        return self.classes_[proba.argmax(axis=1)]
