"""Model inputs: one tensor, or a dict of named tensors (a model with several inputs).

Every function here treats both alike, so that the rest of the library never asks which
one it holds. Rows are the first axis of every tensor.

>>> import torch
>>> x = {"img": torch.zeros(4, 1, 8, 8), "ids": torch.zeros(4, 3, dtype=torch.long)}
>>> batch_len(x), sorted(rows(x, slice(0, 2))["img"].shape)
(4, [1, 2, 8, 8])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, SupportsFloat, overload

import numpy.typing as npt
import torch
from torch import Tensor

Inputs = Tensor | dict[str, Tensor]

Alphas = Sequence[SupportsFloat] | npt.NDArray[Any] | Tensor
"""Rule strengths: a sequence of numbers, a 1-D NumPy array or a 1-D tensor."""


def apply(fn: Callable[[Tensor], Tensor], x: Inputs) -> Inputs:
    """``fn`` applied to every tensor of ``x``."""
    if isinstance(x, dict):
        return {k: fn(v) for k, v in x.items()}
    return fn(x)


def tensors(x: Inputs) -> list[Tensor]:
    """The tensors of ``x``."""
    return list(x.values()) if isinstance(x, dict) else [x]


def batch_len(x: Inputs, dim: int = 0) -> int:
    """The number of rows (the size of axis ``dim``) of ``x``."""
    return int(tensors(x)[0].shape[dim])


def device_of(x: Inputs) -> torch.device:
    return tensors(x)[0].device


def rows(x: Inputs, index: slice | Tensor) -> Inputs:
    """Rows ``index`` of every tensor."""
    return apply(lambda t: t[index], x)


def cat(xs: Sequence[Inputs], dim: int = 0) -> Inputs:
    """Join inputs of the same structure along ``dim``."""
    if isinstance(xs[0], dict):
        return {k: torch.cat([x[k] for x in xs], dim=dim) for k in xs[0]}  # type: ignore[index]
    return torch.cat(list(xs), dim=dim)  # type: ignore[arg-type]


@overload
def stack_inputs(xs: Sequence[Tensor], dim: int = 0) -> Tensor: ...


@overload
def stack_inputs(xs: Sequence[Inputs], dim: int = 0) -> Inputs: ...


def stack_inputs(xs: Sequence[Inputs], dim: int = 0) -> Inputs:
    """Stack inputs of the same structure along a new axis ``dim``."""
    if isinstance(xs[0], dict):
        return {k: torch.stack([x[k] for x in xs], dim=dim) for k in xs[0]}  # type: ignore[index]
    return torch.stack(list(xs), dim=dim)  # type: ignore[arg-type]


@overload
def expand_seeds(x: Tensor, n: int) -> Tensor: ...


@overload
def expand_seeds(x: Inputs, n: int) -> Inputs: ...


def expand_seeds(x: Inputs, n: int) -> Inputs:
    """A leading axis of size ``n`` in front of every tensor, without copying."""
    return apply(lambda t: t.unsqueeze(0).expand(n, *t.shape), x)


def seed_of(x: Inputs, i: int) -> Inputs:
    """Copy ``i`` of inputs stacked along a leading seed axis: (S, ...) -> (...)."""
    return apply(lambda t: t[i], x)


def pick(x: Inputs, name: str | None, who: str = "the rule") -> Tensor:
    """The input named ``name`` (``x`` itself when it is one tensor and ``name`` is None).

    >>> pick({"a": torch.zeros(1)}, "b")
    Traceback (most recent call last):
    ...
    ValueError: the rule names input 'b', but the inputs are ['a']
    """
    if isinstance(x, dict):
        if name is None:
            floating = [k for k in sorted(x) if x[k].dtype.is_floating_point] or sorted(x)
            raise ValueError(
                f"the model has several inputs {sorted(x)}: {who} must name the "
                f"one it perturbs, e.g. input={floating[0]!r}"
            )
        if name not in x:
            raise ValueError(f"{who} names input {name!r}, but the inputs are {sorted(x)}")
        return x[name]
    if name is not None:
        raise ValueError(f"{who} names input {name!r}, but the model has a single input tensor")
    return x


def replace(x: Inputs, name: str | None, value: Tensor) -> Inputs:
    """``x`` with the input ``name`` (or the single tensor) replaced by ``value``."""
    if isinstance(x, dict):
        return {**x, str(name): value}
    return value


def cast_floats(x: Inputs, dtype: torch.dtype) -> Inputs:
    """Floating-point and boolean tensors in ``dtype`` (as tensors given to ``dc.fit`` are
    read); integer tensors keep theirs (class labels, token ids).

    >>> cast_floats({"flag": torch.tensor([True]), "ids": torch.tensor([3])}, torch.float64)
    {'flag': tensor([1.], dtype=torch.float64), 'ids': tensor([3])}
    """

    def cast(t: Tensor) -> Tensor:
        wanted = (t.dtype.is_floating_point or t.dtype == torch.bool) and t.dtype != dtype
        return t.to(dtype) if wanted else t

    return apply(cast, x)


REFUSALS = (RuntimeError, TypeError, AttributeError, IndexError, KeyError)
"""What a model raises on rows it cannot take: another width or dtype (RuntimeError), a dict
where it takes a tensor or the reverse (TypeError, AttributeError, IndexError), a dict
without a key it reads (KeyError). Caught on the first rows only, to name them."""


def refused_rows(x: Inputs, exc: Exception, which: str) -> ValueError:
    """One line for a model that cannot take the rows ``x`` (``which`` rows: "training",
    "given"): the shape and dtype of one row and the first line of the model's error.

    >>> print(refused_rows(torch.zeros(2, 4), RuntimeError("mat1 and mat2"),
    ...                    "given"))  # doctest: +ELLIPSIS
    the model cannot take the given rows (shape ... ((4,), 'torch.float32')): mat1 and mat2
    """
    row = (
        {k: (tuple(v.shape[1:]), str(v.dtype)) for k, v in x.items()}
        if isinstance(x, dict)
        else (tuple(x.shape[1:]), str(x.dtype))
    )
    return ValueError(
        f"the model cannot take the {which} rows (shape and dtype of one row: {row}): "
        f"{str(exc).strip().splitlines()[0]}"
    )
