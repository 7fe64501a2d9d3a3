"""How far a perturbation rule moves its feature: delta >= 0 for each sample."""

from __future__ import annotations

import abc
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.rules.described import EqualByDescription, described_repr


class Perturbation(EqualByDescription, abc.ABC):
    """Draws a non-negative shift delta for each value of the perturbed feature."""

    @abc.abstractmethod
    def delta(self, values: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """The shift of each value.

        Args:
            values: The feature's values.
            generator: The random generator of the draws; None uses the global one.

        Returns:
            delta >= 0, in the shape, dtype and device of `values`.
        """

    def __repr__(self) -> str:
        """The class and its settings, e.g. ``Relative(u=0.2)``."""
        return described_repr(self)

    def reach(self, values: Tensor) -> Tensor | None:
        """The largest shift each value can be given (its draws lie in [0, reach]), or None
        when not known (a perturbation of your own need not say).

        Args:
            values: The feature's values.

        Returns:
            The bound per value, or None.
        """
        return None

    def config(self) -> dict[str, Any]:
        """A JSON description, for model files; a perturbation of your own needs it only
        to be saved.

        Returns:
            The description, with its `"kind"`.

        Raises:
            ValueError: For a perturbation that does not describe itself.
        """
        raise ValueError(f"{type(self).__name__} cannot be described in a model file")


def perturbation_arg(value: object, what: str) -> Perturbation:
    """``value`` when it is a [Perturbation][deepctrl.rules.Perturbation]; anything else (a
    number, a name) is a TypeError naming ``what``.

    >>> perturbation_arg(0.1, "perturbation")
    Traceback (most recent call last):
    ...
    TypeError: perturbation must be a Perturbation such as dc.rules.Relative(0.1), got 0.1
    """
    if not isinstance(value, Perturbation):
        raise TypeError(
            f"{what} must be a Perturbation such as dc.rules.Relative(0.1), got {value!r}"
        )
    return value


def _uniform(values: Tensor, generator: torch.Generator | None) -> Tensor:
    return torch.rand(values.shape, generator=generator, dtype=values.dtype, device=values.device)


class Relative(Perturbation):
    """delta = gamma |x| with gamma ~ U[0, u] (the paper's). Zero where x = 0.

    Args:
        u: The largest relative shift, > 0 (0.1: up to 10 % of the value).

    Raises:
        ValueError: When `u` is not positive.

    Examples:
        >>> g = torch.Generator().manual_seed(0)
        >>> bool((Relative(0.1).delta(torch.tensor([-2.0, 3.0]), g)
        ...       <= torch.tensor([0.2, 0.3])).all())
        True
    """

    def __init__(self, u: float = 0.1) -> None:
        self.u = finite_real(u, "Relative perturbation's u", positive=True)

    def delta(self, values: Tensor, generator: torch.Generator | None = None) -> Tensor:
        return self.u * _uniform(values, generator) * values.abs()

    def reach(self, values: Tensor) -> Tensor:
        return self.u * values.abs()

    def config(self) -> dict[str, Any]:
        return {"kind": "relative", "u": self.u}


class Additive(Perturbation):
    """delta ~ U[0, scale], independent of x: use it for features near zero.

    Args:
        scale: The largest shift, > 0, in the feature's units.

    Raises:
        ValueError: When `scale` is not positive.

    Examples:
        >>> float(Additive(0.5).delta(torch.zeros(1000),
        ...                           torch.Generator().manual_seed(0)).max()) <= 0.5
        True
    """

    def __init__(self, scale: float) -> None:
        self.scale = finite_real(scale, "Additive perturbation's scale", positive=True)

    def delta(self, values: Tensor, generator: torch.Generator | None = None) -> Tensor:
        return self.scale * _uniform(values, generator)

    def reach(self, values: Tensor) -> Tensor:
        return torch.full_like(values, self.scale)

    def config(self) -> dict[str, Any]:
        return {"kind": "additive", "scale": self.scale}


class Standardized(Perturbation):
    """Apply `inner` in raw units to a feature stored standardized as (raw - mean) / std.

    Args:
        inner: The perturbation in raw units.
        mean: The feature's raw mean.
        std: The feature's raw standard deviation, > 0.

    Raises:
        ValueError: When `std` is not positive.
        TypeError: When `inner` is not a perturbation.
    """

    def __init__(self, inner: Perturbation, mean: float, std: float) -> None:
        self.inner = perturbation_arg(inner, "Standardized's inner")
        self.mean = finite_real(mean, "Standardized perturbation's mean")
        self.std = finite_real(std, "Standardized perturbation's std", positive=True)

    def delta(self, values: Tensor, generator: torch.Generator | None = None) -> Tensor:
        if max(abs(self.mean), self.std) < 1e30:  # raw values fit the values' precision
            return self.inner.delta(values * self.std + self.mean, generator) / self.std
        raw = values.double() * self.std + self.mean  # beyond float32 (1e38): in float64
        return (self.inner.delta(raw, generator) / self.std).to(values.dtype)

    def reach(self, values: Tensor) -> Tensor | None:
        inner = self.inner.reach(values.double() * self.std + self.mean)
        return None if inner is None else (inner / self.std).to(values.dtype)

    def config(self) -> dict[str, Any]:
        return {
            "kind": "standardized",
            "inner": self.inner.config(),
            "mean": self.mean,
            "std": self.std,
        }


def perturbation_from_config(cfg: dict[str, Any]) -> Perturbation:
    """Rebuild a perturbation from its `config()`.

    Args:
        cfg: The description.

    Returns:
        The perturbation.

    Raises:
        ValueError: When the description's kind is unknown or it lacks a value its kind
            needs.
        TypeError: When `cfg` is not a dict.
    """
    if not isinstance(cfg, dict):
        raise TypeError(f"cfg must be a perturbation's config() dict, got {cfg!r}")
    kind = cfg.get("kind")
    if kind is None:
        raise ValueError(
            "a perturbation's config needs 'kind' (relative, additive or standardized), "
            f"got {cfg!r}"
        )
    try:
        if kind == "relative":
            return Relative(cfg["u"])
        if kind == "additive":
            return Additive(cfg["scale"])
        if kind == "standardized":
            return Standardized(perturbation_from_config(cfg["inner"]), cfg["mean"], cfg["std"])
    except KeyError as missing:
        raise ValueError(f"the {kind} perturbation's config needs {missing}, got {cfg!r}") from None
    raise ValueError(f"unknown perturbation kind {kind!r} (relative, additive or standardized)")
