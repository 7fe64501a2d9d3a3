"""The DeepCTRL network: two encoders whose latents are mixed by the rule strength alpha.

Examples:
    >>> import torch, deepctrl as dc
    >>> model = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 2))
    >>> model(torch.zeros(3, 4), alpha=0.7).shape
    torch.Size([3, 2])
"""

from __future__ import annotations

import math
from numbers import Real
from typing import TYPE_CHECKING, Any, overload

import torch
from torch import Tensor, nn

from deepctrl.core.checks import module
from deepctrl.core.inputs import Alphas, Inputs, batch_len, expand_seeds
from deepctrl.core.layers import MLP, add_input, runs_as
from deepctrl.core.merges import BUILT_INS, Merge, as_merge

Alpha = float | Tensor


def _alpha_like(alpha: Alpha, z: Tensor) -> Tensor:
    """Alpha as a tensor that broadcasts against `z` (batch first)."""
    # a tensor first, so that torch.compile does not break the graph on the check
    # a tuple, not str | bytes: torch.compile before 2.4 cannot trace a union type
    if alpha is None or isinstance(alpha, (str, bytes)):
        raise TypeError(f"alpha must be a number, or a tensor of one per row, got {alpha!r}")
    if not isinstance(alpha, Tensor) and isinstance(alpha, Real):
        if not math.isfinite(alpha):
            raise ValueError(f"alpha must be a finite number, got {alpha!r}")
        # as a Python float: a numpy float32 compared with float64's largest would overflow
        if z.is_floating_point() and abs(float(alpha)) > torch.finfo(z.dtype).max:
            raise ValueError(f"alpha {alpha!r} is beyond the range of the model's {z.dtype}")
    a = torch.as_tensor(alpha, dtype=z.dtype, device=z.device)
    if a.dim() == 1:
        if a.shape[0] not in (1, z.shape[0]):
            raise ValueError(
                f"alpha has {a.shape[0]} values for a batch of {z.shape[0]} rows: give one "
                "alpha, or one per row"
            )
        return a.reshape(a.shape + (1,) * (z.dim() - 1))
    if a.dim() > 1:
        raise ValueError(
            f"alpha must be a float or a tensor of shape (batch,), got {tuple(a.shape)}"
        )
    return a


def _latent(z: Any, which: str) -> Tensor:
    """An encoder's output, which must be one tensor (a recurrent layer returns a tuple)."""
    if not isinstance(z, Tensor):
        raise ValueError(
            f"the {which} encoder returned a {type(z).__name__}, where DeepCTRL needs one "
            "tensor (rows first): wrap a recurrent layer in a module that returns one, such "
            "as its outputs at the last step, out[:, -1]"
        )
    return z


