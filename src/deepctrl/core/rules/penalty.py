"""Rules written as a differentiable penalty r(x, y_hat) <= tau (paper Sec. 3)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.inputs import batch_len
from deepctrl.core.rules.base import Context, SignedRule


class Penalty(SignedRule):
    """The rule r(x, y_hat) <= tau for a differentiable `fn(x, y_hat) -> r` of shape (batch,).

    Loss relu(r - tau); satisfied when r <= tau, or r < tau with `strict=True` (the
    pendulum's energy rule counts E(y_hat) < E(x) as satisfied, so it uses `strict=True`).
    A penalty is code, so a model file cannot store it.

    Args:
        fn: `fn(x, y_hat)`, one value r per sample; `x` is what the model takes (one
            tensor, or the dict of its named inputs). In a table estimator's `rules`, `fn`
            gets two dicts instead, the table's number columns and the model's outputs by
            name, in the table's units (`lambda cols, out: out["y"] - cols["cap"]`).
        tau: The bound r must not exceed.
        strict: Count r = tau as a violation.

    Raises:
        ValueError: When `tau` is not a finite number, or `strict` not True or False.
        TypeError: When `fn` is not callable.

    Examples:
        >>> import torch
        >>> rule = Penalty(lambda x, y: y[:, 0] - x[:, 0])
        >>> ctx = Context(x=torch.tensor([[1.0], [1.0]]), y_hat=torch.tensor([[3.0], [0.5]]))
        >>> rule.loss(ctx).tolist(), rule.satisfied(ctx).tolist()
        ([2.0, 0.0], [False, True])
    """

    def __init__(self, fn: Callable[..., Tensor], tau: float = 0.0, strict: bool = False) -> None:
        if not callable(fn):
            raise TypeError(f"Penalty's fn must be a function fn(x, y_hat), got {fn!r}")
        self.fn = fn
        self.tau = finite_real(tau, "Penalty's tau")
        if not isinstance(strict, bool | np.bool_):  # the text "no" from a config, say
            raise ValueError(f"Penalty's strict must be True or False, got {strict!r}")
        self.strict = bool(strict)

    def __repr__(self) -> str:
        """The function's name, and `tau` and `strict` when not their defaults, e.g.
        ``Penalty(fn=energy_gap, strict=True)``; a subclass that describes itself (a table
        `Expression`) shows its description."""
        if type(self).config is not Penalty.config:
            return super().__repr__()
        shown = [f"fn={getattr(self.fn, '__name__', type(self.fn).__name__)}"]
        if self.tau != 0.0:
            shown.append(f"tau={self.tau!r}")
        if self.strict:
            shown.append(f"strict={self.strict!r}")
        return f"{type(self).__name__}({', '.join(shown)})"

    def violation(self, ctx: Context) -> Tensor:
        r = self.fn(ctx.x, ctx.y_hat)
        n = batch_len(ctx.x)
        if not isinstance(r, Tensor):
            raise ValueError(
                f"Penalty fn must return a tensor with one value per sample, shape ({n},), "
                f"got {type(r).__name__}: compute it from x and y_hat with torch"
            )
        if tuple(r.shape) != (n,):
            raise ValueError(
                f"Penalty fn must return one value per sample, shape ({n},), got {tuple(r.shape)}"
            )
        return r - self.tau
