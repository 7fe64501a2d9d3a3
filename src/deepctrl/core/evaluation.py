"""Evaluate a trained model over the rule strength: `sweep`, `verification_ratio`,
`select_alpha`.

Examples:
    >>> import torch, deepctrl as dc
    >>> model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    >>> rule = dc.rules.Monotonic(0, "increasing")
    >>> X, y = torch.randn(50, 2), torch.randn(50, 1)
    >>> table = dc.sweep(model, rule, X, y, alphas=[0.0, 0.5, 1.0], metrics=("mae",))
    >>> sorted(table)
    ['alpha', 'mae', 'verification_ratio']
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Callable, Iterator, Sequence
from typing import Any, overload

import numpy as np
import torch
from torch import Tensor, nn

from deepctrl.core.calls import eval_mode, predict_alphas
from deepctrl.core.checks import finite_real, module, nonneg_int
from deepctrl.core.data import as_inputs, as_target, check_materialized
from deepctrl.core.inputs import REFUSALS, Alphas, Inputs, apply, batch_len, cat, refused_rows, rows
from deepctrl.core.metrics import HIGHER_IS_BETTER, MEANS, SCORES, score
from deepctrl.core.rules.base import (
    Rule,
    checked_rule,
    forward_all,
    judgement,
    make_context,
    perturbed_by,
)
from deepctrl.core.seeding import derive_seed
from deepctrl.core.sources import blocks, is_loader

Table = dict[str, list[float]]

AlphaValue = float | np.floating[Any] | Tensor
"""One rule strength: a Python or NumPy number, or a one-element tensor."""

AlphaForward = Callable[[Inputs, Sequence[float]], Tensor]
"""Outputs (n_alphas, rows, ...) of a block of inputs at every alpha: how a sweep runs the
model. The default is [predict_alphas][deepctrl.core.calls.predict_alphas] of the model; an
ensemble passes the average of its members'."""

ERROR_METRICS = ("poisson", "mae", "mse", "rmse", "bce", "cross_entropy")
"""The error columns `select_alpha` picks by, the first present: the deviance first, since
a table holds it only for log-rate outputs, beside which the others compare log-rates
with counts."""

SWEEP_ALPHAS = tuple(float(a) for a in np.round(np.linspace(0, 1, 11), 10))
"""0, 0.1, ..., 1: the alphas `sweep` evaluates unless given others."""


def _placement(model: nn.Module) -> tuple[torch.device, torch.dtype]:
    check_materialized(module(model, "model"))
    param = next(model.parameters(), None)
    if param is None:
        return torch.device("cpu"), torch.float32
    return param.device, param.dtype


class JoinedRows:
    """Results computed block by block, joined along the rows (axis `dim`).

    With the number of rows `n` known, every block is written into one tensor allocated
    at the first block; with `n` None (data from a loader) the blocks are kept and joined
    at the end. Joining at the end costs more than the copy: each block's small result,
    kept between the next blocks' large temporaries, fragments the heap, and glibc then
    holds on to about one block of temporaries per block (up to 3.3 GB for 21 alphas over
    200,000 rows of a width-64 network, against results of 34 MB,
    `benchmarks/sweep_memory.py --core`).

    Args:
        n: The number of rows of the whole result, or None when it is not known.
        dim: The axis along which the blocks' rows lie.

    Examples:
        >>> joined = JoinedRows(5, dim=1)
        >>> joined.add(torch.zeros(2, 3)); joined.add(torch.ones(2, 2))
        >>> joined.result().tolist()
        [[0.0, 0.0, 0.0, 1.0, 1.0], [0.0, 0.0, 0.0, 1.0, 1.0]]
    """

    def __init__(self, n: int | None, dim: int = 0) -> None:
        self.n, self.dim, self.at = n, dim, 0
        self.out: Tensor | None = None
        self.parts: list[Tensor] = []

    def add(self, block: Tensor) -> None:
        """Add the next block of rows.

        Args:
            block: The block's results; its other axes match the earlier blocks'.
        """
        if self.n is None:
            self.parts.append(block)
            return
        if self.out is None:
            shape = list(block.shape)
            shape[self.dim] = self.n
            self.out = block.new_empty(shape)
        m = block.shape[self.dim]
        self.out.narrow(self.dim, self.at, m).copy_(block)
        self.at += m

    def result(self) -> Tensor:
        """Every block's rows, in order.

        Returns:
            The joined result.
        """
        return self.out if self.out is not None else torch.cat(self.parts, dim=self.dim)


