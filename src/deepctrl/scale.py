"""The rule-loss scale behind ``rho="auto"``.

The paper balances the objectives with rho = L_rule,0 / L_task,0 at the initial weights.
For a rule judged on the output (the pendulum's energy rule) L_rule,0 is representative.
For a perturbation rule it is not: a fresh network barely reacts to a small input change,
so L_rule,0 is near 0, rho is tiny and the rule wins at every alpha > 0 (REFERENCE.md).

``rho="auto"`` therefore measures a perturbation rule on a *reference* response instead:
the violation a model would show if its output moved against the rule at the data's typical
slope, s_y / s_x (standard deviations over the training set), i.e. per sample
sum_k |x_p,k - x_k| s_y / s_x,k. Rules judged on the output keep the paper's L_rule,0.
"""

from __future__ import annotations

from torch import Tensor

from deepctrl.rules.base import Context, Rule


def column_std(t: Tensor, block: int = 65536) -> Tensor:
    """Standard deviation (n - 1) of every column of ``t`` (rows first), in blocks of rows
    so that no temporary as large as ``t`` is made; 1 where it is 0.

    >>> import torch
    >>> column_std(torch.tensor([[1.0, 5.0], [3.0, 5.0]])).tolist()
    [1.4142135381698608, 1.0]
    """
    flat = t.reshape(t.shape[0], -1)
    mean = sum(flat[i:i + block].double().sum(dim=0) for i in range(0, len(flat), block))
    mean = mean / len(flat)
    sq = sum(((flat[i:i + block].double() - mean) ** 2).sum(dim=0)
             for i in range(0, len(flat), block))
    std = (sq / max(1, len(flat) - 1)).sqrt().float()
    return std.where(std > 0, std.new_ones(()))


def data_scales(X: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Per-feature std of X and per-output std of y (1 where a std is 0; 0.5 for labels)."""
    x_scale = column_std(X)
    if not y.dtype.is_floating_point:
        return x_scale, x_scale.new_full((1,), 0.5)
    return x_scale, column_std(y)


def reference_rule_loss(rule: Rule, ctx: Context, x_scale: Tensor, y_scale: Tensor) -> Tensor:
    """Per-sample rule loss with perturbation leaves measured on the reference response.

    >>> import torch
    >>> from deepctrl.rules import Monotonic
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
    total = 0.0
    for leaf, part, w in zip(leaves, parts, weights, strict=True):
        if part.x_p is None:
            total = total + w * leaf.loss(part)
            continue
        out = getattr(leaf, "output", None)
        s_y = y_scale[out] if out is not None and out < y_scale.numel() else y_scale.mean()
        shift = (part.x_p - part.x).reshape(part.x.shape[0], -1).abs() / x_scale
        total = total + w * shift.sum(dim=1) * s_y
    return total
