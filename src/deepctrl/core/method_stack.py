"""Several methods trained as one stack of seeds: ``MethodStack([m1, m2], seeds_each=3)``
owns seeds 0-2 for ``m1`` and 3-5 for ``m2`` along the stack's seed axis.

Its state has one part per member (:class:`~deepctrl.core.method_state.SeedState`), so a
member sees only its own seeds' state and terms and computes what it computes when trained
alone. :func:`deepctrl.fit_methods` builds one to train methods that share a network
architecture as ONE vectorized job.

>>> import deepctrl as dc
>>> stack = MethodStack([dc.methods.TaskOnly(), dc.methods.RuleOnly()], seeds_each=2)
>>> state = stack.init_state([0, 1, 0, 1], 1, lambda reference: (torch.ones(4), torch.ones(4)))
>>> stack.val_alphas(state).tolist(), [len(part) for part in state.parts]
([0.0, 0.0, 1.0, 1.0], [2, 2])
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.method_checks import method_alphas, method_loss, method_state
from deepctrl.core.method_state import SeedState, saved_seed_state
from deepctrl.core.method_terms import Coefficients, LossEstimate, Terms
from deepctrl.core.methods import Method, holdings


class MethodStack(Method):
    """Members of ``methods``, each owning ``seeds_each`` consecutive seeds of the stack."""

    def __init__(self, methods: Sequence[Method], seeds_each: int) -> None:
        if not methods:
            raise ValueError("MethodStack needs at least one method")
        if seeds_each < 1:
            raise ValueError(f"seeds_each must be >= 1, got {seeds_each}")
        self.methods = list(methods)
        self.seeds_each = seeds_each
        self.updating = [
            i for i, m in enumerate(self.methods) if type(m).after_step is not Method.after_step
        ]
        self.uses_rule = any(m.uses_rule for m in self.methods)
        self.needs_violations = any(m.needs_violations for m in self.methods)

    @property
    def name(self) -> str:
        return " + ".join(m.name for m in self.methods)

    def __repr__(self) -> str:
        return f"MethodStack({self.methods!r}, seeds_each={self.seeds_each})"

    @staticmethod
    def _split(t: Tensor, state: SeedState) -> tuple[Tensor, ...]:
        """``t`` (seed axis first) cut into the seeds of each member, in stack order."""
        return t.split([len(p) for p in state.parts])

    def _terms(self, t: Terms, state: SeedState) -> list[Terms]:
        return [Terms(*parts) for parts in zip(*(self._split(x, state) for x in t), strict=True)]

    @staticmethod
    def _own(estimate: LossEstimate, index: int, sizes: list[int]) -> LossEstimate:
        """``estimate`` restricted to the seeds of member ``index`` (members of ``sizes``)."""

        def own(reference: bool) -> tuple[Tensor, Tensor]:
            rule, task = estimate(reference)
            return rule.split(sizes)[index], task.split(sizes)[index]

        return own

    def init_state(self, seeds: list[int], n_rules: int, estimate: LossEstimate) -> SeedState:
        k = self.seeds_each
        if len(seeds) != k * len(self.methods):
            raise ValueError(
                f"{len(self.methods)} methods x {k} seeds need "
                f"{k * len(self.methods)} seeds, got {len(seeds)}"
            )
        sizes = [k] * len(self.methods)
        parts = [
            method_state(m, seeds[i * k : (i + 1) * k], n_rules, self._own(estimate, i, sizes))
            for i, m in enumerate(self.methods)
        ]
        return SeedState(len(seeds), n_rules, parts=parts)

    def check_saved(self, state: dict[str, Any]) -> None:
        """Raise ValueError unless a saved state holds one part per member (each part is
        checked by its member when it loads)."""
        state = saved_seed_state(state)
        if state["tensors"] or state["priors"] or len(state["parts"]) != len(self.methods):
            raise ValueError(
                f"this state was saved by another method: it holds {holdings(state)}, while "
                f"{self.name} keeps the states of {len(self.methods)} methods"
            )

    def load_state(self, state: dict[str, Any]) -> SeedState:
        self.check_saved(state)
        parts = [m.load_state(s) for m, s in zip(self.methods, state["parts"], strict=True)]
        return SeedState.from_state_dict(state, parts=parts)

    # A member whose seeds have all stopped early keeps a part of no seeds: its hooks are not
    # called (a method of your own need not handle an empty state), its rows are empty.

    def draw_alphas(self, n: int, state: SeedState) -> Tensor:
        return torch.cat(
            [
                method_alphas(m, n, p) if len(p) else torch.zeros(0, n)
                for m, p in zip(self.methods, state.parts, strict=True)
            ]
        )

    def val_alphas(self, state: SeedState) -> Tensor:
        return torch.cat(
            [
                m.val_alphas(p) if len(p) else torch.zeros(0)
                for m, p in zip(self.methods, state.parts, strict=True)
            ]
        )

    def objective(self, t: Terms, state: SeedState) -> Tensor:
        return torch.cat(
            [
                method_loss(m, part, p) if len(p) else part.task.new_zeros(0)
                for m, part, p in zip(self.methods, self._terms(t, state), state.parts, strict=True)
            ]
        )

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients | None:
        """The members' coefficients in stack order, or None if one is not linear."""
        width = state.n_rules if self.needs_violations else 1  # the terms' violation columns
        out = []
        for m, a, p in zip(self.methods, self._split(alpha, state), state.parts, strict=True):
            c = m.coefficients(a, p) if len(p) else Coefficients(0.0, 0.0, 0.0)
            if c is None:
                return None
            out.append(c.checked(len(a), width, m.name).as_tensors(a, width))
        return Coefficients(*(torch.cat(c) for c in zip(*out, strict=True)))

    def after_step(self, t: Terms, state: SeedState) -> None:
        if not self.updating:  # no member updates per step (only LagrangianDual does)
            return
        parts = self._terms(t, state)
        for i in self.updating:
            if len(state.parts[i]):
                self.methods[i].after_step(parts[i], state.parts[i])

    def after_epoch(self, estimate: LossEstimate, state: SeedState) -> None:
        sizes = [len(p) for p in state.parts]
        for i, (m, p) in enumerate(zip(self.methods, state.parts, strict=True)):
            if len(p):
                m.after_epoch(self._own(estimate, i, sizes), p)
