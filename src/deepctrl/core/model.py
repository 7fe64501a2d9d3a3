"""The DeepCTRL network: two encoders whose latents are mixed by the rule strength alpha.

Examples:
    >>> import torch, deepctrl as dc
    >>> model = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 2))
    >>> model(torch.zeros(3, 4), alpha=0.7).shape
    torch.Size([3, 2])
"""

from __future__ import annotations

import contextlib
import inspect
import itertools
from collections.abc import Iterator, Sequence
from typing import Any, TypeGuard, TypeVar, overload

import torch
from torch import Tensor, nn

from deepctrl.core.inputs import Inputs, batch_len, expand_seeds
from deepctrl.core.merges import BUILT_INS, Merge, as_merge

Alpha = float | Tensor
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
        The network, an [MLP][deepctrl.core.model.MLP].

    Raises:
        ValueError: As [MLP][deepctrl.core.model.MLP] raises.

    Examples:
        >>> mlp(4, 64, 16)[0]
        Linear(in_features=4, out_features=64, bias=True)
    """
    return MLP(*dims, out_activation=out_activation)


def _alpha_like(alpha: Alpha, z: Tensor) -> Tensor:
    """Alpha as a tensor that broadcasts against `z` (batch first)."""
    a = torch.as_tensor(alpha, dtype=z.dtype, device=z.device)
    if a.dim() == 1:
        return a.reshape(a.shape + (1,) * (z.dim() - 1))
    if a.dim() > 1:
        raise ValueError(
            f"alpha must be a float or a tensor of shape (batch,), got {tuple(a.shape)}")
    return a


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
        getattr(type(module), name) is getattr(cls, name) for name in ("forward", *methods))


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

    Examples:
        >>> m = DeepCTRL(mlp(2, 4), mlp(2, 4), mlp(8, 2), residual=True)
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
        self.shared = shared
        self.data_encoder = data_encoder
        self.rule_encoder = rule_encoder
        self.decision = decision
        self.residual = residual

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
        return self.rule_encoder(h), self.data_encoder(h)

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
        y = self.decision(z)
        if not self.residual:
            return y
        if isinstance(x, dict):
            raise ValueError("residual=True adds the input to the output, so it needs one "
                             "input tensor, not a dict of inputs")
        return y + x

    def forward(self, x: Inputs, alpha: Alpha = 0.0) -> Tensor:
        """The output at rule strength `alpha`, as `model(x, alpha)` computes it.

        Args:
            x: The input: a tensor (batch first), or a dict of named inputs.
            alpha: The rule strength: one float for every row, or a tensor of shape
                (batch,) with one per row. 0 is the data path, 1 the rule path.

        Returns:
            The output, (batch, ...).
        """
        if not self.merge.uses_rule_encoder:
            h = self.shared(x) if self.shared is not None else x
            if isinstance(h, dict):
                raise ValueError(f"merge={self.merge.name!r} feeds alpha to its encoder: with a "
                                 "dict of inputs give a shared module that returns one tensor")
            z = self.data_encoder(self.merge.encoder_input(h, _alpha_like(alpha, h)))
            return self.decide(x, z)
        z_r, z_d = self.encode(x)
        return self.decide(x, self.mix(z_r, z_d, alpha))

    def forward_alphas(self, x: Inputs, alphas: Sequence[float] | Tensor) -> Tensor:
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
            return self.forward(xs, per_sample).reshape(n, b, -1)
        z_r, z_d = self.encode(x)
        split = _first_linear(self.decision) if z_r.dim() == 2 else None
        if split is not None:
            first, rest = split
            h = self.merge.first_layer(first, z_r, z_d, a)
            if h is not None:
                y = rest(h.reshape(n * b, -1))
                y = y + xs if self.residual else y
                return y.reshape(n, b, *y.shape[1:])
        z_r = z_r.unsqueeze(0).expand(n, *z_r.shape).reshape(n * b, *z_r.shape[1:])
        z_d = z_d.unsqueeze(0).expand(n, *z_d.shape).reshape(n * b, *z_d.shape[1:])
        y = self.decide(xs, self.mix(z_r, z_d, per_sample))
        return y.reshape(n, b, *y.shape[1:])

    def spec(self) -> dict[str, Any] | None:
        """The architecture as JSON, from which
        [from_spec][deepctrl.core.model.DeepCTRL.from_spec] builds the model again.

        Returns:
            A JSON description when every part is an [MLP][deepctrl.core.model.MLP] and
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
            elif isinstance(part, MLP):
                out[name] = part.spec()
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


