"""Perturbation rules (paper Sec. 3): the output must move one way when a feature rises."""

from __future__ import annotations

import copy
import numbers
from collections.abc import Callable
from typing import Any, TypeVar

import numpy as np
import torch
from torch import Tensor

from deepctrl.core.checks import finite_real, index
from deepctrl.core.inputs import Inputs, pick, replace
from deepctrl.core.rules.base import Context, SignedRule, output_column
from deepctrl.core.rules.perturbation import (
    Perturbation,
    Relative,
    perturbation_arg,
    perturbation_from_config,
)

DIRECTIONS = ("increasing", "decreasing")

_F = TypeVar("_F", bound="_FeatureRule")


def _check_direction(direction: str) -> str:
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be 'increasing' or 'decreasing', got {direction!r}")
    return direction


Output = int | str | float | bool | None
"""A model output: its index, or (in estimators) a class label or a target column's name;
None is the first output (in a binary classifier: the probability of `classes_[1]`)."""


def _check_output(output: Any) -> Output:
    """The output a rule acts on, as a plain Python value (a label taken from an estimator's
    ``classes_`` is a NumPy scalar).

    >>> _check_output(np.bool_(True)), _check_output(np.int64(2)), _check_output(np.str_("late"))
    (True, 2, 'late')
    """
    if isinstance(output, np.bool_):
        return bool(output)
    if output is None or isinstance(output, str | bool):
        return str(output) if isinstance(output, np.str_) else output
    if isinstance(output, numbers.Integral):
        return int(output)
    if isinstance(output, numbers.Real):
        return float(output)
    raise ValueError(f"output must be an index, a class label or a target name, got {output!r}")


