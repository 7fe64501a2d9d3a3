"""What a training method reads and gives: the per-seed `Terms` of a batch, the
`Coefficients` of an objective linear in them, and the `LossEstimate` with which a method
measures the losses over the training set."""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import torch
from torch import Tensor


class Terms(NamedTuple):
    """Per-seed quantities of one batch, for S seeds.

    Attributes:
        task: The task loss, (S,).
        rule: The rule loss, (S,).
        violations: The mean signed violation of each rule leaf, (S, n_rules).
        alpha: The rule strength each seed trained at, (S,).
    """

    task: Tensor
    rule: Tensor
    violations: Tensor
    alpha: Tensor

    def detached(self) -> Terms:
        """The same terms cut from the autograd graph (what a method's hooks receive).

        >>> x = torch.ones(2, requires_grad=True)
        >>> Terms(x * 2, x, x[:, None], x).detached().task.requires_grad
        False
        """
        return Terms(*(t.detach() for t in self))


class Coefficients(NamedTuple):
    """Per-seed weights of a linear objective; a float weighs every seed alike.

    The objective is `task * t.task + rule * t.rule + sum_k violations_k * t.violations_k`.

    Attributes:
        task: The weight of the task loss, (S,) or a float.
        rule: The weight of the rule loss, (S,) or a float.
        violations: The weight of each signed violation, (S, n_rules) or a float.
    """

    task: Tensor | float
    rule: Tensor | float
    violations: Tensor | float

    def combine(self, t: Terms) -> Tensor:
        """The per-seed objective of terms `t`.

        Args:
            t: One batch's terms.

        Returns:
            The objective, (S,).

        Examples:
            >>> c = Coefficients(1.0, torch.tensor([0.5]), 0.0)
            >>> c.combine(Terms(torch.tensor([2.0]), torch.tensor([4.0]), torch.ones(1, 1),
            ...                 torch.zeros(1))).tolist()
            [4.0]
        """
        return (
            self.task * t.task + self.rule * t.rule + (self.violations * t.violations).sum(dim=-1)
        )

    def as_tensors(self, like: Tensor, n_rules: int) -> Coefficients:
        """Every weight as a tensor.

        Args:
            like: A tensor of S values, whose dtype and device the weights take.
            n_rules: The number of rule leaves.

        Returns:
            The weights, shapes (S,), (S,) and (S, n_rules).

        Examples:
            >>> Coefficients(1.0, 0.5, 0.0).as_tensors(torch.zeros(2), 1).violations.shape
            torch.Size([2, 1])
        """
        n = len(like)

        def full(value: Tensor | float, shape: tuple[int, ...]) -> Tensor:
            if isinstance(value, Tensor):
                return value.to(like).expand(shape)
            return torch.full(shape, float(value), dtype=like.dtype, device=like.device)

        return Coefficients(
            full(self.task, (n,)), full(self.rule, (n,)), full(self.violations, (n, n_rules))
        )

    def checked(self, n: int, n_rules: int, method: str) -> Coefficients:
        """The weights themselves, when every tensor among them fits `n` seeds.

        Args:
            n: The number of seeds.
            n_rules: The number of violation columns of the terms.
            method: The method's name, for the message.

        Returns:
            The weights, unchanged.

        Raises:
            ValueError: When a weight does not broadcast to (n,), (n,) or (n, n_rules).

        Examples:
            >>> Coefficients(torch.ones(5), 1.0, 0.0).checked(2, 1, "Mine")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ValueError: Mine.coefficients gave task of shape (5,) for 2 seed(s): ...
        """
        for field, shape in zip(self._fields, ((n,), (n,), (n, n_rules)), strict=True):
            value = getattr(self, field)
            if isinstance(value, Tensor) and not _broadcasts(tuple(value.shape), shape):
                raise ValueError(
                    f"{method}.coefficients gave {field} of shape {tuple(value.shape)} for {n} "
                    f"seed(s): a per-seed weight has shape {shape} or is a float"
                )
        return self


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether a tensor of `shape` broadcasts to `to` without growing it (in plain Python:
    every training step asks).

    >>> _broadcasts((1, 3), (2, 3)), _broadcasts((5,), (2,)), _broadcasts((2, 1, 1), (1, 1))
    (True, False, False)
    """
    return len(shape) <= len(to) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(to), strict=False)
    )


LossEstimate = Callable[[bool], tuple[Tensor, Tensor]]
"""`estimate(reference)`: per-seed (L_rule at alpha 1, L_task at alpha 0) over the training
set; with `reference=True` perturbation rules are measured as in `deepctrl.core.scale`."""
