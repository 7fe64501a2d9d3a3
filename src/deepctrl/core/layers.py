"""Building blocks of the networks: `MLP` (and `mlp`), `Residual`, `OneHotLinear`, and the
test the fast training path uses to know what a module computes (`runs_as`).

Examples:
    >>> import torch
    >>> Residual(mlp(3, 8, 3))(torch.zeros(2, 3)).shape
    torch.Size([2, 3])
"""

from __future__ import annotations

import itertools
import numbers
from typing import Any, TypeGuard, TypeVar

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from deepctrl.core.checks import module

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
        if any(isinstance(d, bool) or not isinstance(d, numbers.Integral) or d <= 0 for d in dims):
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

    def spec(self) -> dict[str, Any] | None:
        """The MLP as JSON, for model files.

        Returns:
            Its `dims` and `out_activation`; None when its layers are no longer those they
                describe (a layer appended or replaced after it was built), so that a model
                file does not rebuild another network.

        Examples:
            >>> changed = mlp(3, 4, 1)
            >>> changed.spec(), changed.append(nn.Sigmoid()).spec()
            ({'dims': [3, 4, 1], 'out_activation': None}, None)
        """
        if not self._as_built():
            return None
        return {"dims": list(self.dims), "out_activation": self.out_activation}

    def _as_built(self) -> bool:
        """Whether the layers are still those `dims` and `out_activation` build (compared
        with a fresh build on the meta device, which allocates no weights)."""
        with torch.device("meta"):
            built = MLP(*self.dims, out_activation=self.out_activation)
        return len(self) == len(built) and all(
            runs_as(layer, type(ref))
            and (
                not isinstance(ref, nn.Linear)
                or (layer.in_features, layer.out_features, layer.bias is None)
                == (ref.in_features, ref.out_features, False)
            )
            for layer, ref in zip(self, built, strict=True)
        )


class Residual(nn.Module):
    """`inner(x) + x`: a network that predicts the change of its input (`dc.DeepCTRL` has
    `residual=True` for the same). Made of MLPs, stacked seeds run it as batched matrix
    products.

    Args:
        inner: The network whose output is added to its input; its output has the input's
            shape.

    Raises:
        TypeError: When `inner` is not a `torch.nn.Module`.

    Examples:
        >>> import torch
        >>> Residual(mlp(2, 2))(torch.zeros(1, 2)).shape
        torch.Size([1, 2])
    """

    def __init__(self, inner: nn.Module) -> None:
        super().__init__()
        self.inner = module(inner, "Residual's inner")

    def forward(self, x: Tensor) -> Tensor:
        return add_input(self.inner(x), x)


def add_input(y: Tensor, x: Tensor) -> Tensor:
    """`y + x` for a network that predicts the change of its input; outputs of another
    shape than the input are refused (they would broadcast)."""
    if y.shape != x.shape:
        raise ValueError(
            "a residual network adds its input to its output, so the output needs the "
            f"input's shape: got {tuple(y.shape[1:])} per row for inputs of "
            f"{tuple(x.shape[1:])}"
        )
    return y + x


def one_hot_codes(x: Tensor, blocks: tuple[tuple[int, int], ...]) -> tuple[Tensor, Tensor]:
    """Where each one-hot block of ``x`` holds its 1, as a column of ``x``, and whether it
    holds one (0 where the block is all zeros): two tensors of shape ``(*x.shape[:-1],
    len(blocks))``. A block's entries must be 0 or 1, with at most one 1 per row; the
    column is then found by one product with the positions, exact in float32 below 2**24
    columns.

    Examples:
        >>> x = torch.tensor([[5.0, 0.0, 1.0, 0.0], [6.0, 0.0, 0.0, 0.0]])
        >>> codes, values = one_hot_codes(x, ((1, 4),))
        >>> codes.tolist(), values.tolist()
        ([[2], [1]], [[1.0], [0.0]])
    """
    codes, values = [], []
    for start, stop in blocks:
        block = x[..., start:stop]
        present = block.sum(-1)
        position = block @ torch.arange(stop - start, dtype=x.dtype, device=x.device)
        codes.append(position.long() + start)
        values.append(present)
    return torch.stack(codes, -1), torch.stack(values, -1)


class OneHotLinear(nn.Linear):
    """`nn.Linear` for inputs with wide one-hot blocks (a category with many values): each
    block costs one lookup of a weight column instead of a product over its width. It
    computes what `nn.Linear` computes, to float rounding, as long as each block of every
    row is all zeros or a single 1 (one-hot); its parameters are `nn.Linear`'s.

    Args:
        in_features: The input width.
        out_features: The output width.
        blocks: The one-hot blocks as (start, stop) column ranges, in order, apart.
        bias: Whether the layer has a bias.
        device: Where the parameters are made, as for `nn.Linear`; None is PyTorch's
            default device.

    Raises:
        ValueError: When a block is empty, out of range or overlaps another.

    Examples:
        >>> layer = OneHotLinear(5, 2, blocks=((1, 5),))
        >>> x = torch.tensor([[0.5, 0.0, 0.0, 1.0, 0.0]])
        >>> torch.allclose(layer(x), F.linear(x, layer.weight, layer.bias))
        True
    """

    def __init__(
        self,
        in_features: int,
        out_features: int,
        blocks: tuple[tuple[int, int], ...],
        bias: bool = True,
        device: torch.device | str | None = None,
    ) -> None:
        super().__init__(in_features, out_features, bias, device=device)
        self.blocks = tuple((int(a), int(b)) for a, b in blocks)
        edges = [0, *(e for block in self.blocks for e in block), in_features]
        if not self.blocks or any(a >= b for a, b in self.blocks) or edges != sorted(edges):
            raise ValueError(f"one-hot blocks must be non-empty, in order and apart: {blocks}")
        inside = {j for a, b in self.blocks for j in range(a, b)}
        self.dense_columns = torch.tensor(  # long even when empty: every input is one-hot
            [j for j in range(in_features) if j not in inside], dtype=torch.long, device="cpu"
        )
        """The input columns outside the blocks (not a buffer: the parameters are all the
        layer's state)."""

    @classmethod
    def replacing(cls, layer: nn.Linear, blocks: tuple[tuple[int, int], ...]) -> OneHotLinear:
        """A layer that computes with ``layer``'s weight and bias (the same parameters),
        made without drawing random numbers.

        Examples:
            >>> dense = nn.Linear(4, 2)
            >>> OneHotLinear.replacing(dense, ((1, 4),)).weight is dense.weight
            True
        """
        new = cls(layer.in_features, layer.out_features, blocks, layer.bias is not None, "meta")
        new.weight = layer.weight
        new.bias = layer.bias
        return new

    def forward(self, x: Tensor) -> Tensor:
        if torch.onnx.is_in_onnx_export():  # one plain product in the exported graph
            return F.linear(x, self.weight, self.bias)
        dense = self.dense_columns.to(x.device)
        out = F.linear(x[..., dense], self.weight[:, dense], self.bias)
        codes, values = one_hot_codes(x, self.blocks)
        picked = self.weight.t()[codes] * values.unsqueeze(-1)
        return out + picked.sum(-2)

    def extra_repr(self) -> str:
        return f"{super().extra_repr()}, blocks={self.blocks}"


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
