"""What DeepCTRLRegressor and DeepCTRLClassifier share: input checks, a network sized from
the data, training with :func:`deepctrl.fit`, and evaluation over the rule strength."""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pandas as pd
import torch
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data
from torch import Tensor

from deepctrl.core import evaluation, methods, priors
from deepctrl.core.data import resolve_device
from deepctrl.core.inputs import Inputs
from deepctrl.core.metrics import PerSample
from deepctrl.core.model import DeepCTRL
from deepctrl.core.rules.base import forward_all, perturb_all
from deepctrl.core.seeding import derive_seed
from deepctrl.engine import training
from deepctrl.tabular import model_file
from deepctrl.tabular.encoding import NUMERIC, TableEncoder
from deepctrl.tabular.network import build_network, network_spec
from deepctrl.tabular.table_rules import Outputs, resolve

ALPHA_GRID = [round(0.05 * i, 10) for i in range(21)]
LABEL_FREE_GRID = [round(0.05 * i, 10) for i in range(31)]
"""0, 0.05, ..., 1.5: the alphas tried for a verification goal without labels (above 1 the
rule path is extrapolated, as the paper does on a population that follows the rule more)."""
RHO_NAMES = ("auto", "paper", "epoch")


def check_alpha(alpha: Any, name: str = "alpha") -> float | str:
    """``alpha`` as a finite float, or the text "auto"."""
    if isinstance(alpha, str) and alpha == "auto":
        return alpha
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real) \
            or not math.isfinite(float(alpha)):
        raise ValueError(f"{name} must be a finite number or 'auto', got {alpha!r}")
    return float(alpha)


def _check_goal(min_verification: Any) -> float:
    """A verification goal as a float in (0, 1]."""
    if isinstance(min_verification, bool) or not isinstance(min_verification, numbers.Real) \
            or not 0 < float(min_verification) <= 1:
        raise ValueError("min_verification must be a number greater than 0 and at most 1, "
                         f"got {min_verification!r}")
    return float(min_verification)


