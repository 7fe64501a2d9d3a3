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


def data_scales(X: Tensor, y: Tensor) -> tuple[Tensor, Tensor]:
    """Per-feature std of X and per-output std of y (1 where a std is 0; 0.5 for labels)."""
    x_scale = X.reshape(X.shape[0], -1).float().std(dim=0)
    x_scale = x_scale.where(x_scale > 0, x_scale.new_ones(()))
    if not y.dtype.is_floating_point:
        return x_scale, x_scale.new_full((1,), 0.5)
    y_scale = y.reshape(y.shape[0], -1).std(dim=0)
    return x_scale, y_scale.where(y_scale > 0, y_scale.new_ones(()))


def reference_rule_loss(rule: Rule, ctx: Context, x_scale: Tensor, y_scale: Tensor) -> Tensor:
    """Per-sample rule loss with perturbation leaves measured on the reference response.

    >>> import torch
    >>> from deepctrl.rules import Monotonic
    >>> x = torch.tensor([[1.0, 2.0]]); xp = torch.tensor([[1.1, 2.0]])
    >>> ctx = Context(x, torch.zeros(1, 1), xp, torch.zeros(1, 1))
    >>> reference_rule_loss(Monotonic(0, "increasing"), ctx, torch.tensor([0.5, 1.0]),
    ...                     torch.tensor([2.0])).tolist()
    [0.4000000059604645]
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
