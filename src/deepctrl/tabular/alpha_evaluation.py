"""Evaluation of a fitted table estimator over the rule strength: predictions at one alpha
or one per row, sweeps and the verification ratio (mixed into `DeepCTRLEstimator`, whose
fit provides the networks, the rule and the encoder; the choice of alpha from these sweeps
is `deepctrl.tabular.default_alpha`)."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
import torch
from torch import Tensor, nn

from deepctrl.core import sweep_outputs
from deepctrl.core.data import block_rows
from deepctrl.core.inputs import Alphas, Inputs, batch_len
from deepctrl.core.model import DeepCTRL
from deepctrl.core.rules.base import Rule
from deepctrl.core.sweep_outputs import JoinedRows, alpha_items
from deepctrl.engine.workers import free_threads, threads
from deepctrl.tabular.alpha_choice import alpha_number, per_row_alphas
from deepctrl.tabular.frames import refuse_lazy, row_weights

SWEEP_ROWS = 16_384
"""Rows times alphas per block when evaluating several alphas (50,000 swept as fast and
held about 50 MB more at its peak, `benchmarks/sweep_memory.py`)."""
MANY_PREDICTIONS = 200_000
"""Rows times alphas from which an evaluation runs on as many threads as other processes
leave cores free (:func:`deepctrl.engine.workers.free_threads`, which looks for 40 ms);
fewer run on PyTorch's setting."""


def evaluation_threads(work: int) -> contextlib.AbstractContextManager[None]:
    """The threads for evaluating ``work`` rows times alphas: those other processes leave
    free from :data:`MANY_PREDICTIONS` on, else PyTorch's setting (unchanged)."""
    if work < MANY_PREDICTIONS:
        return contextlib.nullcontext()
    return threads(free_threads())