def without_autocast(device: torch.device) -> contextlib.AbstractContextManager[Any]:
    """Turns off a caller's autocast (mixed precision) on ``device`` for a sweep: outputs
    rounded to bfloat16 tie with their perturbed twins, and a strict rule counts every tie
    as broken, so a model that keeps the rule exactly read far below 1. The model runs in
    its own dtype."""
    try:
        return torch.autocast(device.type, enabled=False)
    except RuntimeError:  # a device type autocast does not know: nothing to turn off
        return contextlib.nullcontext()


def alpha_items(alphas: Any) -> list[Any]:
    """The items of ``alphas`` (a sequence; a 1-D array or tensor gives Python numbers); one
    number, one text, or an array of another shape is an error.

    >>> alpha_items(np.array([0.0, 0.5])), alpha_items(torch.tensor([1.0]))
    ([0.0, 0.5], [1.0])
    >>> alpha_items(0.5)
    Traceback (most recent call last):
    ...
    ValueError: alphas must be a sequence of numbers, got 0.5: for one alpha, give [0.5]
    >>> alpha_items([[0.0, 1.0]])
    Traceback (most recent call last):
    ...
    ValueError: alphas must be one-dimensional, got [0.0, 1.0] among them
    """
    array = isinstance(alphas, Tensor | np.ndarray)
    if array and alphas.ndim > 1:
        raise ValueError(f"alphas must be one-dimensional, got shape {tuple(alphas.shape)}")
    one = isinstance(alphas, numbers.Real) or (array and alphas.ndim == 0)
    if one or isinstance(alphas, str | bytes | numbers.Number):
        raise ValueError(
            f"alphas must be a sequence of numbers, got {alphas!r}"
            + (f": for one alpha, give [{float(alphas)!r}]" if one else "")
        )
    if array:
        return list(alphas.tolist())
    try:
        items = list(alphas)
    except TypeError:
        raise ValueError(f"alphas must be a sequence of numbers, got {alphas!r}") from None
    # a one-element array is one alpha; a list or a longer array is a second dimension
    nested = [
        a
        for a in items
        if isinstance(a, list | tuple)
        or (isinstance(a, np.ndarray | Tensor) and math.prod(a.shape) != 1)
    ]
    if nested:
        raise ValueError(f"alphas must be one-dimensional, got {nested[0]!r} among them")
    return items


def _alpha_list(alphas: Any) -> list[float]:
    """``alphas`` as finite floats (see `alpha_items`); a boolean, a text or None among
    them is an error naming `alphas`.

    >>> _alpha_list(torch.tensor([0.0, 0.5]))
    [0.0, 0.5]
    >>> _alpha_list([0.0, True])
    Traceback (most recent call last):
    ...
    ValueError: alphas must be finite numbers, got True
    """
    out = []
    for a in alpha_items(alphas):
        try:
            out.append(finite_real(a, "alpha"))
        except ValueError:
            raise ValueError(f"alphas must be finite numbers, got {a!r}") from None
    return out


DRAW_ROWS = 64
"""A sweep draws each leaf's perturbations this many rows at a time, and its blocks hold
whole draws: the draws of a row then do not depend on how many alphas are swept, whatever
distribution a rule's `perturb` draws from."""


def _drawn(leaf: Rule, x: Inputs, generator: torch.Generator) -> Inputs | None:
    """`perturbed_by(leaf, x, generator)`, drawn `DRAW_ROWS` rows at a time."""
    n = batch_len(x)
    if n <= DRAW_ROWS:
        return perturbed_by(leaf, x, generator)
    parts = [
        perturbed_by(leaf, rows(x, slice(start, start + DRAW_ROWS)), generator)
        for start in range(0, n, DRAW_ROWS)
    ]
    if any(p is None for p in parts):
        return None
    return cat([p for p in parts if p is not None])