class DeepCTRL(nn.Module):
    """Data encoder and rule encoder whose latents are mixed by `alpha`, then a decision block.

    The merges: `"deepctrl"`: z = cat(alpha z_r, (1 - alpha) z_d) (the paper); `"add"`:
    z = alpha z_r + (1 - alpha) z_d; `"concat"`: z = cat(z_r, z_d), alpha unused;
    `"input"`: the data encoder alone is fed cat(x, alpha) (pass `rule_encoder=None`).
    `model.merge` is the `Merge` object (`deepctrl.core.merges`). Alpha outside [0, 1]
    extrapolates the mix; it is never clipped.

    Args:
        data_encoder: The encoder of the data path, giving z_d.
        rule_encoder: The encoder of the rule path, giving z_r; None for the `"input"`
            merge.
        decision: The block from the merged latent z to the output.
        shared: A module that runs first on x and feeds both encoders; None feeds them x.
        merge: A built-in merge by name, or a `Merge` of your own.
        residual: Add x to the output (the model predicts the change of its input).

    Raises:
        ValueError: When `merge` names no built-in merge, or `rule_encoder` is None for a
            merge that needs it (or given for `"input"`).
        TypeError: When an encoder, `decision` or `shared` is not a `torch.nn.Module`.

    Examples:
        >>> import deepctrl as dc
        >>> m = DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 2), residual=True)
        >>> m(torch.ones(5, 2), alpha=torch.full((5,), 0.3)).shape
        torch.Size([5, 2])
    """

    def __init__(
        self,
        data_encoder: nn.Module,
        rule_encoder: nn.Module | None,
        decision: nn.Module,
        shared: nn.Module | None = None,
        merge: str | Merge = "deepctrl",
        residual: bool = False,
    ) -> None:
        super().__init__()
        self.merge: Merge = as_merge(merge)
        name = self.merge.name
        if not self.merge.uses_rule_encoder and rule_encoder is not None:
            raise ValueError(f"merge={name!r} uses one encoder: pass rule_encoder=None")
        if self.merge.uses_rule_encoder and rule_encoder is None:
            raise ValueError(f"merge={name!r} needs a rule_encoder")
        self.shared = None if shared is None else module(shared, "shared")
        self.data_encoder = module(data_encoder, "data_encoder")
        self.rule_encoder = None if rule_encoder is None else module(rule_encoder, "rule_encoder")
        self.decision = module(decision, "decision")
        self.residual = residual

    def __prepare_scriptable__(self) -> DeepCTRL:
        """Refuse `torch.jit.script` with one line: merges are Python objects and inputs
        may be dicts, which TorchScript does not compile; `torch.export` or ONNX serve
        the model instead (docs/deploy.md)."""
        raise TypeError(
            "torch.jit.script cannot compile a DeepCTRL model: export it with "
            "torch.export.export or deepctrl.to_onnx instead"
        )

    def encode(self, x: Inputs) -> tuple[Tensor, Tensor]:
        """The latents (z_r, z_d), which do not depend on alpha.

        Args:
            x: The input: a tensor, or a dict of named inputs.

        Returns:
            The rule encoder's and the data encoder's outputs.

        Raises:
            ValueError: For a merge without a rule encoder (`"input"`), which has no
                alpha-free latents: call `forward` instead.
        """
        if self.rule_encoder is None:
            raise ValueError(f"merge={self.merge.name!r} has no alpha-free latents")
        h = self.shared(x) if self.shared is not None else x
        return _latent(self.rule_encoder(h), "rule"), _latent(self.data_encoder(h), "data")

    def mix(self, z_r: Tensor, z_d: Tensor, alpha: Alpha) -> Tensor:
        """The merged latent z for given encoder outputs.

        Args:
            z_r: The rule encoder's output.
            z_d: The data encoder's output.
            alpha: The rule strength: a float, or a tensor of shape (batch,).

        Returns:
            The decision block's input.
        """
        return self.merge.latent(z_r, z_d, _alpha_like(alpha, z_d))

    def decide(self, x: Inputs, z: Tensor) -> Tensor:
        """The output from the merged latent: the decision block on `z` (plus `x` with
        `residual=True`).

        Args:
            x: The model's input.
            z: The merged latent.

        Returns:
            The model's output.
        """
        _check_decision_width(self.decision, z, self.merge.name)
        return self._plus_input(x, self.decision(z))

    def _plus_input(self, x: Inputs, y: Tensor) -> Tensor:
        """`y`, plus `x` with `residual=True`."""
        if not self.residual:
            return y
        if isinstance(x, dict):
            raise ValueError(
                "residual=True adds the input to the output, so it needs one "
                "input tensor, not a dict of inputs"
            )
        return add_input(y, x)

    def forward(self, x: Inputs, alpha: Alpha = 0.0) -> Tensor:
        """The output at rule strength `alpha`, as `model(x, alpha)` computes it.

        Args:
            x: The input: a tensor (batch first), or a dict of named inputs.
            alpha: The rule strength: one float for every row, or a tensor of shape
                (batch,) with one per row. 0 is the data path, 1 the rule path. A float
                must be finite; a tensor's values are not checked (that would wait for
                the device on every call), so a NaN in it gives NaN outputs.

        Returns:
            The output, (batch, ...).
        """
        if not self.merge.uses_rule_encoder:
            h = self.shared(x) if self.shared is not None else x
            if isinstance(h, dict):
                raise ValueError(
                    f"merge={self.merge.name!r} feeds alpha to its encoder: with a "
                    "dict of inputs give a shared module that returns one tensor"
                )
            z = self.data_encoder(self.merge.encoder_input(h, _alpha_like(alpha, h)))
            return self.decide(x, _latent(z, "data"))
        z_r, z_d = self.encode(x)
        return self.decide(x, self.mix(z_r, z_d, alpha))

    if TYPE_CHECKING:  # `model(x, alpha)` is typed as `forward` (nn.Module's call is Any)

        def __call__(self, x: Inputs, alpha: Alpha = 0.0) -> Tensor: ...

    def sweeps_its_forward(self) -> bool:
        """Whether [forward_alphas][deepctrl.core.model.DeepCTRL.forward_alphas] computes
        what `forward` does at each alpha: True unless a subclass changed `forward` and not
        `forward_alphas` (sweeps then call `forward` once per alpha)."""
        kind = type(self)
        return (
            kind.forward is DeepCTRL.forward or kind.forward_alphas is not DeepCTRL.forward_alphas
        )

    def forward_alphas(self, x: Inputs, alphas: Alphas) -> Tensor:
        """Outputs for every alpha at once.

        The encoders run once; the decision block runs once on all alphas stacked.

        Args:
            x: The input: a tensor, or a dict of named inputs.
            alphas: The rule strengths.

        Returns:
            The outputs, shape (n_alphas, batch, ...).
        """
        param = next(self.parameters())
        a = torch.as_tensor(alphas, dtype=param.dtype, device=param.device).reshape(-1)
        n, b = a.shape[0], batch_len(x)
        xs = _tile(x, n)
        per_sample = a.repeat_interleave(b)
        if not self.merge.uses_rule_encoder:
            y = self.forward(xs, per_sample)
            return y.reshape(n, b, *y.shape[1:])
        z_r, z_d = self.encode(x)
        kind = type(self)  # a subclass's own mix or decide is called as it is
        plain = kind.mix is DeepCTRL.mix and kind.decide is DeepCTRL.decide
        split = _first_linear(self.decision) if z_r.dim() == 2 and plain else None
        if split is not None:
            first, rest = split
            _check_decision_width(first, self.mix(z_r[:1], z_d[:1], a[:1]), self.merge.name)
            h = self.merge.first_layer(first, z_r, z_d, a)
            if h is not None:
                y = rest(h.reshape(n * b, -1))
                y = self._plus_input(xs, y)
                return y.reshape(n, b, *y.shape[1:])
        z_r = z_r.unsqueeze(0).expand(n, *z_r.shape).reshape(n * b, *z_r.shape[1:])
        z_d = z_d.unsqueeze(0).expand(n, *z_d.shape).reshape(n * b, *z_d.shape[1:])
        y = self.decide(xs, self.mix(z_r, z_d, per_sample))
        return y.reshape(n, b, *y.shape[1:])

    def spec(self) -> dict[str, Any] | None:
        """The architecture as JSON, from which
        [from_spec][deepctrl.core.model.DeepCTRL.from_spec] builds the model again.

        Returns:
            A JSON description when every part is an [MLP][deepctrl.core.layers.MLP] and
                the merge a built-in (named in `"merge"`), else None.
        """
        if BUILT_INS.get(self.merge.name) is not type(self.merge):
            return None
        parts = {
            "shared": self.shared,
            "data_encoder": self.data_encoder,
            "rule_encoder": self.rule_encoder,
            "decision": self.decision,
        }
        out: dict[str, Any] = {"merge": self.merge.name, "residual": self.residual}
        for name, part in parts.items():
            if part is None:
                out[name] = None
            elif isinstance(part, MLP) and (described := part.spec()) is not None:
                out[name] = described
            else:
                return None
        return out

    @classmethod
    def from_spec(cls, spec: dict[str, Any]) -> DeepCTRL:
        """Rebuild a model from [spec][deepctrl.core.model.DeepCTRL.spec] (fresh weights).

        Args:
            spec: What `spec` returned.

        Returns:
            A new model of that architecture.
        """
        return cls(
            data_encoder=_build_mlp(spec["data_encoder"]),
            rule_encoder=_build_mlp(spec["rule_encoder"]),
            decision=_build_mlp(spec["decision"]),
            shared=_build_mlp(spec["shared"]),
            merge=spec["merge"],
            residual=spec["residual"],
        )


