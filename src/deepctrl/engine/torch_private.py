"""PyTorch's private API, used in one place only, each piece found by feature detection with
a public fallback.

The package admits ``torch>=2.3``; the fast paths below exist in the releases tested here
(2.13) and may move or vanish in others. Every function works without them: where the
private piece is missing it does the same work through the public API, more slowly.

>>> import torch
>>> dst, src = [torch.zeros(2)], [torch.ones(2)]
>>> foreach_copy_(dst, src)
>>> dst[0].tolist()
[1.0, 1.0]
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import torch
from torch import Tensor

HAS_FUSED_ADAM: bool = hasattr(torch, "_fused_adam_")
"""Whether this PyTorch has the fused Adam kernel that ``torch.optim.Adam(fused=True)`` runs."""

HAS_GUARD_FILTERS: bool = hasattr(torch.compiler, "skip_guard_on_globals_unsafe")
"""Whether ``torch.compile`` takes ``options={"guard_filter_fn": ...}``."""


def fused_adam_(
    weights: list[Tensor],
    grads: list[Tensor],
    exp_avg: list[Tensor],
    exp_avg_sq: list[Tensor],
    step: Tensor,
    **options: Any,
) -> bool:
    """One Adam update in PyTorch's fused kernel (``step``: the step count after this update,
    ``options``: lr, beta1, beta2, eps, weight_decay, amsgrad, maximize); False, having changed
    nothing, when there is no such kernel here or for these tensors' device and dtype."""
    if not HAS_FUSED_ADAM:
        return False
    try:
        torch._fused_adam_(
            weights, grads, exp_avg, exp_avg_sq, [], [step] * len(weights), **options
        )
    except RuntimeError:
        return False
    return True


def foreach_copy_(dst: Sequence[Tensor], src: Sequence[Tensor]) -> None:
    """``dst[i].copy_(src[i])`` for every i, in one call where PyTorch has one."""
    copy = getattr(torch, "_foreach_copy_", None)
    if copy is not None:
        copy(list(dst), list(src))
        return
    for d, s in zip(dst, src, strict=True):
        d.copy_(s)


def mark_dynamic(t: Tensor, dim: int) -> None:
    """Tell ``torch.compile`` that size ``dim`` of ``t`` varies (no effect where it cannot)."""
    mark = getattr(getattr(torch, "_dynamo", None), "mark_dynamic", None)
    if mark is not None:
        mark(t, dim)


def compile_errors() -> tuple[type[BaseException], ...]:
    """The exceptions ``torch.compile`` raises when it cannot trace or build a graph (torch
    2.5 raises ``ConstraintViolationError``, a RuntimeError, when a size marked dynamic gets
    specialised)."""
    exc = getattr(getattr(torch, "_dynamo", None), "exc", None)
    errors = [getattr(exc, "TorchDynamoException", None)]
    try:
        from torch.fx.experimental import symbolic_shapes
    except ImportError:
        pass
    else:
        errors.append(getattr(symbolic_shapes, "ConstraintViolationError", None))
    return tuple(e for e in errors if isinstance(e, type))


@contextlib.contextmanager
def distinct_sizes() -> Iterator[None]:
    """While a graph is built: sizes that happen to be equal are not assumed equal for good
    (``use_duck_shape=False``), where PyTorch has the switch."""
    try:
        import torch.fx.experimental._config as fx_config
    except ImportError:
        yield
        return
    if not hasattr(fx_config, "use_duck_shape"):
        yield
        return
    with fx_config.patch(use_duck_shape=False):  # type: ignore[attr-defined]
        yield


def with_fresh_code(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` with a code object of its own: dynamo keeps compiled graphs per code object, up
    to a limit, so each fit's step gets its own cache instead of sharing one whose limit many
    fits in one process would exhaust (and fall back to eager steps)."""
    fn.__code__ = fn.__code__.replace()
    return fn