def _blocks(
    model: nn.Module,
    rule: Rule | None,
    data: Any,
    alphas: Alphas,
    seed: int,
    block_rows: int | None,
    need_y: bool,
    forward: AlphaForward | None,
) -> Iterator[tuple[Tensor, Tensor | None, Tensor | None]]:
    """(outputs (n_alphas, rows, ...), satisfaction (n_alphas, rows) or None, targets or
    None) per block of rows of a Dataset/DataLoader, or of inputs already placed on the
    model's device and dtype (`deepctrl.core.data.as_inputs`). A model that cannot take
    the first block's rows fails with one line naming them."""
    alphas = _alpha_list(alphas)
    if not alphas:
        raise ValueError("predict_sweep needs at least one alpha")
    seed = nonneg_int(seed, "seed")
    given = block_rows
    if block_rows is not None:
        try:
            block_rows = nonneg_int(block_rows, "block_rows")
        except ValueError:
            block_rows = 0
        if block_rows < 1:
            raise ValueError(f"block_rows must be an integer >= 1 or None, got {given!r}")
    device, dtype = _placement(model)
    # (alphas x rows x width) in cache, in whole draws
    block = block_rows or DRAW_ROWS * max(1, 2**14 // len(alphas) // DRAW_ROWS)
    leaves = rule.leaves() if rule is not None else []
    gens = [
        torch.Generator(device).manual_seed(derive_seed(seed, "eval", k))
        for k in range(len(leaves))
    ]
    at_alphas = forward or (lambda z, a: predict_alphas(model, z, a))
    name = "data" if is_loader(data) else "X"
    checked = False

    def run(x: Inputs) -> tuple[Tensor, Tensor | None]:
        nonlocal checked
        perturbed = [_drawn(leaf, x, g) for leaf, g in zip(leaves, gens, strict=True)]
        with without_autocast(device):
            try:
                y_hat, y_p = forward_all(lambda z: at_alphas(z, alphas), x, perturbed, out_dim=1)
            except REFUSALS as exc:
                if checked:
                    raise
                raise refused_rows(x, exc, name) from exc
        checked = True
        ok = satisfaction(rule, x, y_hat, perturbed, y_p) if rule is not None else None
        return y_hat, ok

    if is_loader(data):
        for x, y in blocks(data, block, device, dtype, name, need_y):
            yield (*run(x), y)
        return
    for start in range(0, batch_len(data), block):
        yield (*run(rows(data, slice(start, start + block))), None)


@overload
def predict_sweep(
    model: nn.Module,
    rule: Rule,
    X: Any,
    alphas: Alphas,
    seed: int = 0,
    block_rows: int | None = None,
    forward: AlphaForward | None = None,
) -> tuple[Tensor, Tensor]: ...


@overload
def predict_sweep(
    model: nn.Module,
    rule: None,
    X: Any,
    alphas: Alphas,
    seed: int = 0,
    block_rows: int | None = None,
    forward: AlphaForward | None = None,
) -> tuple[Tensor, None]: ...


@torch.no_grad()
def predict_sweep(
    model: nn.Module,
    rule: Rule | None,
    X: Any,
    alphas: Alphas,
    seed: int = 0,
    block_rows: int | None = None,
    forward: AlphaForward | None = None,
) -> tuple[Tensor, Tensor | None]:
    """Outputs (n_alphas, n, ...) and per-alpha rule satisfaction (n_alphas, n) or None.

    The model runs in eval mode (and gets its modes back). The encoders run once per block
    of `block_rows` rows; the decision block runs once on all alphas stacked.
    Perturbations are shared by every alpha and drawn block by block, each leaf of the rule
    from its own generator seeded from `seed`, 64 rows at a time. With the default
    `block_rows` a block holds whole draws, so the draws of a row, and a ratio, do not
    depend on which other alphas are swept. Memory holds one block's perturbed rows.

    Args:
        model: The trained model (with `forward`, the module whose parameters give the
            inputs' device and dtype and whose mode is set to eval).
        rule: The rule to check; None skips the check.
        X: A tensor (array, DataFrame), a dict of them, or a Dataset/DataLoader of inputs
            or of (x, y) pairs.
        alphas: The rule strengths to run the model at, at least one.
        seed: Seeds the perturbations, an integer >= 0.
        block_rows: Rows per block, at least 1; None is 16,384 over the number of alphas,
            rounded down to a multiple of 64, at least 64.
        forward: `forward(x, alphas)` computes the outputs instead of the model (e.g. an
            ensemble's average; pass its members as `model`); None runs the model.

    Returns:
        The outputs, and the satisfaction matrix (1.0 satisfied, 0.0 violated, NaN where
            the rule cannot judge) or None without a rule.

    Raises:
        ValueError: When `alphas` is empty or not finite numbers (booleans included),
            `seed` is not an integer >= 0, `block_rows` is not an integer >= 1, or the
            model cannot take the rows of `X`.
        TypeError: When `model` is not a `torch.nn.Module`.

    Examples:
        >>> import deepctrl as dc
        >>> nets = nn.ModuleList(dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
        ...                      for _ in range(3))
        >>> def mean(x, alphas):
        ...     return torch.stack([net.forward_alphas(x, alphas) for net in nets]).mean(dim=0)
        >>> y_hat, ok = predict_sweep(nets, dc.rules.Monotonic(0, "increasing"),
        ...                           torch.randn(10, 2), [0.0, 1.0], forward=mean)
        >>> tuple(y_hat.shape), tuple(ok.shape)
        ((2, 10, 1), (2, 10))
    """
    n = None
    if not is_loader(X):
        X = as_inputs(X, "X", *_placement(model))
        n = batch_len(X)
    outputs, checks = JoinedRows(n, dim=1), JoinedRows(n, dim=1)
    with eval_mode(model):
        for y_hat, ok, _ in _blocks(model, rule, X, alphas, seed, block_rows, False, forward):
            outputs.add(y_hat)
            if ok is not None:
                checks.add(ok)
    return outputs.result(), checks.result() if rule is not None else None


def satisfaction(
    rule: Rule,
    x: Inputs,
    y_hat: Tensor,
    perturbed: Sequence[Inputs | None],
    y_p: Sequence[Tensor | None],
) -> Tensor:
    """Rule check of outputs for several alphas.

    Args:
        rule: The rule to check.
        x: The inputs, (n, ...).
        y_hat: The outputs at every alpha, (n_alphas, n, ...).
        perturbed: Per leaf rule, its perturbed inputs (n, ...) or None.
        y_p: Per leaf rule, the outputs on its perturbed inputs (n_alphas, n, ...) or None.

    Returns:
        The satisfaction matrix, shape (n_alphas, n): 1.0 satisfied, 0.0 violated, NaN
            where the rule cannot judge, or where an output (on x or a perturbed x) is NaN
            or infinite.
    """
    A, b = y_hat.shape[0], batch_len(x)

    def tile(t: Inputs) -> Inputs:
        return apply(lambda v: v.unsqueeze(0).expand(A, *v.shape).reshape(A * b, *v.shape[1:]), t)

    ctx = make_context(
        rule,
        tile(x),
        y_hat.flatten(0, 1),
        [None if p is None else tile(p) for p in perturbed],
        [None if t is None else t.flatten(0, 1) for t in y_p],
    )
    satisfied, judged = judgement(rule, ctx)
    ok = satisfied.float()
    ok[~judged] = float("nan")
    ok = ok.view(A, b)
    ok[~_finite_rows(y_hat, y_p)] = float("nan")
    return ok


def _finite_rows(y_hat: Tensor, y_p: Sequence[Tensor | None]) -> Tensor:
    """(n_alphas, n): whether every output of a row, on x and on each perturbed x, is
    finite (a NaN output breaks no rule: it is not judged)."""
    A, b = y_hat.shape[0], y_hat.shape[1]
    outs = [y_hat, *(t for t in y_p if t is not None)]
    return torch.stack([t.reshape(A, b, -1).isfinite().all(-1) for t in outs]).all(0)


def sweep(
    model: nn.Module,
    rule: Rule | None,
    X: Any,
    y: Any = None,
    alphas: Alphas = SWEEP_ALPHAS,
    metrics: str | Sequence[str] = ("mae",),
    seed: int = 0,
    forward: AlphaForward | None = None,
) -> Table:
    """Metrics and verification ratio at every alpha, in eval mode.

    A Dataset or DataLoader is read block by block with the metrics accumulated as they go
    (in float64; auc keeps one score per row and alpha), so memory holds one block.

    Args:
        model: The trained model.
        rule: The rule whose verification ratio to measure; None measures none.
        X: The inputs: a tensor (array, DataFrame) or a dict of them, or a Dataset or
            DataLoader of (x, y) pairs.
        y: The targets of tensor `X`; None when `X` is a Dataset or DataLoader.
        alphas: The rule strengths; the default is 0, 0.1, ..., 1.
        metrics: Any of `"mae"`, `"mse"`, `"rmse"`, `"poisson"` (the mean Poisson deviance
            of log-rate outputs), `"bce"`, `"cross_entropy"`, `"accuracy"` and `"auc"` (one
            name alone is one metric); `"l1"`, as training also names the mae, gives the
            `mae` column.
        seed: Seeds the perturbations of the rule check, an integer >= 0.
        forward: The outputs at every alpha instead of the model's, as in
            [predict_sweep][deepctrl.core.evaluation.predict_sweep].

    Returns:
        A dict of equal-length lists: `alpha`, one list per metric and
            `verification_ratio` (when `rule` is given), the fraction of samples the rule
            can judge that satisfy it.

    Raises:
        ValueError: When `alphas` is empty or not finite numbers (booleans included), a
            metric is unknown, `y` is given with a Dataset or DataLoader or missing with
            tensors, `X` and `y` differ in rows, or the model cannot take the rows of `X`.
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    alphas = _alpha_list(alphas)
    if not alphas:
        raise ValueError("sweep needs at least one alpha")
    if rule is not None:
        checked_rule(rule)
    metrics = (metrics,) if isinstance(metrics, str) else tuple(metrics)  # "mae" is one metric
    metrics = tuple(dict.fromkeys("mae" if m == "l1" else m for m in metrics))
    unknown = [m for m in metrics if m not in SCORES]
    if unknown:
        raise ValueError(f"unknown metric {unknown[0]!r}; use one of {sorted(SCORES)}")
    if is_loader(X):
        if y is not None:
            raise ValueError("sweep takes the targets from the Dataset/DataLoader: pass y=None")
        return _streamed_sweep(model, rule, X, alphas, metrics, seed, True, forward)
    if y is None:
        raise ValueError("sweep needs y (or X as a Dataset/DataLoader of (x, y) pairs)")
    y = as_target(y, "y", dtype=torch.float64)
    y_hat, ok = predict_sweep(model, rule, X, alphas, seed, forward=forward)
    y = y.to(y_hat.device)
    if y.shape[0] != y_hat.shape[1]:
        raise ValueError(f"X has {y_hat.shape[1]} rows but y has {y.shape[0]}")
    table: Table = {"alpha": alphas}
    for name in metrics:  # in float64, whatever the model's precision
        table[name] = [float(score(name, _wide(y_hat[i]), y)) for i in range(len(alphas))]
    if ok is not None:
        # in float64: a share of whole counts, exact (in float32, 95 of 100 read 0.94999999)
        table["verification_ratio"] = [float(v) for v in ok.double().nanmean(dim=1)]
    return table


def _wide(t: Tensor) -> Tensor:
    """Floating-point outputs in float64, where metrics are computed."""
    return t.double() if t.is_floating_point() else t


def verification_ratio(
    model: nn.Module,
    rule: Rule,
    X: Any,
    alpha: AlphaValue = 0.0,
    seed: int = 0,
    forward: AlphaForward | None = None,
) -> float:
    """Fraction of the samples of `X` (that the rule can judge) on which the rule holds.

    Args:
        model: The trained model.
        rule: The rule to check.
        X: Tensors, a dict of them, or a Dataset/DataLoader (of inputs or (x, y) pairs).
        alpha: The rule strength to run the model at: a number or a one-element tensor.
        seed: Seeds the perturbations, an integer >= 0.
        forward: The outputs at every alpha instead of the model's, as in
            [predict_sweep][deepctrl.core.evaluation.predict_sweep].

    Returns:
        The verification ratio, between 0 and 1 (NaN when the rule can judge no sample).

    Raises:
        ValueError: When `alpha` is not a finite number, `seed` is not an integer >= 0, or
            the model cannot take the rows of `X`.
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    a = finite_real(alpha, "alpha")
    checked_rule(rule)
    if is_loader(X):
        table = _streamed_sweep(model, rule, X, [a], (), seed, False, forward)
        return table["verification_ratio"][0]
    _, ok = predict_sweep(model, rule, X, [a], seed, forward=forward)
    assert ok is not None
    return float(ok.double().nanmean())


@torch.no_grad()
def _streamed_sweep(
    model: nn.Module,
    rule: Rule | None,
    data: Any,
    alphas: Sequence[float],
    metrics: Sequence[str],
    seed: int,
    need_y: bool,
    forward: AlphaForward | None,
) -> Table:
    """`sweep` on a Dataset/DataLoader, accumulated block by block: memory holds one
    block (and, for auc, one score per row and alpha)."""
    A = len(alphas)
    sums = {name: torch.zeros(A, dtype=torch.float64) for name in metrics if name in MEANS}
    judged, held = torch.zeros(A, dtype=torch.float64), torch.zeros(A, dtype=torch.float64)
    scores: list[Tensor] = []
    targets: list[Tensor] = []
    n = rows = 0
    with eval_mode(model):
        for y_hat, ok, y in _blocks(model, rule, data, alphas, seed, None, need_y, forward):
            rows += y_hat.shape[1]
            if y is not None:
                for name, total in sums.items():
                    total += torch.stack(
                        [MEANS[name](_wide(y_hat[i]), y).sum() for i in range(A)]
                    ).cpu()
                n += y.shape[0]
            if "auc" in metrics:  # every output: several are the logits of classes
                scores.append(_wide(y_hat.reshape(A, y_hat.shape[1], -1)).cpu())
                targets.append(y.cpu())  # type: ignore[union-attr]
            if ok is not None:
                held += ok.nan_to_num(0.0).double().sum(dim=1).cpu()
                judged += (~ok.isnan()).double().sum(dim=1).cpu()
    if rows == 0:
        raise ValueError("the data has no rows (a DataLoader that yields no batch)")
    table: Table = {"alpha": list(alphas)}
    for name in metrics:
        if name == "auc":
            s, t = torch.cat(scores, dim=1), torch.cat(targets)
            table[name] = [float(score("auc", s[i], t)) for i in range(A)]
        else:
            mean = sums[name] / max(n, 1)
            table[name] = (mean.sqrt() if name == "rmse" else mean).tolist()
    if rule is not None:
        table["verification_ratio"] = (held / judged).tolist()
    return table


def _error_metric(table: Table, metric: str | None) -> str:
    if metric is not None:
        if metric in ("alpha", "verification_ratio"):
            raise ValueError(
                f"metric {metric!r} is not an error to minimise: pick an error or score column"
                + (", and reach a ratio with min_verification" if metric != "alpha" else "")
            )
        if metric not in table:
            raise ValueError(f"metric {metric!r} is not in the table ({sorted(table)})")
        return metric
    for name in (*ERROR_METRICS, *sorted(HIGHER_IS_BETTER)):
        if name in table:
            return name
    raise ValueError(f"the table has no metric to select on ({sorted(table)})")


def select_alpha(
    table: Table,
    min_verification: float | None = None,
    objective: str = "min_error",
    metric: str | None = None,
) -> float:
    """Pick an alpha from a [sweep][deepctrl.core.evaluation.sweep] table.

    With `min_verification`: the smallest alpha whose verification ratio is at least
    that, or, when `metric` is given too, the alpha with the best `metric` among them (as
    the table estimators' `select_alpha(X, y, min_verification=...)` does when given
    labels). Otherwise `objective="min_error"`: the alpha with the best `metric` (accuracy
    and auc are maximised, the others minimised; NaN counts as the worst).

    When several alphas tie on `metric`, the smallest is taken, as the table estimators'
    `"min_error"` choice takes it; their rule-keeping choice (`alpha="auto"`, and
    `select_alpha(X, y, min_verification=...)`) takes the largest, the stronger rule.

    Args:
        table: A table of [sweep][deepctrl.core.evaluation.sweep], or any mapping of
            columns (a pandas DataFrame, tensors, arrays); rows are read by position.
        min_verification: The verification ratio to reach; None picks by `metric`.
        objective: How to pick without `min_verification`; `"min_error"` is the only one.
        metric: The column to optimise; None is the first error metric in the table
            (poisson, mae, mse, rmse, bce, cross_entropy), else accuracy or auc, and with
            `min_verification` the smallest alpha reaching it.

    Returns:
        The chosen alpha.

    Raises:
        ValueError: When no alpha reaches `min_verification` (the message names the
            highest ratio), the table has no verification ratio or no such metric, the
            metric has no value (all NaN), or `objective` is not `"min_error"`.
        TypeError: When `table` is not a dict of columns.

    Examples:
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2],
        ...               "verification_ratio": [0.2, 0.8, 0.99]}, min_verification=0.9)
        1.0
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2]})
        0.5
        >>> select_alpha({"alpha": [0.0, 0.5, 1.0], "mae": [3, 1, 2],
        ...               "verification_ratio": [0.95, 0.97, 0.99]}, 0.9, metric="mae")
        0.5
    """
    if not (hasattr(table, "get") and hasattr(table, "items")):
        raise TypeError(
            f"table must be a dict of columns, as dc.sweep returns, got {type(table).__name__}"
        )
    if objective != "min_error":
        raise ValueError(f"objective must be 'min_error', got {objective!r}")
    table = {k: v.tolist() if hasattr(v, "tolist") else v for k, v in table.items()}
    alphas = table.get("alpha", [])
    if len(alphas) == 0:
        raise ValueError("the table has no alphas to select from")
    uneven = [k for k, v in table.items() if hasattr(v, "__len__") and len(v) != len(alphas)]
    if uneven:
        raise ValueError(
            f"the table's columns must have one value per alpha: {uneven[0]} has "
            f"{len(table[uneven[0]])} for {len(alphas)} alphas"
        )
    if min_verification is not None:
        given, min_verification = (
            min_verification,
            finite_real(min_verification, "min_verification"),
        )
        if not 0 < min_verification <= 1:
            raise ValueError(
                f"min_verification is a ratio in (0, 1], got {given!r}"
                + (
                    f" (for {min_verification:g} %, give {min_verification / 100:g})"
                    if 1 < min_verification <= 100
                    else ""
                )
            )
        if "verification_ratio" not in table:
            raise ValueError("the table has no verification_ratio (sweep without a rule)")
        ratios = table["verification_ratio"]
        ok = [i for i, r in enumerate(ratios) if r >= min_verification]
        if not ok:
            judged = [i for i in range(len(alphas)) if not math.isnan(ratios[i])]
            if not judged:
                raise ValueError("no alpha has a verification ratio: the rule judged no row")
            best = max(judged, key=lambda i: ratios[i])
            raise ValueError(
                f"no alpha reaches verification ratio {min_verification}"
                f" (highest {ratios[best]:.3f} at alpha {alphas[best]})"
            )
        return float(min(alphas[i] for i in ok)) if metric is None else _best_by(table, metric, ok)
    return _best_by(table, metric, list(range(len(alphas))))


def _best_by(table: Table, metric: str | None, rows: list[int]) -> float:
    """The alpha of ``rows`` (indices into the table) with the best ``metric``, the smallest
    on ties; an error when none of them has a value."""
    name = _error_metric(table, metric)
    sign = -1.0 if name in HIGHER_IS_BETTER else 1.0
    values = [sign * v if not math.isnan(v) else math.inf for v in table[name]]
    if all(math.isnan(table[name][i]) for i in rows):
        raise ValueError(f"no alpha has a value of {name} (every one is NaN)")
    alphas = table["alpha"]
    return float(alphas[min(rows, key=lambda i: (values[i], float(alphas[i])))])
