"""The rule interface: a rule looks at a batch and answers per sample.

A rule may ask for a perturbed copy of the input (`perturb`); the trainer then runs
x and x_p through the model in one batched forward and hands both to the rule in a
[Context][deepctrl.rules.Context].
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, batch_len, cat, device_of
from deepctrl.core.rules.described import EqualByDescription, described_repr


@dataclass(frozen=True)
class Context:
    """What a rule sees: inputs, outputs and, for a perturbing rule, their perturbed twins.

    Args:
        x: The inputs: one tensor or a dict of named inputs, as the model takes them.
        y_hat: The model's outputs on `x`.
        x_p: The perturbed inputs, in the form of `x`; None for a rule that perturbs nothing.
        y_hat_p: The model's outputs on `x_p`, or None.
        parts: For [AllOf][deepctrl.rules.AllOf], one context per member rule.
        memo: What `violation_of` computed on this batch, so that a rule's loss and its
            signed constraint share one evaluation.
    """

    x: Inputs
    y_hat: Tensor
    x_p: Inputs | None = None
    y_hat_p: Tensor | None = None
    parts: tuple[Context, ...] = field(default=())
    memo: dict[tuple[int, bool], Tensor] = field(default_factory=dict, repr=False, compare=False)


class Rule(EqualByDescription, abc.ABC):
    """Base class of all rules.

    Subclasses implement `loss` (differentiable, >= 0, shape (batch,)) and `satisfied`
    (bool, shape (batch,)); they may override `perturb` to request a perturbed input,
    `violation` to give a signed constraint (used by the Lagrangian dual method) and
    `applicable` when only some samples can be judged.
    """

    @abc.abstractmethod
    def loss(self, ctx: Context) -> Tensor:
        """How much each sample breaks the rule.

        Args:
            ctx: The batch's inputs and outputs.

        Returns:
            The loss per sample, differentiable and >= 0, shape (batch,).
        """

    @abc.abstractmethod
    def satisfied(self, ctx: Context) -> Tensor:
        """Whether each sample follows the rule.

        Args:
            ctx: The batch's inputs and outputs.

        Returns:
            Bools, shape (batch,).
        """

    def perturb(self, x: Inputs, generator: torch.Generator | None = None) -> Inputs | None:
        """A perturbed copy of `x`, which the model also runs on.

        Args:
            x: The batch's inputs.
            generator: The random generator of the draws; None uses the global one.

        Returns:
            The perturbed inputs, or None when the rule needs no perturbation (the
                default).
        """
        return None

    def violation(self, ctx: Context) -> Tensor:
        """The signed constraint g, with g <= 0 when satisfied.

        Args:
            ctx: The batch's inputs and outputs.

        Returns:
            g per sample, shape (batch,); the loss by default.
        """
        return self.loss(ctx)

    def applicable(self, ctx: Context) -> Tensor:
        """The samples the rule can judge; the verification ratio counts these only.

        Args:
            ctx: The batch's inputs and outputs.

        Returns:
            Bools, shape (batch,); all True by default.
        """
        return torch.ones(batch_len(ctx.x), dtype=torch.bool, device=device_of(ctx.x))

    def judged(self, ctx: Context) -> Tensor:
        """The samples the verification ratio counts: those the rule can judge
        (`applicable`), less those whose feature has no value of its own (a table's
        missing value, which the model reads as its column's mean).

        Args:
            ctx: The batch's inputs and outputs.

        Returns:
            Bools, shape (batch,); `applicable` by default.
        """
        return self.applicable(ctx)

    def leaves(self) -> list[Rule]:
        """The single rules this rule is made of.

        Returns:
            The leaves: the rule itself, unless it combines others.
        """
        return [self]

    def leaf_weights(self) -> list[float]:
        """The weight of each leaf in the rule loss.

        Returns:
            One weight per leaf, in the order of `leaves()`.
        """
        return [1.0]

    def __repr__(self) -> str:
        """The rule's class and its description's values, e.g. ``Monotonic(feature='price',
        direction='decreasing', output=0)``; ``Name(...)`` for rules that cannot describe
        themselves."""
        return described_repr(self)

    def config(self) -> dict[str, Any]:
        """A JSON description, for model files.

        Returns:
            The description, read back by
                [rule_from_config][deepctrl.rules.rule_from_config].

        Raises:
            ValueError: For rules built from code (such as
                [Penalty][deepctrl.rules.Penalty]), which cannot be saved.
        """
        raise ValueError(f"{type(self).__name__} cannot be described in a model file")


class SignedRule(Rule):
    """A rule defined by a signed violation g: loss relu(g), satisfied g < 0 (or g <= 0).

    Subclasses implement `violation` only.

    Attributes:
        strict: True: satisfied where g < 0; False: where g <= 0.
    """

    strict: bool = True

    @abc.abstractmethod
    def violation(self, ctx: Context) -> Tensor: ...

    def loss(self, ctx: Context) -> Tensor:
        return torch.relu(violation_of(self, ctx))

    def satisfied(self, ctx: Context) -> Tensor:
        g = violation_of(self, ctx).detach()
        return g < 0 if self.strict else g <= 0


def violation_of(rule: Rule, ctx: Context) -> Tensor:
    """`rule.violation(ctx)`, computed once per context (and grad mode): a rule's loss and
    the signed constraint of the Lagrangian dual method share one evaluation and one backward.

    Args:
        rule: The rule.
        ctx: The batch's context, whose `memo` keeps the result.

    Returns:
        The signed violation per sample.

    Examples:
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
    """Column `index` of a (batch, ...) output, flattened per sample.

    Args:
        y: The outputs, (batch, ...).
        index: The column of the outputs flattened per sample, (batch, -1).

    Returns:
        One value per sample, shape (batch,).

    Examples:
        >>> output_column(torch.arange(6.0).reshape(3, 2), 1)
        tensor([1., 3., 5.])

    Raises:
        ValueError: When the outputs have no column `index`.
    """
    flat = y.reshape(y.shape[0], -1)
    if not -flat.shape[1] <= index < flat.shape[1]:
        raise ValueError(
            f"rule output index {index} is out of range for a model with {flat.shape[1]} "
            "output(s) per sample"
        )
    return flat[:, index]


def checked_rule(rule: Any, what: str = "rule") -> Rule:
    """`rule` itself when it is a deepctrl [Rule][deepctrl.rules.Rule].

    Args:
        rule: What was given as a rule.
        what: How the message names it.

    Returns:
        The rule.

    Raises:
        ValueError: When `rule` is not a Rule (a plain function gets a hint to wrap it).

    Examples:
        >>> checked_rule(3.0)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: rule must be a deepctrl rule (dc.rules.Monotonic, ...), got float
    """
    if isinstance(rule, Rule):
        return rule
    hint = ": wrap a function of (x, y_hat) in dc.rules.Penalty(fn)" if callable(rule) else ""
    raise ValueError(
        f"{what} must be a deepctrl rule (dc.rules.Monotonic, Threshold, Penalty, AllOf or a "
        f"Rule subclass), got {type(rule).__name__}{hint}"
    )


def _form(x: Inputs) -> Any:
    return {k: tuple(v.shape) for k, v in x.items()} if isinstance(x, dict) else tuple(x.shape)


def perturb_all(rule: Rule, x: Inputs, generator: torch.Generator | None) -> list[Inputs | None]:
    """One perturbed input (or None) per leaf rule, in `rule.leaves()` order.

    Args:
        rule: The rule.
        x: The inputs.
        generator: The random generator of the draws.

    Returns:
        The perturbed inputs.

    Raises:
        ValueError: When a leaf's `perturb` returns inputs of another form or shape than x.
    """
    return [perturbed_by(leaf, x, generator) for leaf in rule.leaves()]


def judgement(rule: Rule, ctx: Context) -> tuple[Tensor, Tensor]:
    """`rule.satisfied(ctx)` and `rule.judged(ctx)`, checked to be one bool per sample.

    Raises:
        ValueError: When either is not.

    Examples:
        >>> from deepctrl.core.rules import Penalty
        >>> ctx = Context(torch.zeros(2, 1), torch.tensor([[1.0], [-1.0]]))
        >>> [t.tolist() for t in judgement(Penalty(lambda x, y: y[:, 0]), ctx)]
        [[False, True], [True, True]]
    """
    n = batch_len(ctx.x)
    out = []
    for what in ("satisfied", "judged"):
        t = getattr(rule, what)(ctx)
        if not isinstance(t, Tensor) or t.shape != (n,) or t.dtype != torch.bool:
            got = (
                f"{str(t.dtype).removeprefix('torch.')} of shape {tuple(t.shape)}"
                if isinstance(t, Tensor)
                else type(t).__name__
            )
            raise ValueError(
                f"{type(rule).__name__}.{what} gave {got} for {n} samples: it must return one "
                "bool per sample"
            )
        out.append(t)
    return out[0], out[1]


def _dtypes(x: Inputs) -> Any:
    def name(t: Tensor) -> str:
        return str(t.dtype).removeprefix("torch.")

    return {k: name(v) for k, v in x.items()} if isinstance(x, dict) else name(x)


def perturbed_by(leaf: Rule, x: Inputs, generator: torch.Generator | None) -> Inputs | None:
    """`leaf.perturb(x, generator)`, checked to have the form, shape and dtype of `x`.

    Raises:
        ValueError: When it has not.
    """
    p = leaf.perturb(x, generator)
    if p is None:
        return p
    if not isinstance(p, dict | Tensor) or _form(p) != _form(x):
        got = _form(p) if isinstance(p, dict | Tensor) else type(p).__name__
        raise ValueError(
            f"{type(leaf).__name__}.perturb returned {got} for inputs of {_form(x)}: a "
            "perturbed input has the form and shape of x"
        )
    if _dtypes(p) != _dtypes(x):
        raise ValueError(
            f"{type(leaf).__name__}.perturb returned {_dtypes(p)} for inputs of {_dtypes(x)}: "
            "a perturbed input has the dtype of x (cast it with .to(x.dtype))"
        )
    return p


def forward_all(
    forward: Callable[[Inputs], Tensor],
    x: Inputs,
    perturbed: Sequence[Inputs | None],
    dim: int = 0,
    out_dim: int | None = None,
) -> tuple[Tensor, list[Tensor | None]]:
    """Run x and every perturbed x through `forward` in ONE call.

    Args:
        forward: The model's forward.
        x: The inputs.
        perturbed: One perturbed input (or None) per leaf rule.
        dim: The axis along which the inputs are joined.
        out_dim: The axis along which the outputs are split; None is `dim`.

    Returns:
        The outputs on x, and the outputs on each perturbed input (None where there is
            none).
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
    """The context for `rule` (nested for rules with several leaves).

    Args:
        rule: The rule.
        x: The inputs.
        y_hat: The outputs on `x`.
        perturbed: One perturbed input (or None) per leaf rule.
        y_perturbed: The outputs on each perturbed input (or None).

    Returns:
        The context.
    """
    parts = tuple(Context(x, y_hat, xp, yp) for xp, yp in zip(perturbed, y_perturbed, strict=True))
    if len(parts) == 1 and rule.leaves() == [rule]:
        return parts[0]
    return Context(x, y_hat, parts=parts)


def finite_rows(y_hat: Tensor, y_p: Sequence[Tensor | None]) -> Tensor:
    """(n_alphas, n): whether every output of a row, on x and on each perturbed x, is
    finite (a NaN output breaks no rule: it is not judged), also the outputs the rule does
    not read (a penalty may read any).

    >>> finite_rows(torch.tensor([[[1.0], [float("nan")]]]), [None]).tolist()
    [[True, False]]
    """
    A, b = y_hat.shape[0], y_hat.shape[1]
    outs = [y_hat, *(t for t in y_p if t is not None)]
    return torch.stack([t.reshape(A, b, -1).isfinite().all(-1) for t in outs]).all(0)