def _first_linear(decision: nn.Module) -> tuple[nn.Linear, nn.Module] | None:
    """(first linear layer, the rest) of a sequential decision block, else None."""
    if not runs_as(decision, nn.Sequential) or len(decision) == 0:
        return None
    first = decision[0]
    return (first, nn.Sequential(*list(decision)[1:])) if runs_as(first, nn.Linear) else None


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside DistributedDataParallel, DataParallel or torch.compile wrappers.

    Args:
        model: A module, wrapped or not (wrappers inside wrappers are unwrapped too).

    Returns:
        The innermost module; `model` itself when it is not wrapped.
    """
    while True:
        inner = getattr(model, "module", None) or getattr(model, "_orig_mod", None)
        if not isinstance(inner, nn.Module):
            return model
        model = inner


def accepts_alpha(model: nn.Module) -> bool:
    """Whether `model(x, alpha)` takes the rule strength: a
    [DeepCTRL][deepctrl.core.model.DeepCTRL], or any module whose `forward` has a parameter
    named `alpha`.

    Args:
        model: The module, possibly wrapped (see [unwrap][deepctrl.core.model.unwrap]).

    Returns:
        True when the model takes `alpha`.

    Examples:
        >>> accepts_alpha(DeepCTRL(mlp(2, 4), mlp(2, 4), mlp(8, 1))), accepts_alpha(mlp(2, 1))
        (True, False)
    """
    inner = unwrap(model)
    if isinstance(inner, DeepCTRL):
        return True
    try:
        return "alpha" in inspect.signature(inner.forward).parameters
    except (TypeError, ValueError):
        return False


def predict(model: nn.Module, x: Inputs, alpha: Alpha = 0.0) -> Tensor:
    """Call `model` at `alpha` if it takes one (see
    [accepts_alpha][deepctrl.core.model.accepts_alpha]), else ignore it.

    Args:
        model: The model.
        x: Its input.
        alpha: The rule strength, a float or one per row.

    Returns:
        The model's output.
    """
    if accepts_alpha(model):
        return model(x, alpha)
    return model(x)


def predict_alphas(model: nn.Module, x: Inputs, alphas: Sequence[float] | Tensor) -> Tensor:
    """Outputs at every alpha; a model without alpha repeats its output.

    Args:
        model: The model ([DeepCTRL][deepctrl.core.model.DeepCTRL] runs its encoders once,
            other models once per alpha).
        x: Its input.
        alphas: The rule strengths.

    Returns:
        The outputs, shape (n_alphas, batch, ...).
    """
    if isinstance(model, DeepCTRL):
        return model.forward_alphas(x, alphas)
    if accepts_alpha(model):
        return torch.stack([model(x, float(a)) for a in alphas])
    n = len(alphas)
    y = model(x)
    return y.unsqueeze(0).expand(n, *y.shape)


@contextlib.contextmanager
def in_mode(model: nn.Module, training: bool) -> Iterator[nn.Module]:
    """Run a block with `model` in train or eval mode, then give every submodule back the
    mode it had.

    Args:
        model: The module.
        training: True for train mode, False for eval mode.

    Yields:
        The module, in that mode.
    """
    modes = [(m, m.training) for m in model.modules()]
    model.train(training)
    try:
        yield model
    finally:
        for m, was_training in modes:
            m.training = was_training


def eval_mode(model: nn.Module) -> contextlib.AbstractContextManager[nn.Module]:
    """Run a block with `model` in eval mode (Dropout off, BatchNorm on its running
    statistics), then give every submodule back the mode it had.

    Args:
        model: The module.

    Returns:
        A context manager that gives the module, in eval mode.

    Examples:
        >>> m = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
        >>> with eval_mode(m):
        ...     m[1].training
        False
        >>> m[1].training
        True
    """
    return in_mode(model, False)


_DROPOUTS = (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d, nn.AlphaDropout,
             nn.FeatureAlphaDropout)


def has_randomness(model: nn.Module) -> bool:
    """Whether training-mode forwards of `model` draw random numbers (dropout, RReLU).

    Args:
        model: The module.

    Returns:
        True when a submodule draws random numbers in train mode.

    Examples:
        >>> (has_randomness(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))),
        ...  has_randomness(mlp(2, 1)))
        (True, False)
    """
    for m in model.modules():
        if (isinstance(m, _DROPOUTS) and m.p > 0) or isinstance(m, nn.RReLU):
            return True
        if isinstance(m, nn.RNNBase | nn.MultiheadAttention) and m.dropout > 0:
            return True
    return False
