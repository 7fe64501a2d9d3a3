"""How the rule strength alpha mixes the encoders' latents: a `Merge`.

Four are built in, named as `dc.DeepCTRL(..., merge=NAME)` takes them: `"deepctrl"`
(`DeepCTRLMerge`, the paper's), `"add"` (`AddMerge`), `"concat"` (`ConcatMerge`) and
`"input"` (`InputMerge`). A merge holds no weights. The last three are ablations, next
to the paper's Sec. 5 variants (Fig. 7c-d): `"concat"` is its "Concat"; `"add"` is not
its "Add" (z_r + z_d, no alpha), as it weighs the latents by alpha; `"input"` is its
[x; alpha] when the model has no shared module, and appends alpha to the shared module's
output when it has one (see each class).

Your own merge: subclass `Merge`, give it a `name` and a `Merge.latent`, and pass an
instance as `merge=`. `latent` sees the latents as the model computes them, (batch, width),
and `a` as a scalar or one value per row (batch, 1); written with broadcasting, it runs on
every path `dc.fit` takes, the fast one included. Override `Merge.first_layer` too when the
latent is affine in alpha, for faster sweeps.

Examples:
    >>> import torch, deepctrl as dc
    >>> class Gated(Merge):
    ...     '''cat(a z_r, (1 - a) z_d, a): the decision block also reads alpha.'''
    ...     name = "gated"
    ...     def latent(self, z_r, z_d, a):
    ...         a_col = a.expand(*z_d.shape[:-1], 1)
    ...         return torch.cat([a * z_r, (1 - a) * z_d, a_col], dim=-1)
    >>> Gated().decision_width(8)
    17
    >>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(17, 1), merge=Gated())
    >>> model(torch.zeros(2, 3), alpha=0.5).shape
    torch.Size([2, 1])
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar, final

import torch
from torch import Tensor, nn


class Merge(abc.ABC):
    """How the decision block's input is made from the rule latent `z_r`, the data latent
    `z_d` and the rule strength `a`."""

    name: ClassVar[str] = "Merge"
    """The merge's name, written into a model's `DeepCTRL.spec` (a subclass sets its own;
    the class name by default)."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" not in cls.__dict__:
            cls.name = cls.__name__

    uses_rule_encoder: bool = True
    """False for a merge with one encoder, which reads `encoder_input` (`"input"`)."""

    @abc.abstractmethod
    def latent(self, z_r: Tensor, z_d: Tensor, a: Tensor) -> Tensor:
        """The decision block's input.

        Args:
            z_r: The rule encoder's output, (batch, width).
            z_d: The data encoder's output, (batch, width).
            a: The rule strength, a scalar or (batch, 1): it broadcasts against the latents.

        Returns:
            The merged latent z.
        """

    def encoder_input(self, h: Tensor, a: Tensor) -> Tensor:
        """What the one encoder of a merge without a rule encoder reads.

        Args:
            h: The input, or the shared module's output.
            a: The rule strength, as in `latent`.

        Returns:
            `h` itself, unless a subclass says otherwise.
        """
        return h

    def decision_width(self, latent: int) -> int:
        """The decision block's input width.

        Args:
            latent: The number of features of each encoder's latent.

        Returns:
            The width of the merged latent.

        Examples:
            >>> DeepCTRLMerge().decision_width(64), AddMerge().decision_width(64)
            (128, 64)
        """
        z = torch.zeros(1, latent)
        return self.latent(z, z, torch.zeros(1, 1)).shape[-1]

    def first_layer(
        self, layer: nn.Linear, z_r: Tensor, z_d: Tensor, alphas: Tensor
    ) -> Tensor | None:
        """`layer` on the latent at every one of `alphas`, computed faster than one layer
        call per alpha.

        Args:
            layer: The decision block's first layer.
            z_r: The rule encoder's output.
            z_d: The data encoder's output.
            alphas: The rule strengths, (n_alphas,).

        Returns:
            The layer's outputs, shape (n_alphas, batch, out), or None when this merge
                cannot compute them faster (the default).
        """
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _affine(u: Tensor, v: Tensor, bias: Tensor | None, alphas: Tensor) -> Tensor:
    """`a u + (1 - a) v + bias` for every `a` in `alphas`: (n_alphas, batch, out)."""
    base = v + bias if bias is not None else v
    return torch.addcmul(base.unsqueeze(0), alphas.reshape(-1, 1, 1), (u - v).unsqueeze(0))


