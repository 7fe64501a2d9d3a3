"""The task and rule losses of a batch, written once for :class:`deepctrl.Objective` (one
model) and :func:`deepctrl.fit` (S seeds stacked along a leading axis).

Tensors here carry the seeds on axis 0 and the rows on axis 1, flattened to (S * rows, ...)
where a rule or a per-sample loss looks at them; one model is the case S = 1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, apply, batch_len
from deepctrl.core.method_terms import Terms
from deepctrl.core.metrics import SIGMOID_HINT
from deepctrl.core.rules.base import Context, Rule, forward_all, make_context, violation_of
from deepctrl.core.scale import Scales, reference_rule_loss

Forward = Callable[[Inputs], Tensor]
"""Stacked inputs (S, rows, ...) -> stacked outputs (S, rows, ...)."""


def flat(x: Inputs) -> Inputs:
    """(S, rows, ...) -> (S * rows, ...)."""
    return apply(lambda t: t.flatten(0, 1), x)


def _flat_all(ts: Sequence[Inputs | None]) -> list:
    return [None if t is None else flat(t) for t in ts]


def compute_terms(
    rule: Rule | None,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    x: Inputs,
    y: Tensor,
    y_hat: Tensor,
    perturbed: Sequence[Inputs | None],
    y_perturbed: Sequence[Tensor | None],
    alpha: Tensor,
    n_global: int,
    need_violations: bool,
    exact: bool = False,
    weight: Tensor | None = None,
    check_grad: bool = False,
) -> tuple[Terms, Context | None]:
    """Per-seed task loss, rule loss and signed violations of one batch, and the rule's
    context (None without a rule).

    Inputs, targets and outputs are stacked (S, rows, ...); the per-sample losses are summed
    over the rows and divided by ``n_global`` (the batch size, or the global batch under
    data-parallel training). With ``exact`` the signed violations are summed in float64.
    ``weight`` (S, rows): per-row weights, each row's losses and violations multiplied by
    its weight before the sum (None: no weighting at all). With ``check_grad`` (the first
    batch) a rule loss without a gradient is refused (see :func:`check_gradient`).
    """
    S, b = y_hat.shape[0], y_hat.shape[1]

    def total(per_sample: Tensor, what: str, dtype: torch.dtype | None = None) -> Tensor:
        if not torch.compiler.is_compiling() and per_sample.numel() != S * b:
            raise ValueError(
                f"{what} gave {tuple(per_sample.shape)} for {S * b} samples: it must return "
                "one value per sample"
            )
        rows = per_sample.view(S, b)
        if weight is not None:
            rows = rows * weight
        return rows.sum(1, dtype=dtype) / n_global

    task = total(loss_fn(y_hat.flatten(0, 1), y.flatten(0, 1)), "the task loss")
    zero = task.new_zeros(S)
    if rule is None:
        return Terms(task, zero, zero[:, None], alpha), None
    ctx = make_context(
        rule, flat(x), y_hat.flatten(0, 1), _flat_all(perturbed), _flat_all(y_perturbed)
    )
    per_sample = rule.loss(ctx)
    if check_grad:
        check_gradient(rule, per_sample, y_hat)
    rule_loss = total(per_sample, f"{type(rule).__name__}.loss")
    if need_violations:
        parts = ctx.parts or (ctx,)
        dtype = torch.float64 if exact else None
        viol = torch.stack(
            [
                total(violation_of(leaf, c), f"{type(leaf).__name__}.violation", dtype)
                for leaf, c in zip(rule.leaves(), parts, strict=True)
            ],
            dim=1,
        )
    else:
        viol = zero[:, None]
    return Terms(task, rule_loss, viol, alpha), ctx


def check_gradient(rule: Rule, per_sample: Tensor, y_hat: Tensor) -> None:
    """One error naming `rule` when its loss cannot train the model: not a floating-point
    tensor, or cut from the graph while the outputs are in it (`.detach()`, a comparison).

    >>> from deepctrl.core.rules import Penalty
    >>> check_gradient(Penalty(lambda x, y: y[:, 0]), torch.zeros(2) > 0,
    ...                torch.zeros(2, 1))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Penalty.loss returned a bool tensor without a gradient: ...
    """
    cut = torch.is_grad_enabled() and y_hat.requires_grad and not per_sample.requires_grad
    if not per_sample.is_floating_point() or cut:
        raise ValueError(
            f"{type(rule).__name__}.loss returned a "
            f"{str(per_sample.dtype).removeprefix('torch.')} tensor without a gradient: a "
            "rule's loss must be a differentiable float function of the outputs (ctx.y_hat, "
            "ctx.y_hat_p), not a comparison, a count or a detached value"
        )


def block_sums(
    forward: Forward,
    rule: Rule | None,
    loss_fn: Callable[[Tensor, Tensor], Tensor],
    x: Inputs,
    y: Tensor,
    perturbed: Sequence[Inputs | None],
    what: str,
    scales: tuple[Scales, Tensor] | None = None,
    exact: bool = False,
    weight: Tensor | None = None,
) -> Tensor:
    """Per-seed sums (S,) in float64 over a block of rows of the task loss (``what="task"``),
    the rule loss (``"rule"``) or the rule loss on the reference response of
    :mod:`deepctrl.core.scale` (``"reference"``, needs ``scales``). The rows are summed in
    the losses' dtype, or with ``exact`` in float64 (the same sum however rows are split).
    With ``weight`` (S, rows) the sums are of every row's loss times its weight."""
    S, m = batch_len(x), batch_len(x, 1)

    def total(per_sample: Tensor) -> Tensor:
        if per_sample.numel() != S * m:
            loss = "the task loss" if what == "task" or rule is None else "the rule loss"
            raise ValueError(
                f"{loss} gave {tuple(per_sample.shape)} for {S * m} samples: it must return "
                "one value per sample"
            )
        rows = per_sample.view(S, m)
        if exact:
            rows = rows.double()
            return (rows * weight.double() if weight is not None else rows).sum(1)
        return (rows * weight if weight is not None else rows).sum(1).double()

    if what == "task" or rule is None:
        y_hat = forward(x)
        return total(loss_fn(y_hat.flatten(0, 1), y.flatten(0, 1)))
    y_hat, y_p = forward_all(forward, x, perturbed, dim=1)
    ctx = make_context(rule, flat(x), y_hat.flatten(0, 1), _flat_all(perturbed), _flat_all(y_p))
    if what == "reference":
        if scales is None:
            raise ValueError("the reference rule loss needs the data scales")
        # the reference stands in for it, unchecked
        check_nonnegative(rule, rule.loss(ctx), y_hat.shape[0])
        per_sample = reference_rule_loss(rule, ctx, *scales)
    else:
        per_sample = rule.loss(ctx)
    check_nonnegative(rule, per_sample, y_hat.shape[0])
    return total(per_sample)