class _FeatureRule(SignedRule):
    """Shared parts of rules that raise one feature by delta >= 0 and compare outputs.

    `input` names the perturbed input when the model takes a dict of inputs. The feature
    indexes the input's LAST axis: on a (batch, features) input it is a column, on a
    (batch, time, features) input that feature is raised at every time step.

    `perturbation=None` is Relative(0.1) (the paper's) on tensors; estimators choose it
    from the column instead (`deepctrl.tabular.table_rules.default_perturbation`).
    `output` is an index on tensors; estimators also take a class label or a target
    column's name. `missing_input`, set by the table estimators, indexes the input that is
    1 where the feature's value is missing (imputed): the verification ratio does not count
    those samples (`judged`).
    """

    missing_input: int | None = None

    def __init__(
        self,
        feature: int | str,
        direction: str,
        output: Output,
        perturbation: Perturbation | None,
        input: str | None = None,
    ) -> None:
        self.feature = feature if isinstance(feature, str) else index(feature, "feature")
        self.direction = _check_direction(direction)
        self.output = _check_output(output)
        self.given_perturbation = (
            None if perturbation is None else perturbation_arg(perturbation, "perturbation")
        )
        self.input = input

    @property
    def perturbation(self) -> Perturbation:
        """How far the feature is raised: the perturbation given, or `Relative(0.1)`."""
        return self.given_perturbation if self.given_perturbation is not None else Relative(0.1)

    @property
    def output_index(self) -> int:
        """The output as an index (None is 0).

        Raises:
            ValueError: When the output is a class label or a target name, which an
                estimator must translate.
        """
        if self.output is None:
            return 0
        if isinstance(self.output, int) and not isinstance(self.output, bool):
            return self.output
        raise ValueError(
            f"{type(self).__name__} output {self.output!r} names a class or a "
            "target: estimators translate names; on tensors give the output's "
            "index"
        )

    def _values(self, x: Inputs) -> Tensor:
        """The input holding the feature; it must hold real numbers."""
        t = pick(x, self.input, type(self).__name__)
        if not t.dtype.is_floating_point:
            raise ValueError(
                f"{type(self).__name__} cannot perturb input "
                f"{self.input or 'x'} of dtype {t.dtype}: it needs real values"
            )
        return t

    def _index(self, x: Tensor) -> int:
        if not isinstance(self.feature, int):
            raise ValueError(
                f"feature {self.feature!r} is a column name: on tensors give its index "
                "(estimators translate column names)"
            )
        if not -x.shape[-1] <= self.feature < x.shape[-1]:
            raise ValueError(
                f"feature index {self.feature} is out of range for {x.shape[-1]} input features"
            )
        return self.feature

    def perturb(self, x: Inputs, generator: torch.Generator | None = None) -> Inputs:
        t = self._values(x)
        k = self._index(t)
        values, t_p = t[..., k], t.clone()
        delta = self.perturbation.delta(values, generator)
        if delta.shape != values.shape:
            raise ValueError(
                f"{type(self.perturbation).__name__}.delta returned {tuple(delta.shape)} for "
                f"values of {tuple(values.shape)}: one shift per value"
            )
        if bool((delta < 0).any()):  # a rule judged on lowered values reads backwards
            raise ValueError(
                f"{type(self.perturbation).__name__}.delta returned a negative shift "
                f"({float(delta.min()):g}): a perturbation raises the value (delta >= 0), "
                "and the rule's direction says which way the output must then go"
            )
        t_p[..., k] = values + delta
        return replace(x, self.input, t_p)

    def _samples_where(self, ctx: Context, test: Callable[[Tensor, Tensor], Tensor]) -> Tensor:
        """Samples where `test(feature, perturbed feature)` holds at any time step."""
        if ctx.x_p is None:
            raise ValueError(f"{type(self).__name__} needs the perturbed input")
        t, t_p = self._values(ctx.x), self._values(ctx.x_p)
        k = self._index(t)
        hits = test(t[..., k], t_p[..., k])
        return hits.reshape(hits.shape[0], -1).any(dim=1)

    def judged(self, ctx: Context) -> Tensor:
        judged = self.applicable(ctx)
        if self.missing_input is None:
            return judged
        flags = self._values(ctx.x)[..., self.missing_input]
        return judged & ~(flags > 0.5).reshape(flags.shape[0], -1).any(dim=1)

    def _crossing(self, ctx: Context, threshold: float) -> Tensor:
        """Samples where the feature crosses `threshold` upward (at any time step)."""
        return self._samples_where(ctx, lambda v, v_p: (v < threshold) & (v_p > threshold))

    def _gap(self, ctx: Context) -> Tensor:
        """y_hat - y_hat_p for an increasing rule, y_hat_p - y_hat for a decreasing one."""
        if ctx.x_p is None or ctx.y_hat_p is None:
            raise ValueError(f"{type(self).__name__} needs the perturbed input and output")
        y = output_column(ctx.y_hat, self.output_index)
        y_p = output_column(ctx.y_hat_p, self.output_index)
        return y - y_p if self.direction == "increasing" else y_p - y

    def with_feature(self: _F, feature: int, perturbation: Perturbation | None = None) -> _F:
        """A copy on another feature.

        Args:
            feature: The feature's index.
            perturbation: Another perturbation; None keeps this rule's.

        Returns:
            The copy.
        """
        out = copy.copy(self)
        out.feature = int(feature)
        if perturbation is not None:
            out.given_perturbation = perturbation_arg(perturbation, "perturbation")
        return out

    def with_output(self: _F, output: int, direction: str) -> _F:
        """A copy on another output.

        Args:
            output: The output's index.
            direction: `"increasing"` or `"decreasing"`.

        Returns:
            The copy.

        Raises:
            ValueError: When `direction` is neither.
        """
        out = copy.copy(self)
        out.output, out.direction = int(output), _check_direction(direction)
        return out

    def config(self) -> dict[str, Any]:
        given = self.given_perturbation
        out = {
            "kind": type(self).__name__.lower(),
            "feature": self.feature,
            "direction": self.direction,
            "output": self.output,
            "perturbation": given.config() if given is not None else None,
        }
        return {**out, "input": self.input} if self.input is not None else out