@final
class DeepCTRLMerge(Merge):
    """The paper's: cat(a z_r, (1 - a) z_d), the two latents joined ("stochastically
    concatenated", Sec. 2), each scaled by its share of the rule strength (Sec. 5).

    Examples:
        >>> DeepCTRLMerge().latent(torch.ones(1, 2), torch.ones(1, 1),
        ...                        torch.tensor(0.25)).tolist()
        [[0.25, 0.25, 0.75]]
    """

    name = "deepctrl"

    def latent(self, z_r: Tensor, z_d: Tensor, a: Tensor) -> Tensor:
        return torch.cat([a * z_r, (1 - a) * z_d], dim=-1)

    def first_layer(self, layer: nn.Linear, z_r: Tensor, z_d: Tensor, alphas: Tensor) -> Tensor:
        """The latent is affine in alpha and so is the layer: one product per encoder, with
        the weight's rule and data columns, mixed per alpha."""
        w_r, w_d = layer.weight.split([z_r.shape[-1], z_d.shape[-1]], dim=1)
        return _affine(z_r @ w_r.T, z_d @ w_d.T, layer.bias, alphas)


def _one_width(z_r: Tensor, z_d: Tensor) -> None:
    if z_r.shape[-1] != z_d.shape[-1]:
        raise ValueError(
            f"merge='add' adds the encoders' latents, which need one width: the rule encoder "
            f"gives {z_r.shape[-1]}, the data encoder {z_d.shape[-1]} (merge='deepctrl' "
            "joins latents of any widths)"
        )


@final
class AddMerge(Merge):
    """a z_r + (1 - a) z_d (the encoders' latents have one width): coupled to alpha like
    `DeepCTRLMerge`, but summed instead of joined.

    Not the paper's "Add" of Sec. 5 / Fig. 7c-d, which is z_r + z_d with no alpha in the
    latent (a "non-coupled" representation in the figure's caption); this is the summed
    alternative of the authors' published code.

    Examples:
        >>> AddMerge().latent(torch.ones(1, 2), torch.zeros(1, 2), torch.tensor(0.25)).tolist()
        [[0.25, 0.25]]
    """

    name = "add"

    def latent(self, z_r: Tensor, z_d: Tensor, a: Tensor) -> Tensor:
        _one_width(z_r, z_d)
        return a * z_r + (1 - a) * z_d

    def first_layer(self, layer: nn.Linear, z_r: Tensor, z_d: Tensor, alphas: Tensor) -> Tensor:
        """One product per encoder with the whole weight, mixed per alpha."""
        _one_width(z_r, z_d)
        return _affine(z_r @ layer.weight.T, z_d @ layer.weight.T, layer.bias, alphas)


@final
class ConcatMerge(Merge):
    """cat(z_r, z_d): alpha unused, the output does not depend on it (alpha still weighs
    the losses in training). The paper's "Concat" of Sec. 5 / Fig. 7c-d.

    Examples:
        >>> ConcatMerge().latent(torch.ones(1, 1), torch.zeros(1, 1),
        ...                      torch.tensor(0.25)).tolist()
        [[1.0, 0.0]]
    """

    name = "concat"

    def latent(self, z_r: Tensor, z_d: Tensor, a: Tensor) -> Tensor:
        return torch.cat([z_r, z_d], dim=-1)


@final
class InputMerge(Merge):
    """One encoder fed cat(h, a), no rule encoder; its latent goes to the decision block as
    it is.

    h is the model's `shared` module output when it has one, else x. The paper's variant
    (Sec. 5, Fig. 7c-d) concatenates alpha to the input, [x; alpha]; with a `shared` module
    alpha joins that module's output instead (the pendulum ablation appends it to the 16
    outputs of its shared 4-64-16 layer).

    Examples:
        >>> InputMerge().encoder_input(torch.zeros(2, 1), torch.tensor(0.5)).tolist()
        [[0.0, 0.5], [0.0, 0.5]]
    """

    name = "input"
    uses_rule_encoder = False

    def latent(self, z_r: Tensor, z_d: Tensor, a: Tensor) -> Tensor:
        """The one encoder's latent, unchanged (it read alpha already)."""
        return z_d

    def encoder_input(self, h: Tensor, a: Tensor) -> Tensor:
        return torch.cat([h, a.expand(*h.shape[:-1], 1)], dim=-1)


BUILT_INS: dict[str, type[Merge]] = {
    m.name: m for m in (DeepCTRLMerge, AddMerge, ConcatMerge, InputMerge)
}
"""The built-in merges by name."""


def as_merge(merge: str | Merge) -> Merge:
    """`merge` itself, or the built-in merge of that name.

    Args:
        merge: A merge, or a built-in merge's name.

    Returns:
        The merge.

    Raises:
        ValueError: When `merge` is neither a merge nor a built-in name.

    Examples:
        >>> as_merge("add")
        AddMerge()
    """
    if isinstance(merge, Merge):
        return merge
    if isinstance(merge, str) and merge in BUILT_INS:
        return BUILT_INS[merge]()
    raise ValueError(f"merge must be one of {tuple(BUILT_INS)} or a Merge, got {merge!r}")