class DeepCTRLEstimator(BaseEstimator):
    """Base class; use :class:`deepctrl.DeepCTRLRegressor` or
    :class:`deepctrl.DeepCTRLClassifier`."""

    def __init__(self, rules: Any = None, alpha: float | str = "auto", *,
                 hidden_size: int | None = None, latent_size: int | None = None,
                 beta: float = 0.1, rho: float | str = "auto", batch_size: int | str = "auto",
                 learning_rate: float = 1e-3, max_epochs: int = 500, patience: int = 20,
                 validation_fraction: float = 0.2, n_seeds: int = 5,
                 random_state: Any = None, verbose: bool = False, device: str = "cpu") -> None:
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
        self.validation_fraction = validation_fraction
        self.n_seeds = n_seeds
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
        """The model's outputs by name, as rules on the target see them."""
        raise NotImplementedError

    def _combine(self, outputs: Tensor) -> Tensor:
        """Average (seeds, ...) model outputs into one prediction."""
        return outputs.mean(dim=0)

    def _metrics(self, y_model: np.ndarray, y_true: np.ndarray) -> dict[str, float]:
        raise NotImplementedError

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
        if not (isinstance(self.beta, numbers.Real) and self.beta > 0):
            raise ValueError(f"beta must be a positive number, got {self.beta!r}")
        if not (self.rho in RHO_NAMES or (isinstance(self.rho, numbers.Real) and self.rho > 0)):
            raise ValueError(f"rho must be a positive number or one of {RHO_NAMES}, "
                             f"got {self.rho!r}")
        ints = {"max_epochs": self.max_epochs, "patience": self.patience,
                "n_seeds": self.n_seeds,
                "hidden_size": 1 if self.hidden_size is None else self.hidden_size,
                "latent_size": 1 if self.latent_size is None else self.latent_size,
                "batch_size": 1 if self.batch_size == "auto" else self.batch_size}
        for name, value in ints.items():
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {getattr(self, name)!r}")
        if not (isinstance(self.learning_rate, numbers.Real) and self.learning_rate > 0):
            raise ValueError(f"learning_rate must be positive, got {self.learning_rate!r}")
        resolve_device(self.device)
        if not (isinstance(self.validation_fraction, numbers.Real)
                and 0 <= self.validation_fraction < 1):
            raise ValueError("validation_fraction must be in [0, 1), got "
                             f"{self.validation_fraction!r}")

    def _frame(self, X: Any, reset: bool) -> pd.DataFrame:
        """X as a DataFrame; arrays are numeric and get the names x0, x1, ... at fit."""
        if isinstance(X, pd.DataFrame):
            validate_data(self, X, reset=reset, skip_check_array=True)
            if X.shape[0] == 0 or X.shape[1] == 0:
                raise ValueError(f"X is empty: {X.shape[0]} rows, {X.shape[1]} columns")
            return X.set_axis([str(c) for c in X.columns], axis=1)
        numeric = reset or all(c.kind == NUMERIC for c in self.encoder_.columns)
        arr = validate_data(self, X, reset=reset, dtype="numeric" if numeric else None,
                            ensure_all_finite=numeric)
        names = [f"x{i}" for i in range(arr.shape[1])] if reset else self.encoder_.names
        frame = pd.DataFrame(arr, columns=names)
        return frame if numeric else frame.infer_objects()

    def _encode(self, X: Any) -> Tensor:
        check_is_fitted(self, "models_")
        return torch.from_numpy(self.encoder_.transform(self._frame(X, reset=False)))

    def resolve_alpha(self, alpha: float | str | None = None) -> float:
        """The rule strength used for ``alpha``: a number as given; "auto" the alpha chosen on
        the validation rows at fit (``selected_alpha_``); None the estimator's own,
        ``alpha_`` (its ``alpha``, or what :meth:`select_alpha` chose). 0 without rules."""
        check_is_fitted(self, "models_")
        if self.rule_ is None:
            return 0.0
        if alpha is None:
            return float(self.alpha_)
        value = check_alpha(alpha)
        return float(self.selected_alpha_) if value == "auto" else float(value)

    # -- training ------------------------------------------------------------------------
    def _split(self, n: int, y: np.ndarray, rng: np.random.RandomState) -> tuple[np.ndarray,
                                                                                 np.ndarray]:
        n_val = round(self.validation_fraction * n)
        order = rng.permutation(n)
        if n_val < 2 or n - n_val < 2:
            return order, order[:0]
        return order[n_val:], order[:n_val]

    def fit(self, X: Any, y: Any) -> DeepCTRLEstimator:
        """Train on a DataFrame or array ``X`` and targets ``y``; returns self."""
        self._check_params()
        frame = self._frame(X, reset=True)
        if y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y "
                             "is None")
        y_train, y_metric = self._set_targets(y, len(frame))
        self.encoder_ = TableEncoder.fit(frame)
        self.rule_ = resolve(self.rules, self.encoder_, self.rule_outputs())
        X_all = torch.from_numpy(self.encoder_.transform(frame))
        rng = check_random_state(self.random_state)
        train_idx, val_idx = self._split(len(frame), y_train, rng)
        seed = int(rng.randint(0, 2**31 - 1 - self.n_seeds))
        self.network_ = network_spec(X_all.shape[1], self._n_model_outputs(), self._head,
                                     self.hidden_size, self.latent_size)
        method: methods.Method = (
            methods.DeepCTRLMethod(prior=priors.Beta(self.beta, self.beta), rho=self.rho)
            if self.rule_ is not None else methods.TaskOnly())
        y_all = torch.from_numpy(y_train)
        batch = self.batch_size if self.batch_size != "auto" else int(
            np.clip(2 ** round(math.log2(max(len(train_idx), 1) / 32)), 16, 256))
        val = (X_all[val_idx], y_all[val_idx]) if len(val_idx) else None
        result = training.fit(build_network(self.network_), self.rule_, method,
                       train=(X_all[train_idx], y_all[train_idx]), val=val,
                       task_loss=self._task_loss, batch_size=int(batch), lr=self.learning_rate,
                       max_epochs=self.max_epochs, patience=self.patience,
                       seeds=range(seed, seed + self.n_seeds), progress=bool(self.verbose),
                       desc=type(self).__name__, device=self.device)
        self.models_ = [cast(DeepCTRL, m.cpu().eval()) for m in result.models]
        state = result.method.state_dict()
        self.rho_ = [float(r) for r in state["rho"]] if "rho" in state else []
        self.n_epochs_ = max(result.epochs)
        self.best_epochs_ = list(result.best_epochs)
        self.batch_size_ = int(batch)
        self.n_train_, self.n_validation_ = len(train_idx), len(val_idx)
        rows = val_idx if len(val_idx) else train_idx
        self.validation_sweep_ = self._sweep_encoded(X_all[rows], y_metric[rows], ALPHA_GRID)
        self.selected_alpha_ = self._select(self.validation_sweep_)
        self.alpha_ = self.selected_alpha_ if self.alpha == "auto" else float(self.alpha)
        return self

    def _n_model_outputs(self) -> int:
        return self.rule_outputs().n_model_outputs

    def _select(self, table: dict[str, list[float]], min_verification: float | None = None
                ) -> float:
        if self.rule_ is None:
            return 0.0
        return float(evaluation.select_alpha(table, min_verification=min_verification,
                                       metric=self.primary_metric))

    # -- evaluation ----------------------------------------------------------------------
    @torch.no_grad()
    def _evaluate(self, X: Tensor, alphas: Sequence[float], rule: bool = True,
                  seed: int = 0) -> tuple[Tensor, Tensor | None]:
        """Combined outputs (n_alphas, n, out) and rule satisfaction (n_alphas, n) or None."""
        alphas = [float(a) for a in alphas]
        active = self.rule_ if rule else None

        def forward(z: Inputs) -> Tensor:
            return self._combine(torch.stack([m.forward_alphas(z, alphas)
                                              for m in self.models_]))

        gen = torch.Generator().manual_seed(derive_seed(seed, "eval"))
        block = max(256, 200_000 // len(alphas))
        outs, oks = [], []
        for start in range(0, X.shape[0], block):
            x = X[start:start + block]
            perturbed = perturb_all(active, x, gen) if active is not None else []
            y, y_p = forward_all(forward, x, perturbed, out_dim=1)
            outs.append(y)
            if active is not None:
                oks.append(evaluation.satisfaction(active, x, y, perturbed, y_p))
        return torch.cat(outs, dim=1), torch.cat(oks, dim=1) if active is not None else None

    def _model_outputs(self, X: Any, alpha: Any) -> np.ndarray:
        y, _ = self._evaluate(self._encode(X), [self.resolve_alpha(alpha)], rule=False)
        return y[0].double().numpy()

    def _sweep_encoded(self, X: Tensor, y_true: np.ndarray | None,
                       alphas: Sequence[float]) -> dict[str, list[float]]:
        if self.rule_ is None:
            alphas = [float(a) for a in alphas]
            y, _ = self._evaluate(X, [0.0], rule=False)
            y = y.expand(len(alphas), *y.shape[1:])
            ok = None
        else:
            y, ok = self._evaluate(X, alphas)
        table: dict[str, list[float]] = {"alpha": [float(a) for a in alphas],
                                         "verification_ratio": []}
        for i in range(len(alphas)):
            ratio = float(ok[i].nanmean()) if ok is not None else float("nan")
            table["verification_ratio"].append(ratio)
            if y_true is None:
                continue
            for name, value in self._metrics(y[i].double().numpy(), y_true).items():
                table.setdefault(name, []).append(value)
        return table

    def sweep(self, X: Any, y: Any = None, alphas: Sequence[float] | None = None
              ) -> pd.DataFrame:
        """One row per alpha: alpha, verification_ratio and the error metrics on (X, y)
        (only the verification ratio when y is None).

        Without rules the verification ratio is NaN and every alpha gives the same model.
        """
        X_enc = self._encode(X)
        alphas = list(np.round(np.linspace(0, 1, 11), 10)) if alphas is None else list(alphas)
        if not alphas:
            raise ValueError("sweep needs at least one alpha")
        checked = [check_alpha(a, "every alpha") for a in alphas]
        if "auto" in checked:
            raise ValueError("sweep needs numeric alphas, got 'auto'")
        alphas = [float(a) for a in checked]
        y_true = None if y is None else self._metric_targets(y, X_enc.shape[0])
        return pd.DataFrame(self._sweep_encoded(X_enc, y_true, alphas))

    def verification_ratio(self, X: Any, alpha: float | str | None = None) -> float:
        """Fraction of the rows of X (that the rules can judge) on which the rules hold."""
        X_enc = self._encode(X)
        if self.rule_ is None:
            raise ValueError("this model has no rules, so it has no verification ratio")
        _, ok = self._evaluate(X_enc, [self.resolve_alpha(alpha)])
        assert ok is not None  # the rules are evaluated
        return float(ok.nanmean())

    def alpha_for_verification(self, X: Any, min_verification: float,
                               alphas: Sequence[float] | None = None) -> tuple[float, float]:
        """The smallest alpha whose verification ratio on the rows of X reaches
        ``min_verification``, and that ratio; no labels needed and the estimator is left as it
        is. ``alphas`` defaults to :data:`LABEL_FREE_GRID` (0 to 1.5). Raises ValueError when
        no alpha reaches the goal, naming the highest ratio reached.

        Example: ``alpha, ratio = model.alpha_for_verification(X_new, 0.95)``.
        """
        goal = _check_goal(min_verification)
        check_is_fitted(self, "models_")
        if self.rule_ is None:
            raise ValueError("this model has no rules, so it has no verification ratio to "
                             "choose alpha by")
        grid = LABEL_FREE_GRID if alphas is None else alphas
        table = self.sweep(X, None, grid).to_dict(orient="list")
        found = list(zip(table["alpha"], table["verification_ratio"], strict=True))
        if any(r >= goal for _, r in found):
            alpha = float(evaluation.select_alpha(table, min_verification=goal))
            return alpha, float(dict(found)[alpha])
        span = f"{min(a for a, _ in found):g}..{max(a for a, _ in found):g}"
        judged = [(a, r) for a, r in found if not math.isnan(r)]
        if not judged:
            raise ValueError(f"no alpha in {span} reaches verification ratio {goal:g}: the "
                             "rules judge none of these rows")
        best = max(r for _, r in judged)
        at = min(a for a, r in judged if r == best)
        raise ValueError(f"no alpha in {span} reaches verification ratio {goal:g} on these "
                         f"rows (highest {best:.3f} at alpha {at:g})")

    def select_alpha(self, X_val: Any, y_val: Any = None, min_verification: float | None = None,
                     alphas: Sequence[float] | None = None) -> float:
        """Choose the alpha that predictions use by default (``alpha_``) on a validation set
        and return it: the alpha with the lowest error, or with ``min_verification`` the
        smallest alpha whose verification ratio on X_val reaches it. The ``alpha`` parameter
        stays as you set it.

        Without labels (``y_val=None``) ``min_verification`` is required and the grid
        defaults to :data:`LABEL_FREE_GRID` (0 to 1.5); see :meth:`alpha_for_verification`.

        Example: ``model.select_alpha(X_new, min_verification=0.95)`` on unlabelled rows.
        """
        if min_verification is not None:
            min_verification = _check_goal(min_verification)
        if y_val is None:
            if min_verification is None:
                raise ValueError("select_alpha without labels (y_val=None) needs "
                                 "min_verification, the verification ratio to reach")
            alpha, _ = self.alpha_for_verification(X_val, min_verification, alphas)
            self.alpha_ = alpha
            return alpha
        table = self.sweep(X_val, y_val, ALPHA_GRID if alphas is None else alphas)
        if self.rule_ is None:
            raise ValueError("this model has no rules, so alpha has no effect")
        alpha = self._select(table.to_dict(orient="list"), min_verification)
        self.alpha_ = alpha
        return alpha

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write the fitted model to one file: safetensors weights with the preprocessing,
        rules and architecture as JSON; the write is atomic."""
        return model_file.save_estimator(self, path)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Any:
        """Read a model written by :meth:`save`; never unpickles."""
        return model_file.load_estimator(path, cls)
