"""The rule interface: a rule looks at a batch and answers per sample.

A rule may ask for a perturbed copy of the input (``perturb``); the trainer then runs
x and x_p through the model in one batched forward and hands both to the rule in a
:class:`Context`.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, batch_len, cat, device_of


@dataclass(frozen=True)
class Context:
    """What a rule sees: inputs, outputs and, for a perturbing rule, their perturbed twins.

    ``x`` and ``x_p`` are one tensor or a dict of named inputs, as the model takes them.
    For :class:`~deepctrl.core.rules.AllOf`, ``parts`` holds one context per member rule.
    ``memo`` keeps what :func:`violation_of` computed on this batch.
    """

    x: Inputs
    y_hat: Tensor
    x_p: Inputs | None = None
    y_hat_p: Tensor | None = None
    parts: tuple[Context, ...] = field(default=())
    memo: dict[tuple[int, bool], Tensor] = field(default_factory=dict, repr=False, compare=False)


class Rule(abc.ABC):
    """Base class of all rules.

    Subclasses implement ``loss`` (differentiable, >= 0, shape (batch,)) and ``satisfied``
    (bool, shape (batch,)); they may override ``perturb`` to request a perturbed input,
    ``violation`` to give a signed constraint (used by the Lagrangian dual method) and
    ``applicable`` when only some samples can be judged.
    """

    @abc.abstractmethod
    def loss(self, ctx: Context) -> Tensor: ...

    @abc.abstractmethod
    def satisfied(self, ctx: Context) -> Tensor: ...

    def perturb(self, x: Inputs, generator: torch.Generator | None = None) -> Inputs | None:
        """A perturbed copy of ``x``, or None when the rule needs no perturbation."""
        return None

    def violation(self, ctx: Context) -> Tensor:
        """Signed constraint g with g <= 0 when satisfied; defaults to the loss."""
        return self.loss(ctx)

    def applicable(self, ctx: Context) -> Tensor:
        """Samples the rule can judge (all by default)."""
        return torch.ones(batch_len(ctx.x), dtype=torch.bool, device=device_of(ctx.x))

    def leaves(self) -> list[Rule]:
        """The single rules this rule is made of (itself, unless it combines others)."""
        return [self]

    def leaf_weights(self) -> list[float]:
        """The weight of each leaf in the rule loss."""
        return [1.0]

    def config(self) -> dict[str, Any]:
        """A JSON description, for model files. Rules built from code cannot be saved."""
        raise ValueError(f"{type(self).__name__} cannot be described in a model file")


class SignedRule(Rule):
    """A rule defined by a signed violation g: loss relu(g), satisfied g < 0 (or g <= 0)."""

    strict: bool = True

    @abc.abstractmethod
    def violation(self, ctx: Context) -> Tensor: ...

    def loss(self, ctx: Context) -> Tensor:
        return torch.relu(violation_of(self, ctx))

    def satisfied(self, ctx: Context) -> Tensor:
        g = violation_of(self, ctx).detach()
        return g < 0 if self.strict else g <= 0


def violation_of(rule: Rule, ctx: Context) -> Tensor:
    """``rule.violation(ctx)``, computed once per context (and grad mode): a rule's loss and
    the signed constraint of the Lagrangian dual method share one evaluation and one backward.

    >>> from deepctrl.core.rules import Penalty
    >>> calls = []
    >>> rule = Penalty(lambda x, y: calls.append(1) or y[:, 0] - x[:, 0])
    >>> ctx = Context(x=torch.ones(2, 1), y_hat=torch.tensor([[3.0], [0.5]]))
    >>> rule.loss(ctx).tolist(), violation_of(rule, ctx).tolist(), len(calls)
    ([2.0, 0.0], [2.0, -0.5], 1)
    """
    key = (id(rule), torch.is_grad_enabled())
    if key not in ctx.memo:
        ctx.memo[key] = rule.violation(ctx)
    return ctx.memo[key]


def output_column(y: Tensor, index: int) -> Tensor:
    """Column ``index`` of a (batch, ...) output, flattened per sample.

    >>> output_column(torch.arange(6.0).reshape(3, 2), 1)
    tensor([1., 3., 5.])
    """
    return y.reshape(y.shape[0], -1)[:, index]


def perturb_all(rule: Rule, x: Inputs, generator: torch.Generator | None) -> list[Inputs | None]:
    """One perturbed input (or None) per leaf rule, in ``rule.leaves()`` order."""
    return [leaf.perturb(x, generator) for leaf in rule.leaves()]


def forward_all(
    forward: Callable[[Inputs], Tensor],
    x: Inputs,
    perturbed: Sequence[Inputs | None],
    dim: int = 0,
    out_dim: int | None = None,
) -> tuple[Tensor, list[Tensor | None]]:
    """Run x and every perturbed x through ``forward`` in ONE call.

    Inputs are joined along ``dim`` and outputs split along ``out_dim`` (default ``dim``).
    """
    extra = [p for p in perturbed if p is not None]
    if not extra:
        return forward(x), [None] * len(perturbed)
    y_all = forward(cat([x, *extra], dim=dim))
    out_dim = dim if out_dim is None else out_dim
    chunks = iter(y_all.split(batch_len(x, dim), dim=out_dim))
    y_hat = next(chunks)
    return y_hat, [None if p is None else next(chunks) for p in perturbed]


def make_context(
    rule: Rule,
    x: Inputs,
    y_hat: Tensor,
    perturbed: Sequence[Inputs | None],
    y_perturbed: Sequence[Tensor | None],
) -> Context:
    """The context for ``rule`` (nested for rules with several leaves)."""
    parts = tuple(
        Context(x, y_hat, xp, yp) for xp, yp in zip(perturbed, y_perturbed, strict=True)
    )
    if len(parts) == 1 and rule.leaves() == [rule]:
        return parts[0]
    return Context(x, y_hat, parts=parts)