@overload
def _build_mlp(part: dict[str, Any]) -> MLP: ...


@overload
def _build_mlp(part: None) -> None: ...


def _build_mlp(part: dict[str, Any] | None) -> MLP | None:
    """The `MLP` of one part of a `DeepCTRL.spec`, None for a missing part."""
    if part is None:
        return None
    return MLP(*part["dims"], out_activation=part.get("out_activation"))


def _tile(x: Inputs, n: int) -> Inputs:
    """`x` repeated `n` times along the rows: (n * batch, ...)."""
    tiled = expand_seeds(x, n)
    if isinstance(tiled, dict):
        return {k: v.reshape(-1, *v.shape[2:]) for k, v in tiled.items()}
    return tiled.reshape(-1, *tiled.shape[2:])


def _check_decision_width(decision: nn.Module, z: Tensor, merge: str) -> None:
    """Refuse, in one line, a merged latent as wide as the decision block's first linear
    layer does not take (PyTorch's own message names matrix shapes, not the parts)."""
    layer = decision[0] if runs_as(decision, nn.Sequential) and len(decision) else decision
    if not runs_as(layer, nn.Linear) or isinstance(layer, nn.LazyLinear):
        return
    if z.dim() >= 1 and z.shape[-1] != layer.in_features:
        raise ValueError(
            f"the decision block takes {layer.in_features} features, but merge={merge!r} "
            f"gives it {z.shape[-1]}: build it with that input width (the 'deepctrl' and "
            "'concat' merges join both encoders' outputs, so it takes their sum)"
        )


def _first_linear(decision: nn.Module) -> tuple[nn.Linear, nn.Module] | None:
    """(first linear layer, the rest) of a sequential decision block, else None."""
    if not runs_as(decision, nn.Sequential) or len(decision) == 0:
        return None
    first = decision[0]
    return (first, nn.Sequential(*list(decision)[1:])) if runs_as(first, nn.Linear) else None