class Monotonic(_FeatureRule):
    """Output `output` rises (`"increasing"`) or falls (`"decreasing"`) with `feature`.

    The feature is raised by delta >= 0 drawn by `perturbation`; loss relu(y_hat - y_hat_p)
    for increasing, relu(y_hat_p - y_hat) for decreasing; satisfied only on a strict move in
    the right direction (as the paper counts). A sample whose feature the perturbation did
    not move (delta = 0, as a relative shift gives at 0) is not judged. The feature indexes
    the input's last axis: on a (batch, time, features) input it is raised at every time
    step.

    Args:
        feature: The feature's index on tensors; estimators also take a column name.
        direction: `"increasing"` or `"decreasing"`.
        output: The output's index (None is the first); estimators also take a class label
            or a target column's name.
        perturbation: How far the feature is raised; None is
            [Relative(0.1)][deepctrl.rules.Relative] (the paper's) on tensors, while
            estimators choose it from the column.
        input: With a dict of inputs, the name of the one holding the feature.

    Raises:
        ValueError: When `direction` is neither `"increasing"` nor `"decreasing"`, or
            `output` is not an index, a class label or a name.
        TypeError: When `perturbation` is not a [Perturbation][deepctrl.rules.Perturbation].

    Examples:
        >>> rule = Monotonic(0, "decreasing")
        >>> x = torch.tensor([[1.0], [1.0]]); y = torch.tensor([[2.0], [2.0]])
        >>> ctx = Context(x, y, x * 1.05, torch.tensor([[1.5], [2.5]]))
        >>> rule.loss(ctx).tolist(), rule.satisfied(ctx).tolist()
        ([0.0, 0.5], [True, False])
    """

    def __init__(
        self,
        feature: int | str,
        direction: str,
        output: Output = None,
        perturbation: Perturbation | None = None,
        input: str | None = None,
    ) -> None:
        super().__init__(feature, direction, output, perturbation, input)

    def violation(self, ctx: Context) -> Tensor:
        return self._gap(ctx)

    def applicable(self, ctx: Context) -> Tensor:
        """The samples whose feature the perturbation moved (at any time step): where it
        did not (a relative shift of a feature at 0), the outputs cannot differ, and the
        verification ratio does not count the sample."""
        return self._samples_where(ctx, lambda v, v_p: v_p != v)

    def satisfied(self, ctx: Context) -> Tensor:
        return super().satisfied(ctx) | ~self.applicable(ctx)


class Threshold(_FeatureRule):
    """The Boolean rule of paper Sec. 3: output `output` is higher (`"increasing"`) or
    lower (`"decreasing"`) once `feature` exceeds `threshold`.

    Only pairs that cross the threshold (x_k < a < x_p,k) are judged; the loss is
    relu(y_hat - y_hat_p) * I(x_k < a) * I(x_p,k > a) for `"increasing"`. On inputs with
    a time axis a pair is judged when the feature crosses at any time step.

    Args:
        feature: The feature's index on tensors; estimators also take a column name.
        threshold: The value a of the feature at which the output changes.
        output: The output's index (None is the first); estimators also take a class label
            or a target column's name.
        direction: `"increasing"` (higher above the threshold) or `"decreasing"`.
        perturbation: How far the feature is raised; None is
            [Relative(0.1)][deepctrl.rules.Relative] on tensors, while estimators choose it
            from the column.
        input: With a dict of inputs, the name of the one holding the feature.

    Raises:
        ValueError: When `direction` is neither `"increasing"` nor `"decreasing"`, or
            `output` is not an index, a class label or a name.

    Examples:
        >>> rule = Threshold(0, 1.0, output=0, direction="increasing")
        >>> x = torch.tensor([[0.95], [0.5]]); xp = torch.tensor([[1.02], [0.52]])
        >>> ctx = Context(x, torch.tensor([[0.6], [0.6]]), xp, torch.tensor([[0.4], [0.1]]))
        >>> [round(v, 4) for v in rule.loss(ctx).tolist()], rule.applicable(ctx).tolist()
        ([0.2, 0.0], [True, False])
    """

    def __init__(
        self,
        feature: int | str,
        threshold: float,
        output: Output = None,
        direction: str = "increasing",
        perturbation: Perturbation | None = None,
        input: str | None = None,
    ) -> None:
        super().__init__(feature, direction, output, perturbation, input)
        self.threshold = finite_real(threshold, "threshold")

    def applicable(self, ctx: Context) -> Tensor:
        return self._crossing(ctx, self.threshold)

    def violation(self, ctx: Context) -> Tensor:
        return self._gap(ctx) * self.applicable(ctx).to(ctx.y_hat.dtype)

    def satisfied(self, ctx: Context) -> Tensor:
        return super().satisfied(ctx) | ~self.applicable(ctx)

    def config(self) -> dict[str, Any]:
        return {**super().config(), "threshold": self.threshold}


def feature_rule_from_config(cfg: dict[str, Any]) -> Monotonic | Threshold:
    """Rebuild a [Monotonic][deepctrl.rules.Monotonic] or
    [Threshold][deepctrl.rules.Threshold] from its `config()`.

    Args:
        cfg: The description.

    Returns:
        The rule.
    """
    pert = perturbation_from_config(cfg["perturbation"]) if cfg["perturbation"] else None
    name = cfg.get("input")
    if cfg["kind"] == "monotonic":
        return Monotonic(cfg["feature"], cfg["direction"], cfg["output"], pert, name)
    return Threshold(cfg["feature"], cfg["threshold"], cfg["output"], cfg["direction"], pert, name)
