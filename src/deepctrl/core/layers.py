"""Building blocks of the networks: `MLP` (and `mlp`), `Residual`, and the test the fast
training path uses to know what a module computes (`runs_as`).

Examples:
    >>> import torch
    >>> Residual(mlp(3, 8, 3))(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
"""

from __future__ import annotations

import itertools
from typing import Any, TypeGuard, TypeVar

from torch import Tensor, nn

ModuleT = TypeVar("ModuleT", bound=nn.Module)


class MLP(nn.Sequential):
    """Linear layers with ReLU between them (none after the last); `dims` says its shape.

    Args:
        *dims: The sizes of the input, the hidden layers and the output, at least two.
        out_activation: `"sigmoid"` after the last layer, or None for none.

    Raises:
        ValueError: When there are fewer than two sizes, a size is not positive, or
            `out_activation` is neither None nor `"sigmoid"`.
    """

    def __init__(self, *dims: int, out_activation: str | None = None) -> None:
        if len(dims) < 2:
            raise ValueError(f"mlp needs at least an input and an output size, got {dims}")
        if any(int(d) <= 0 for d in dims):
            raise ValueError(f"mlp sizes must be positive integers, got {dims}")
        layers: list[nn.Module] = []
        for i, (d_in, d_out) in enumerate(itertools.pairwise(dims)):
            layers.append(nn.Linear(int(d_in), int(d_out)))
            if i < len(dims) - 2:
                layers.append(nn.ReLU())
        if out_activation == "sigmoid":
            layers.append(nn.Sigmoid())
        elif out_activation is not None:
            raise ValueError(f"out_activation must be None or 'sigmoid', got {out_activation!r}")
        super().__init__(*layers)
        self.dims = tuple(int(d) for d in dims)
        self.out_activation = out_activation

    def spec(self) -> dict[str, Any]:
        """The MLP as JSON, for model files.

        Returns:
            Its `dims` and `out_activation`.
        """
        return {"dims": list(self.dims), "out_activation": self.out_activation}


class Residual(nn.Module):
    """`inner(x) + x`: a network that predicts the change of its input (`dc.DeepCTRL` has
    `residual=True` for the same). Made of MLPs, stacked seeds run it as batched matrix
    products.

    Args:
        inner: The network whose output is added to its input; its output has the input's
            shape.

    Examples:
        >>> import torch
        >>> Residual(mlp(2, 2))(torch.zeros(1, 2)).shape
        torch.Size([1, 2])
    """

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, x: Tensor) -> Tensor:
        return self.inner(x) + x


def mlp(*dims: int, out_activation: str | None = None) -> MLP:
    """A plain ReLU MLP: `mlp(4, 64, 16)` is Linear(4,64)-ReLU-Linear(64,16).

    Args:
        *dims: The sizes of the input, the hidden layers and the output, at least two.
        out_activation: `"sigmoid"` after the last layer, or None for none.

    Returns:
        The network, an [MLP][deepctrl.core.layers.MLP].

    Raises:
        ValueError: As [MLP][deepctrl.core.layers.MLP] raises.

    Examples:
        >>> mlp(4, 64, 16)[0]
        Linear(in_features=4, out_features=64, bias=True)
    """
    return MLP(*dims, out_activation=out_activation)


def runs_as(module: nn.Module, cls: type[ModuleT], *methods: str) -> TypeGuard[ModuleT]:
    """Whether `module` is a `cls` whose `forward` (and `methods`) are `cls`'s own:
    a subclass that only adds attributes or changes `__init__` computes what `cls` does.

    Args:
        module: The module to look at.
        cls: The class it should run as.
        *methods: Names of further methods that must be `cls`'s own.

    Returns:
        True when `module` computes what a `cls` computes.

    Examples:
        >>> class Named(nn.Linear): pass
        >>> class Doubled(nn.Linear):
        ...     def forward(self, x): return 2 * super().forward(x)
        >>> runs_as(Named(2, 2), nn.Linear), runs_as(Doubled(2, 2), nn.Linear)
        (True, False)
    """
    return isinstance(module, cls) and all(
        getattr(type(module), name) is getattr(cls, name) for name in ("forward", *methods)
    )