class AlphaEvaluation:
    """The estimators' predictions and sweeps over their fitted networks."""

    models_: list[DeepCTRL]
    rule_: Rule | None
    alpha_: float
    primary_metric: str

    if TYPE_CHECKING:  # provided by DeepCTRLEstimator

        def _encode(self, X: Any) -> Tensor: ...
        def _combine(self, outputs: Tensor) -> Tensor: ...
        def _metric_targets(self, y: Any, n: int) -> np.ndarray: ...
        def _metrics(
            self, y_model: Tensor, y_true: Tensor, weight: Tensor | None = None
        ) -> dict[str, float]: ...
        def resolve_alpha(self, alpha: float | str | None = None) -> float: ...

    # -- evaluation ----------------------------------------------------------------------
    def _evaluate(
        self,
        X: Tensor,
        alphas: Sequence[float],
        rule: bool = True,
        models: Sequence[DeepCTRL] | None = None,
    ) -> tuple[Tensor, Tensor | None]:
        """Combined outputs (n_alphas, n, out) of `models` (all networks by default) and
        rule satisfaction (n_alphas, n) or None: `deepctrl.core.sweep_outputs.predict_sweep`
        of their combined forward, in blocks of max(64, SWEEP_ROWS // n_alphas) rows."""
        alphas = [float(a) for a in alphas]
        nets = list(self.models_ if models is None else models)

        def forward(x: Inputs, a: Sequence[float]) -> Tensor:
            return self._combine(torch.stack([m.forward_alphas(x, a) for m in nets]))

        with evaluation_threads(batch_len(X) * len(alphas)):
            return sweep_outputs.predict_sweep(
                nn.ModuleList(nets),
                self.rule_ if rule else None,
                X,
                alphas,
                block_rows=max(64, SWEEP_ROWS // len(alphas)),
                forward=forward,
            )

    def _evaluate_out_of_fold(
        self, X: Tensor, folds: Sequence[np.ndarray], alphas: Sequence[float], rule: bool
    ) -> tuple[Tensor, Tensor | None]:
        """`_evaluate` where network k answers for the rows `folds[k]` it did not train on;
        the rows come in the folds' order."""
        parts = [
            self._evaluate(X[torch.from_numpy(fold)], alphas, rule, [m])
            for m, fold in zip(self.models_, folds, strict=True)
        ]
        y = torch.cat([p[0] for p in parts], dim=1)
        checks = [p[1] for p in parts if p[1] is not None]
        return y, torch.cat(checks, dim=1) if checks else None

    def _model_outputs(self, X: Any, alpha: Any) -> np.ndarray:
        """Combined outputs at `alpha`: one value for every row, or one per row (an
        array, list or Series of finite numbers >= 0; a Series beside a DataFrame is
        matched to its rows by index)."""
        X_enc = self._encode(X)
        if isinstance(alpha, str) or alpha is None or np.ndim(alpha) == 0:
            y, _ = self._evaluate(X_enc, [self.resolve_alpha(alpha)], rule=False)
            return y[0].double().numpy()
        rows = per_row_alphas(aligned_alpha(alpha, X), X_enc.shape[0])
        if self.rule_ is None:
            rows = np.zeros_like(rows)
        return self._at_row_alphas(X_enc, torch.tensor(rows, dtype=torch.float32)).double().numpy()

    def combined_at(self, X: Tensor, alphas: Tensor) -> Tensor:
        """The networks' combined outputs on encoded rows (what the ONNX file computes too).

        Args:
            X: Encoded rows, as `encoder_.transform` gives them.
            alphas: One rule strength per row: row i runs at `alphas[i]`.

        Returns:
            The combined outputs, before the target scaling (regressors) or the
                probabilities (classifiers).
        """
        return self._combine(torch.stack([m(X, alpha=alphas) for m in self.models_]))

    @torch.no_grad()
    def _at_row_alphas(self, X: Tensor, alphas: Tensor) -> Tensor:
        """`combined_at` in blocks of rows."""
        joined = JoinedRows(X.shape[0])
        with evaluation_threads(X.shape[0]):
            for i in range(0, X.shape[0], SWEEP_ROWS):
                joined.add(self.combined_at(X[i : i + SWEEP_ROWS], alphas[i : i + SWEEP_ROWS]))
        return joined.result()

    def _sweep_encoded(
        self,
        X: Tensor,
        y_true: np.ndarray | None,
        alphas: Sequence[float],
        weight: np.ndarray | None = None,
        folds: Sequence[np.ndarray] | None = None,
        judged: list[int] | None = None,
        outputs: list[tuple[Tensor, np.ndarray]] | None = None,
    ) -> dict[str, list[float]]:
        """`sweep` on encoded rows, with targets for the metrics and row weights; with
        `folds`, out of fold (network k predicts the rows `folds[k]`; `y_true` and `weight`
        follow the rows of X). `judged`, a list, receives how many rows the rule judged
        (rows whose feature is missing, and for a threshold the rows whose perturbation
        does not cross it, are not judged); `outputs`, a list, receives the model outputs
        at every alpha, (alphas, rows, outputs), with the targets in their order."""
        if folds is not None:
            order = np.concatenate(folds)
            y_true = None if y_true is None else y_true[order]
            weight = None if weight is None else weight[order]

        def evaluate(at: Sequence[float], rule: bool) -> tuple[Tensor, Tensor | None]:
            if folds is None:
                return self._evaluate(X, at, rule)
            return self._evaluate_out_of_fold(X, folds, at, rule)

        if self.rule_ is None:
            alphas = [float(a) for a in alphas]
            y, _ = evaluate([0.0], False)
            y = y.expand(len(alphas), *y.shape[1:])
            ok = None
        else:
            y, ok = evaluate(alphas, True)
        if judged is not None:
            judged.append(0 if ok is None else int((~ok[0].isnan()).sum()))
        if outputs is not None and y_true is not None:
            outputs.append((y, y_true))
        table: dict[str, list[float]] = {
            "alpha": [float(a) for a in alphas],
            "verification_ratio": [],
        }
        target = None if y_true is None else torch.tensor(y_true)
        w = None if weight is None else torch.tensor(weight)
        for i in range(len(alphas)):
            # in float64: a share of whole counts, exact (95 of 100 rows reach a goal of 0.95)
            ratio = float(ok[i].double().nanmean()) if ok is not None else float("nan")
            table["verification_ratio"].append(ratio)
            if target is None:
                continue
            for name, value in self._metrics(y[i].double(), target, w).items():
                table.setdefault(name, []).append(value)
        return table

    def sweep(
        self,
        X: Any,
        y: Any = None,
        alphas: Alphas | None = None,
        *,
        by_value: bool = True,
        sample_weight: Any = None,
    ) -> pd.DataFrame:
        """The verification ratio and the error metrics at every alpha.

        Without rules the verification ratio is NaN and every alpha gives the same model.

        Args:
            X: The rows.
            y: Their targets, for the error metrics; None measures the verification ratio
                only.
            alphas: The rule strengths: a sequence of numbers, a 1-D array or tensor; None
                is 0, 0.1, ..., 1.
            by_value: Draw the rule's perturbations in an order set by the rows' values, so
                that the same rows in any order give the same table (the default); False
                draws them in the rows' order, as a fit's own validation sweep does.
            sample_weight: Row weights for the error metrics (as fit weighs its validation
                errors); the verification ratio counts every row alike.

        Returns:
            One row per alpha: `alpha`, `verification_ratio` and the error metrics. With
                rules, `attrs["judged_rows"]` is (rows the rule judged, rows): a threshold
                judges only the rows whose perturbation crosses it, and a row whose ruled
                feature is missing is not judged.

        Raises:
            ValueError: When `alphas` is one number (give `[0.5]`), empty, or holds
                something other than finite numbers >= 0, `y` does not fit X, or
                `sample_weight` is given without `y` or is not a weight >= 0 per row.
        """
        grid = list(np.round(np.linspace(0, 1, 11), 10)) if alphas is None else alpha_items(alphas)
        X_enc = self._encode(X)
        if not grid:
            raise ValueError("sweep needs at least one alpha")
        numbers = [alpha_number(a, "every alpha") for a in grid]
        refuse_lazy(y, "y")
        y_true = None if y is None else self._metric_targets(y, X_enc.shape[0])
        weight = self._metric_weights(sample_weight, y_true, X_enc.shape[0])
        if self.rule_ is not None and by_value:  # the draws follow the rows' values
            order = value_order(X_enc).numpy()
            X_enc = X_enc[order]
            y_true = None if y_true is None else y_true[order]
            weight = None if weight is None else weight[order]
        judged: list[int] = []
        table = pd.DataFrame(self._sweep_encoded(X_enc, y_true, numbers, weight, judged=judged))
        if self.rule_ is not None:
            table.attrs["judged_rows"] = (judged[0], X_enc.shape[0])
        return table

    @staticmethod
    def _metric_weights(sample_weight: Any, y_true: Any, n: int) -> np.ndarray | None:
        """`sample_weight` checked for the error metrics of `n` rows with targets."""
        if sample_weight is None:
            return None
        if y_true is None:
            raise ValueError("sample_weight weighs the error metrics: give y as well")
        return row_weights(sample_weight, None, pd.DataFrame(index=range(n)))

    def verification_ratio(self, X: Any, alpha: float | str | None = None) -> float:
        """Fraction of the rows of X (that the rules can judge) on which the rules hold.

        Args:
            X: The rows.
            alpha: The rule strength, as for `resolve_alpha`; None is `alpha_`.

        Returns:
            The verification ratio, between 0 and 1; NaN when the rule judges none of the
                rows (a threshold no row's perturbation crosses, or the ruled feature
                missing on every row).

        Raises:
            ValueError: When the model has no rules.
        """
        X_enc = self._encode(X)
        if self.rule_ is None:
            raise ValueError("this model has no rules, so it has no verification ratio")
        _, ok = self._evaluate(X_enc[value_order(X_enc)], [self.resolve_alpha(alpha)])
        assert ok is not None  # the rules are evaluated
        return float(ok.double().nanmean())


def value_order(X: Tensor) -> Tensor:
    """An order of the encoded rows set by their values alone (by a fixed random projection,
    ties kept in place), so that a rule's random perturbations, drawn row after row, fall
    on the same rows whatever order they come in: a sweep, a verification ratio and the
    alpha chosen by a goal then depend on the set of rows, not on their order.

    >>> rows = torch.tensor([[1.0, 0.0], [0.0, 2.0], [3.0, 1.0]])
    >>> torch.equal(rows[value_order(rows)], rows[[2, 0, 1]][value_order(rows[[2, 0, 1]])])
    True
    """
    weights = torch.randn(
        X.shape[1], generator=torch.Generator().manual_seed(0), dtype=torch.float64
    )
    step = block_rows(X)  # a float64 copy of a block at a time, not of the whole table
    keys = torch.cat([X[i : i + step].double() @ weights for i in range(0, len(X), step)])
    return torch.argsort(keys, stable=True)


def aligned_alpha(alpha: Any, X: Any) -> Any:
    """A per-row ``alpha`` in the order of ``X``'s rows: a Series beside a DataFrame by
    their index (it may hold more rows, as for a filtered copy of a table; an error when it
    lacks some of X's labels), else as given.

    >>> X = pd.DataFrame({"x": [1, 2]}, index=["b", "a"])
    >>> aligned_alpha(pd.Series([0.0, 1.0, 0.5], index=["a", "b", "c"]), X).tolist()
    [1.0, 0.0]
    """
    if not (isinstance(alpha, pd.Series) and isinstance(X, pd.DataFrame)):
        return alpha
    if alpha.index.equals(X.index):
        return alpha
    if alpha.index.is_unique and X.index.is_unique and bool(X.index.isin(alpha.index).all()):
        return alpha.loc[X.index]
    if len(alpha) != len(X):
        return alpha  # a wrong length is per_row_alphas' error
    for name, index in (("X", X.index), ("the alpha Series", alpha.index)):
        if not index.is_unique:
            raise ValueError(
                f"{name} repeats index labels (such as "
                f"{index[index.duplicated()].tolist()[0]!r}), so a per-row alpha cannot be matched "
                "to the rows by index: reset_index() both, or pass alpha.to_numpy() to take "
                "its values in X's order"
            )
    raise ValueError(
        "a per-row alpha given as a Series must hold X's index labels (its rows are matched "
        "by index); pass alpha.to_numpy() to take its values in order"
    )