def check_nonnegative(rule: Rule, per_sample: Tensor, copies: int = 1) -> None:
    """One error naming `rule` when its per-sample loss is negative anywhere; `per_sample`
    holds `copies` models' losses on the same rows one after another (seeds run at once),
    and the error counts rows.

    >>> from deepctrl.core.rules import Penalty
    >>> check_nonnegative(Penalty(abs), torch.tensor([-1.0, 0.0, -2.0, 0.0]),
    ...                   copies=2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: Penalty.loss gave a negative value on 1 of 2 rows (as low as -2): ...
    """
    negative = per_sample < 0
    if bool(negative.any()):
        rows = negative.reshape(copies, -1).any(dim=0)
        raise ValueError(
            f"{type(rule).__name__}.loss gave a negative value on {int(rows.sum())} of "
            f"{rows.numel()} rows (as low as {float(per_sample.min()):.3g}): a rule's loss must "
            "be >= 0, and 0 where the rule holds"
        )


def check_outputs(y_hat: Tensor, y: Tensor, task_loss: object) -> None:
    """Clear errors for outputs that do not fit the targets under a named task loss (a
    callable loss is not checked). ``y_hat`` and ``y`` are one batch, rows first.

    >>> check_outputs(torch.zeros(4, 1), torch.zeros(4, 2), "mse")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the target has 2 values per row (shape (4, 2)) but the model outputs 1 ...
    """
    if not isinstance(task_loss, str):
        return
    n = y_hat.shape[0]
    if task_loss == "cross_entropy":
        _check_classes(y_hat, y)
        return
    per_output = y_hat.reshape(n, -1).shape[1]
    per_target = y.reshape(y.shape[0], -1).shape[1]
    if per_output != per_target:
        raise ValueError(
            f"the target has {per_target} value{'s' * (per_target != 1)} per row (shape "
            f"{tuple(y.shape)}) but the model outputs {per_output} (shape {tuple(y_hat.shape)}):"
            f" they must match for task_loss={task_loss!r}"
        )
    if task_loss == "bce":
        if float(y.min()) < 0 or float(y.max()) > 1:
            raise ValueError(
                f"task_loss='bce' needs targets in [0, 1], got {float(y.min()):.3g} to "
                f"{float(y.max()):.3g}"
            )
        lo, hi = float(y_hat.min()), float(y_hat.max())
        if lo < 0 or hi > 1:
            raise ValueError(
                f"task_loss='bce' needs probabilities in [0, 1], but the model "
                f"outputs values from {lo:.3g} to {hi:.3g}: {SIGMOID_HINT}"
            )


def _check_classes(y_hat: Tensor, y: Tensor) -> None:
    if y_hat.dim() != 2:
        raise ValueError(
            "task_loss='cross_entropy' needs outputs of shape (batch, classes), "
            f"got {tuple(y_hat.shape)}"
        )
    if y.is_floating_point() or y.reshape(y.shape[0], -1).shape[1] != 1:
        width = y.reshape(y.shape[0], -1).shape[1]
        raise ValueError(
            "task_loss='cross_entropy' needs one integer class label per row, got "
            f"{str(y.dtype).removeprefix('torch.')} targets of {width} value(s) per row: give "
            "labels 0, 1, ... as a long tensor (y.long())"
        )
    classes = y_hat.shape[1]
    if int(y.min()) < 0 or int(y.max()) >= classes:
        raise ValueError(
            f"task_loss='cross_entropy': labels must be in 0..{classes - 1} for "
            f"{classes} model outputs, got {int(y.min())}..{int(y.max())}"
        )
