"""The model's outputs and the rule's satisfaction at many alphas (`predict_sweep`), computed
block by block with perturbations drawn alike for every alpha; the alphas given, checked;
results joined across blocks (`JoinedRows`)."""

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
from deepctrl.core.data import as_inputs, check_materialized
from deepctrl.core.inputs import REFUSALS, Alphas, Inputs, apply, batch_len, cat, refused_rows, rows
from deepctrl.core.rules.base import (
    Rule,
    finite_rows,
    forward_all,
    judgement,
    make_context,
    perturbed_by,
)
from deepctrl.core.seeding import derive_seed
from deepctrl.core.sources import blocks, is_loader

AlphaForward = Callable[[Inputs, Sequence[float]], Tensor]
"""Outputs (n_alphas, rows, ...) of a block of inputs at every alpha: how a sweep runs the
model. The default is [predict_alphas][deepctrl.core.calls.predict_alphas] of the model; an
ensemble passes the average of its members'."""


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


def alpha_list(alphas: Any) -> list[float]:
    """``alphas`` as finite floats (see `alpha_items`); a boolean, a text or None among
    them is an error naming `alphas`.

    >>> alpha_list(torch.tensor([0.0, 0.5]))
    [0.0, 0.5]
    >>> alpha_list([0.0, True])
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


def sweep_blocks(
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
    alphas = alpha_list(alphas)
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
        for y_hat, ok, _ in sweep_blocks(model, rule, X, alphas, seed, block_rows, False, forward):
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
    ok[~finite_rows(y_hat, y_p)] = float("nan")
    return ok
