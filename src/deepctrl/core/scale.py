"""The rule-loss scale behind ``rho="auto"``.

The paper balances the objectives with rho = L_rule,0 / L_task,0 at the initial weights.
For a rule judged on the output (the pendulum's energy rule) L_rule,0 is representative.
For a perturbation rule it is not: a fresh network barely reacts to a small input change,
so L_rule,0 is near 0, rho is tiny and the rule wins at every alpha > 0 (docs/rho.md).

``rho="auto"`` therefore measures a perturbation rule on a *reference* response instead:
the violation a model would show if its output moved against the rule at the data's typical
slope, s_y / s_x (standard deviations over the training set), i.e. per sample
sum_k |x_p,k - x_k| s_y / s_x,k. Rules judged on the output keep the paper's L_rule,0.
"""

from __future__ import annotations

from typing import Any, cast

import torch
from torch import Tensor

from deepctrl.core.data import block_rows
from deepctrl.core.inputs import Inputs
from deepctrl.core.rules.base import Context, Rule
from deepctrl.core.sources import blocks, is_loader

Scales = Tensor | dict[str, Tensor]
"""Per-feature std of the inputs: one tensor, or one per named input."""


def at_least_float32(dtype: torch.dtype) -> torch.dtype:
    """The dtype a statistic of ``dtype`` values is kept in: float64 for float64 data (a
    float64 model is not rounded to float32 anywhere), float32 otherwise.

    >>> at_least_float32(torch.float64), at_least_float32(torch.bfloat16)
    (torch.float64, torch.float32)
    """
    return torch.float64 if dtype == torch.float64 else torch.float32


def column_std(t: Tensor, block: int | None = None, weight: Tensor | None = None) -> Tensor:
    """Standard deviation (n - 1) of every column of ``t`` (rows first), in blocks of rows
    (by default of :func:`~deepctrl.core.data.block_rows`, a few MB whatever the width) so
    that no temporary as large as ``t`` is made; 1 where it is 0. With ``weight``, row i
    counts w_i / mean(w) times (integer weights: the std of the repeated rows up to a
    common factor).

    >>> import torch
    >>> column_std(torch.tensor([[1.0, 5.0], [3.0, 5.0]])).tolist()
    [1.4142135381698608, 1.0]
    """
    flat = t.reshape(t.shape[0], -1)
    block = block or block_rows(flat)
    parts = range(0, len(flat), block)
    u = (
        torch.ones(len(flat), dtype=torch.float64, device=t.device)
        if weight is None
        else weight.double() / weight.double().mean()
    )
    total = float(u.sum())
    mean = (
        cast(
            Tensor,
            sum((u[i : i + block, None] * flat[i : i + block].double()).sum(dim=0) for i in parts),
        )
        / total
    )
    sq = cast(
        Tensor,
        sum(
            (u[i : i + block, None] * (flat[i : i + block].double() - mean) ** 2).sum(dim=0)
            for i in parts
        ),
    )
    std = (sq / max(1.0, total - 1)).sqrt().to(at_least_float32(t.dtype))
    return std.where(std > 0, std.new_ones(()))


def data_scales(X: Inputs, y: Tensor, weight: Tensor | None = None) -> tuple[Scales, Tensor]:
    """Per-feature std of X (of each floating-point input of a dict) and per-output std of
    y (1 where a std is 0; 0.5 for labels), rows weighted by ``weight`` if given."""
    if isinstance(X, dict):
        x_scale: Scales = {
            k: column_std(v, weight=weight) for k, v in X.items() if v.dtype.is_floating_point
        }
    else:
        x_scale = column_std(X, weight=weight)
    y_std = column_std(y, weight=weight) if y.dtype.is_floating_point else None
    return x_scale, _target_scale(y_std)


def _target_scale(std: Tensor | None) -> Tensor:
    return std if std is not None else torch.full((1,), 0.5)


