"""Checks around a training method: that the method given is a method object with the rule
it needs, and that what its hooks return (alphas, state, loss) has the shapes and values the
trainer and `dc.Objective` rely on."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from deepctrl.core.method_state import SeedState
from deepctrl.core.method_terms import LossEstimate, Terms
from deepctrl.core.methods import Method


def check_method(method: Any, rule: object, call: str) -> None:
    """One clear error for a method class given where a method object belongs, for anything
    else that is not a method (arguments swapped, a prior), and for a method that needs a
    rule given none (`dc.fit` and `dc.Objective`, named by `call`, ask this)."""
    if isinstance(method, type):
        public = "DeepCTRL" if method.__name__ == "DeepCTRLMethod" else method.__name__
        raise ValueError(f"method must be a method object, dc.methods.{public}(), not the class")
    if not isinstance(method, Method):
        raise ValueError(
            f"method must be a dc.methods object (dc.methods.DeepCTRL(), TaskOnly(), ...), got "
            f"{type(method).__name__}: the order is {call}(model, rule, method, ...)"
        )
    if method.uses_rule and rule is None:
        raise ValueError(f"{method.name} needs a rule")


def method_alphas(method: Method, n: int, state: SeedState) -> Tensor:
    """`method.draw_alphas(n, state)`, checked: shape (S, n), every alpha in [0, 1] (the
    objective weighs the task by 1 - alpha)."""
    alphas = method.draw_alphas(n, state)
    shape = (len(state), n)
    if not isinstance(alphas, Tensor) or tuple(alphas.shape) != shape:
        got = tuple(alphas.shape) if isinstance(alphas, Tensor) else type(alphas).__name__
        raise ValueError(
            f"{method.name}.draw_alphas({n}) returned {got} for {len(state)} seed(s); it must "
            f"return shape {shape}"
        )
    outside = ~((alphas >= 0) & (alphas <= 1))  # NaN is outside too
    if alphas.numel() and bool(outside.any()):
        raise ValueError(
            f"{method.name}.draw_alphas drew alpha {float(alphas[outside][0]):g}, outside "
            "[0, 1]: the training objective weighs the task by 1 - alpha, so alphas must be "
            "in [0, 1]"
        )
    return alphas


def method_state(
    method: Method, seeds: list[int], n_rules: int, estimate: LossEstimate
) -> SeedState:
    """`method.init_state(seeds, n_rules, estimate)`, checked: a `SeedState` of as many
    seeds and rule leaves, which is what a saved state is matched against when it loads."""
    state = method.init_state(seeds, n_rules, estimate)
    if not isinstance(state, SeedState):
        raise ValueError(
            f"{method.name}.init_state returned {type(state).__name__}; it must return a "
            "dc.methods.SeedState"
        )
    if (state.n_seeds, state.n_rules) != (len(seeds), n_rules):
        raise ValueError(
            f"{method.name}.init_state returned a state of {state.n_seeds} seed(s) and "
            f"{state.n_rules} rule leaves for {len(seeds)} seed(s) and {n_rules} rule "
            "leaves: build it as SeedState(len(seeds), n_rules)"
        )
    return state


def method_loss(method: Method, t: Terms, state: SeedState) -> Tensor:
    """`method.objective(t, state)`, checked to be one loss per seed, shape (S,)."""
    loss = method.objective(t, state)
    shape = (len(t.task),)
    if not isinstance(loss, Tensor) or tuple(loss.shape) != shape:
        got = tuple(loss.shape) if isinstance(loss, Tensor) else type(loss).__name__
        raise ValueError(
            f"{method.name}.objective returned {got} for {shape[0]} seed(s): it must return "
            f"one loss per seed, shape {shape}"
        )
    return loss
