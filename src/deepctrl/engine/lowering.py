"""A fast forward for stacked copies of common architectures.

``vmap(functional_call)`` works for any module but pays a lot of Python per call. For the
architectures this library builds (``DeepCTRL`` made of ``Sequential``/``MLP`` parts with
``Linear``, ``ReLU``, ``Sigmoid``, ``Tanh``, and :class:`deepctrl.core.model.Residual`),
``lower`` turns the module into a plain function on stacked parameters that runs every
layer as ONE batched matrix product (``baddbmm``) for all seeds. Anything else returns
None and the caller falls back to vmap. Exact types only: a subclass may have changed
``forward``.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import Tensor, nn

from deepctrl.core.model import MLP, DeepCTRL, Residual, merge_latents, with_alpha

Params = dict[str, Tensor]
Lowered = Callable[[Params, Tensor, Tensor], Tensor]
"""f(stacked params, x (S, batch, features), alpha (S,)) -> (S, batch, out)."""

TWIN = "twin."
"""Prefix of the (2S, ...) views pairing a rule-encoder parameter with its data-encoder twin."""

_ACTIVATIONS: dict[type, Callable[[Tensor], Tensor]] = {
    nn.ReLU: torch.relu, nn.Sigmoid: torch.sigmoid, nn.Tanh: torch.tanh,
    nn.Identity: lambda x: x,
}


def _linear(prefix: str, bias: bool) -> Lowered:
    w, b = f"{prefix}weight", f"{prefix}bias"
    if bias:
        return lambda p, x, a: torch.baddbmm(p[b].unsqueeze(1), x, p[w].transpose(1, 2))
    return lambda p, x, a: torch.bmm(x, p[w].transpose(1, 2))


def _chain(parts: list[Lowered]) -> Lowered:
    def run(p: Params, x: Tensor, a: Tensor) -> Tensor:
        for f in parts:
            x = f(p, x, a)
        return x

    return run


def _sequential(module: nn.Sequential, prefix: str) -> Lowered | None:
    parts = [lower(child, f"{prefix}{name}.") for name, child in module.named_children()]
    lowered = [f for f in parts if f is not None]
    return None if len(lowered) < len(parts) else _chain(lowered)


def twin_pairs(m: nn.Module) -> list[tuple[str, str]]:
    """(rule_encoder name, data_encoder name) of every parameter when a :class:`DeepCTRL`'s
    two encoders have the same architecture, so they can run as one batch of 2S copies."""
    if type(m) is not DeepCTRL or m.merge == "input":
        return []
    rule, data = m.rule_encoder, m.data_encoder
    if rule is None or lower(rule) is None or repr(rule) != repr(data):
        return []
    r, d = list(rule.named_parameters()), list(data.named_parameters())
    if [(n, p.shape) for n, p in r] != [(n, p.shape) for n, p in d]:
        return []
    return [(f"rule_encoder.{n}", f"data_encoder.{n}") for n, _ in r]


def _twin_encoders(m: DeepCTRL) -> Lowered | None:
    """Both encoders at once on the (2S, ...) twin views: rule copies first, then data."""
    inner = lower(m.rule_encoder, TWIN) if m.rule_encoder is not None else None
    if inner is None:
        return None

    def run(p: Params, h: Tensor, alpha: Tensor) -> Tensor:
        return inner(p, h.repeat(2, 1, 1), alpha)

    return run


def _deepctrl(m: DeepCTRL, prefix: str) -> Lowered | None:
    parts = {name: lower(getattr(m, name), f"{prefix}{name}.") if getattr(m, name) is not None
             else None for name in ("shared", "data_encoder", "rule_encoder", "decision")}
    shared, data, rule, decision = (parts[n] for n in
                                    ("shared", "data_encoder", "rule_encoder", "decision"))
    if data is None or decision is None:
        return None
    if m.merge != "input" and rule is None:
        return None
    if m.shared is not None and shared is None:
        return None
    merge, residual = m.merge, m.residual
    twins = _twin_encoders(m) if prefix == "" and twin_pairs(m) else None

    def encoders(p: Params, h: Tensor, alpha: Tensor) -> tuple[Tensor, Tensor]:
        if twins is None:
            assert rule is not None  # every merge but "input" has one
            return rule(p, h, alpha), data(p, h, alpha)
        z = twins(p, h, alpha)
        return z[:h.shape[0]], z[h.shape[0]:]

    def run(p: Params, x: Tensor, alpha: Tensor) -> Tensor:
        h = shared(p, x, alpha) if shared is not None else x
        a = alpha.reshape(-1, 1, 1).to(h.dtype)
        if merge == "input":
            z = data(p, with_alpha(h, a), alpha)
        else:
            z = merge_latents(merge, *encoders(p, h, alpha), a)
        y = decision(p, z, alpha)
        return y + x if residual else y

    return run


def lower(module: nn.Module, prefix: str = "") -> Lowered | None:
    """A batched function equivalent to ``module`` on stacked parameters, or None."""
    kind = type(module)
    if kind is nn.Linear:
        return _linear(prefix, module.bias is not None)
    if kind in _ACTIVATIONS:
        f = _ACTIVATIONS[kind]
        return lambda p, x, a: f(x)
    if kind in (nn.Sequential, MLP) and isinstance(module, nn.Sequential):
        return _sequential(module, prefix)
    if type(module) is Residual:
        inner = lower(module.inner, f"{prefix}inner.")
        return None if inner is None else (lambda p, x, a: inner(p, x, a) + x)
    if type(module) is DeepCTRL:
        return _deepctrl(module, prefix)
    return None