class RunningScales:
    """:func:`data_scales` accumulated over batches, for data that is read in batches and
    never held at once: each batch's mean and sum of squared deviations (in float64), merged
    as batches come (Chan, Golub and LeVeque's pairwise update), so that a feature whose
    mean is large next to its spread (timestamps in seconds) keeps its spread.

    >>> acc = RunningScales()
    >>> acc.add(torch.tensor([[1.0, 5.0]]), torch.tensor([[0.0]]))
    >>> acc.add(torch.tensor([[3.0, 5.0]]), torch.tensor([[2.0]]))
    >>> x_scale, y_scale = acc.result()
    >>> [round(v, 4) for v in x_scale.tolist()], y_scale.tolist()
    ([1.4142, 1.0], [1.4142135381698608])
    """

    def __init__(self) -> None:
        self.n = 0
        self.moments: dict[str, tuple[int, Tensor, Tensor]] = {}
        """Per input: rows seen, their mean and their sum of squared deviations."""
        self.dtypes: dict[str, torch.dtype] = {}
        self.single = True

    def _add(self, key: str, t: Tensor) -> None:
        self.dtypes[key] = at_least_float32(t.dtype)
        flat = t.reshape(t.shape[0], -1).double()
        n_b = flat.shape[0]
        if n_b == 0:
            return
        mean_b = flat.mean(dim=0)
        sq_b = ((flat - mean_b) ** 2).sum(dim=0)
        if key not in self.moments:
            self.moments[key] = (n_b, mean_b, sq_b)
            return
        n_a, mean_a, sq_a = self.moments[key]
        n = n_a + n_b
        delta = mean_b - mean_a
        mean = mean_a + delta * (n_b / n)
        sq = sq_a + sq_b + delta**2 * (n_a * n_b / n)
        self.moments[key] = (n, mean, sq)

    def add(self, x: Inputs, y: Tensor) -> None:
        self.single = not isinstance(x, dict)
        for k, v in x.items() if isinstance(x, dict) else [("", x)]:
            if v.dtype.is_floating_point:
                self._add(k, v)
        if y.dtype.is_floating_point:
            self._add("\0y", y)
        self.n += y.shape[0]

    def _std(self, key: str) -> Tensor:
        n, _, sq = self.moments[key]
        std = (sq / max(1, n - 1)).sqrt().to(self.dtypes[key])
        return std.where(std > 0, std.new_ones(()))

    def result(self) -> tuple[Scales, Tensor]:
        """(x_scale, y_scale) as :func:`data_scales` gives them."""
        if self.n == 0:
            raise ValueError(
                "the training data has no rows (an empty Dataset, or a DataLoader that yields "
                "no batch, e.g. with drop_last=True and fewer rows than batch_size)"
            )
        y_scale = _target_scale(self._std("\0y") if "\0y" in self.moments else None)
        if self.single:
            return self._std(""), y_scale
        return {k: self._std(k) for k in self.moments if k != "\0y"}, y_scale


def reference_rule_loss(rule: Rule, ctx: Context, x_scale: Scales, y_scale: Tensor) -> Tensor:
    """Per-sample rule loss with perturbation leaves measured on the reference response,
    on the samples each leaf judges (a threshold rule: the pairs that cross its threshold).
    The scales are shared by every sample, or given per sample (one row each).

    >>> import torch
    >>> from deepctrl.core.rules import Monotonic
    >>> x = torch.tensor([[1.0, 2.0]]); xp = torch.tensor([[1.1, 2.0]])
    >>> ctx = Context(x, torch.zeros(1, 1), xp, torch.zeros(1, 1))
    >>> loss = reference_rule_loss(Monotonic(0, "increasing"), ctx, torch.tensor([0.5, 1.0]),
    ...                            torch.tensor([2.0]))
    >>> round(float(loss[0]), 5)  # |1.1 - 1.0| / 0.5 * 2.0
    0.4
    """
    leaves = rule.leaves()
    parts = ctx.parts or (ctx,)
    weights = rule.leaf_weights()
    total: Tensor | float = 0.0
    for leaf, part, w in zip(leaves, parts, weights, strict=True):
        if part.x_p is None:
            total = total + w * leaf.loss(part)
            continue
        out = getattr(leaf, "output", None)
        if out is None and hasattr(leaf, "output_index"):
            out = 0  # a feature rule's None is its first output
        s_y = y_scale[..., out] if out is not None and out < y_scale.shape[-1] else y_scale.mean(-1)
        judged = leaf.applicable(part).to(s_y.dtype)  # a threshold judges crossing pairs only
        total = total + w * _scaled_shift(part.x, part.x_p, x_scale) * s_y * judged
    return cast(Tensor, total)  # a rule has at least one leaf


def _scaled_shift(x: Inputs, x_p: Inputs, x_scale: Scales) -> Tensor | int:
    """Per sample, sum over every moved coordinate of |x_p - x| / std of its feature."""

    def one(a: Tensor, b: Tensor, scale: Tensor) -> Tensor:
        return ((b - a).reshape(a.shape[0], -1).abs() / scale).sum(dim=1)

    if isinstance(x_scale, dict):
        shifts = (one(x[k], x_p[k], s) for k, s in x_scale.items())  # type: ignore[index]
        return sum(shifts)
    return one(x, x_p, x_scale)  # type: ignore[arg-type]


def scales_of(
    data: Any,
    block_rows: int,
    device: torch.device,
    dtype: torch.dtype,
    weight: Tensor | None = None,
    what: str = "data",
) -> tuple[Scales, Tensor]:
    """:func:`data_scales` of ``(X, y)`` tensors (rows weighted by ``weight``), or of a
    Dataset/DataLoader read in blocks of ``block_rows`` (``what`` names it in errors).

    >>> x_scale, y_scale = scales_of((torch.tensor([[0.0], [2.0]]), torch.tensor([[1.0], [3.0]])),
    ...                              64, torch.device("cpu"), torch.float32)
    >>> round(float(x_scale[0]), 4), round(float(y_scale[0]), 4)
    (1.4142, 1.4142)
    """
    if not is_loader(data):
        X, y = data
        return data_scales(X, y, weight)
    acc = RunningScales()
    for x, y in blocks(data, block_rows, device, dtype, what):
        acc.add(x, y)  # type: ignore[arg-type]
    return acc.result()
