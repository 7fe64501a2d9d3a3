"""How any model is called: at one alpha or many (whether or not it takes alpha), in train
or eval mode for a block, through DDP and `torch.compile` wrappers, and whether its
training forwards draw random numbers.

Examples:
    >>> import torch, deepctrl as dc
    >>> predict_alphas(dc.mlp(2, 1), torch.zeros(3, 2), [0.0, 1.0]).shape
    torch.Size([2, 3, 1])
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch import Tensor, nn

from deepctrl.core.inputs import Inputs
from deepctrl.core.model import Alpha, DeepCTRL
from deepctrl.core.warn_site import outside_stacklevel

_PARALLEL = (nn.parallel.DistributedDataParallel, nn.parallel.DataParallel)


def unwrap(model: nn.Module) -> nn.Module:
    """The module inside DistributedDataParallel, DataParallel or torch.compile wrappers.

    Only these wrappers, whose forward is the inner module's, are looked through: a module
    of your own that keeps a model in `.module` (an average of weights, a rescaled output)
    is a model of its own, called as it is.

    Args:
        model: A module, wrapped or not (wrappers inside wrappers are unwrapped too).

    Returns:
        The innermost module; `model` itself when it is not wrapped.
    """
    while True:
        compiled = getattr(model, "_orig_mod", None)
        if isinstance(model, _PARALLEL):
            model = model.module
        elif type(model).__name__ == "OptimizedModule" and isinstance(compiled, nn.Module):
            model = compiled
        else:
            return model


def accepts_alpha(model: nn.Module) -> bool:
    """Whether `model(x, alpha=...)` takes the rule strength: a
    [DeepCTRL][deepctrl.core.model.DeepCTRL], or any module whose `forward` has a parameter
    named `alpha` (deepctrl passes it by name, wherever it stands in the signature) or
    takes keyword arguments (`**kwargs`, where `alpha` arrives by that name).

    Args:
        model: The module, possibly wrapped (see [unwrap][deepctrl.core.calls.unwrap]).

    Returns:
        True when the model takes `alpha`.

    Examples:
        >>> import deepctrl as dc
        >>> accepts_alpha(dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1)))
        True
        >>> accepts_alpha(dc.mlp(2, 1))
        False
    """
    inner = unwrap(model)
    if isinstance(inner, DeepCTRL):
        return True
    try:
        parameters = inspect.signature(inner.forward).parameters
    except (TypeError, ValueError):
        return False
    return "alpha" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


def warn_if_alpha_unused(model: nn.Module, method: Any) -> None:
    """Warn when `method` trains at alphas it draws but `model` takes no `alpha`: the draws
    only reweigh the losses at random, and no rule strength can be chosen later."""
    if getattr(method, "draws_alpha", False) and not accepts_alpha(model):
        warnings.warn(
            f"{type(unwrap(model)).__name__}.forward takes no alpha, so the alphas "
            f"{getattr(method, 'name', 'the method')} draws do not reach the model; build it "
            "with dc.DeepCTRL, or give its forward an alpha parameter",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )


def predict(model: nn.Module, x: Inputs, alpha: Alpha = 0.0) -> Tensor:
    """Call `model` at `alpha` if it takes one (see
    [accepts_alpha][deepctrl.core.calls.accepts_alpha]), else ignore it.

    Args:
        model: The model.
        x: Its input.
        alpha: The rule strength, a float or one per row.

    Returns:
        The model's output.
    """
    if accepts_alpha(model):
        return model(x, alpha=alpha)
    return model(x)


TRAINING_HINT = "join the heads with torch.cat and pass a task_loss function that reads them"


def one_tensor(out: Any, who: str, hint: str = TRAINING_HINT) -> Tensor:
    """`out` when it is a tensor; else a ValueError naming what the model returned.

    Args:
        out: What the model returned.
        who: What needs one tensor ("training", "an Objective", "a sweep").
        hint: What to do instead.

    Returns:
        `out`.

    Examples:
        >>> one_tensor((1, 2), "a sweep", "join the heads")  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: the model returned a tuple, where a sweep needs one tensor of ...
    """
    if not isinstance(out, Tensor):
        raise ValueError(
            f"the model returned a {type(out).__name__}, where {who} needs one tensor of "
            f"outputs (rows first): {hint}"
        )
    return out


SWEEP_HINT = "join the heads with torch.cat, or give the sweep a forward(x, alphas) that does"


def predict_alphas(model: nn.Module, x: Inputs, alphas: Sequence[float] | Tensor) -> Tensor:
    """Outputs at every alpha; a model without alpha repeats its output.

    Args:
        model: The model ([DeepCTRL][deepctrl.core.model.DeepCTRL] runs its encoders once,
            also inside a `torch.compile` or DDP wrapper, which would otherwise compile
            once per alpha; other models run once per alpha).
        x: Its input.
        alphas: The rule strengths.

    Returns:
        The outputs, shape (n_alphas, batch, ...).
    """
    inner = unwrap(model)
    if isinstance(inner, DeepCTRL) and inner.sweeps_its_forward():
        return inner.forward_alphas(x, alphas)
    if accepts_alpha(model):
        return torch.stack(
            [one_tensor(model(x, alpha=float(a)), "a sweep", SWEEP_HINT) for a in alphas]
        )
    n = len(alphas)
    y = one_tensor(model(x), "a sweep", SWEEP_HINT)
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


_DROPOUTS = (
    nn.Dropout,
    nn.Dropout1d,
    nn.Dropout2d,
    nn.Dropout3d,
    nn.AlphaDropout,
    nn.FeatureAlphaDropout,
)


def has_randomness(model: nn.Module) -> bool:
    """Whether training-mode forwards of `model` draw random numbers (dropout, RReLU).

    Args:
        model: The module.

    Returns:
        True when a submodule draws random numbers in train mode.

    Examples:
        >>> (has_randomness(nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.1))),
        ...  has_randomness(nn.Sequential(nn.Linear(2, 1))))
        (True, False)
    """
    for m in model.modules():
        if (isinstance(m, _DROPOUTS) and m.p > 0) or isinstance(m, nn.RReLU):
            return True
        if isinstance(m, nn.RNNBase | nn.MultiheadAttention) and m.dropout > 0:
            return True
    return False
