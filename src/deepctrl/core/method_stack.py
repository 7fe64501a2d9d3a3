"""Several methods trained as one stack of seeds: ``MethodStack([m1, m2], seeds_each=3)``
owns seeds 0-2 for ``m1`` and 3-5 for ``m2`` along the stack's seed axis.

Each member keeps its own state, alphas and validation alpha and sees only its own seeds'
terms, so a member computes what it computes when trained alone. :func:`deepctrl.fit_methods`
builds one to train methods that share a network architecture as ONE vectorized job.

>>> import deepctrl as dc
>>> stack = MethodStack([dc.methods.TaskOnly(), dc.methods.RuleOnly()], seeds_each=2)
>>> stack.setup([0, 1, 0, 1], 1, lambda reference: (torch.ones(4), torch.ones(4)))
>>> stack.val_alphas().tolist()
[0.0, 0.0, 1.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.methods import Coefficients, LossEstimate, Method, Terms


class MethodStack(Method):
    """Members of ``methods``, each owning ``seeds_each`` consecutive seeds of the stack."""

    def __init__(self, methods: Sequence[Method], seeds_each: int) -> None:
        if not methods:
            raise ValueError("MethodStack needs at least one method")
        if seeds_each < 1:
            raise ValueError(f"seeds_each must be >= 1, got {seeds_each}")
        self.methods = list(methods)
        self.seeds_each = seeds_each
        self.updating = [i for i, m in enumerate(self.methods)
                         if type(m).after_step is not Method.after_step]
        self.uses_rule = any(m.uses_rule for m in self.methods)
        self.needs_violations = any(m.needs_violations for m in self.methods)

    @property
    def name(self) -> str:
        return " + ".join(m.name for m in self.methods)

    @property
    def sizes(self) -> list[int]:
        """Active seeds of each member, in stack order."""
        return [len(m.active) for m in self.methods]

    def _split(self, t: Tensor) -> tuple[Tensor, ...]:
        """``t`` cut into the active seeds of each member (``self.sizes``), in stack order."""
        return t.split(self.sizes)

    def _terms(self, t: Terms) -> list[Terms]:
        return [Terms(*parts) for parts in zip(*(self._split(x) for x in t), strict=True)]

    def _own(self, estimate: LossEstimate, index: int) -> LossEstimate:
        """``estimate`` restricted to the active seeds of member ``index``."""

        def own(reference: bool) -> tuple[Tensor, Tensor]:
            rule, task = estimate(reference)
            return self._split(rule)[index], self._split(task)[index]

        return own

    def setup(self, seeds: list[int], n_rules: int, estimate: LossEstimate) -> None:
        if len(seeds) != self.seeds_each * len(self.methods):
            raise ValueError(f"{len(self.methods)} methods x {self.seeds_each} seeds need "
                             f"{self.seeds_each * len(self.methods)} seeds, got {len(seeds)}")
        super().setup(seeds, n_rules, estimate)
        k = self.seeds_each
        for m in self.methods:
            m.active = torch.arange(k)
        for i, m in enumerate(self.methods):
            m.setup(seeds[i * k:(i + 1) * k], n_rules, self._own(estimate, i))

    def draw_alphas(self, n: int) -> Tensor:
        return torch.cat([m.draw_alphas(n) for m in self.methods])

    def val_alphas(self) -> Tensor:
        return torch.cat([m.val_alphas() for m in self.methods])

    def objective(self, t: Terms) -> Tensor:
        return torch.cat([m.objective(part) for m, part in zip(self.methods, self._terms(t),
                                                                strict=True)])

    def coefficients(self, alpha: Tensor, n_rules: int) -> Coefficients | None:
        """The members' coefficients in stack order, or None if one is not linear."""
        parts = []
        for m, a in zip(self.methods, self._split(alpha), strict=True):
            c = m.coefficients(a, n_rules)
            if c is None:
                return None
            parts.append(c.as_tensors(a, n_rules))
        return Coefficients(*(torch.cat(c) for c in zip(*parts, strict=True)))

    def after_step(self, t: Terms) -> None:
        if not self.updating:  # no member updates per step (only LagrangianDual does)
            return
        parts = self._terms(t)
        for i in self.updating:
            self.methods[i].after_step(parts[i])

    def after_epoch(self, estimate: LossEstimate) -> None:
        for i, m in enumerate(self.methods):
            m.after_epoch(self._own(estimate, i))

    def keep(self, mask: Tensor) -> None:
        for m, part in zip(self.methods, self._split(mask.cpu()), strict=True):
            m.keep(part)
        super().keep(mask)

    def state_dict(self) -> dict[str, Any]:
        return {"methods": [m.state_dict() for m in self.methods]}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        for m, s in zip(self.methods, state["methods"], strict=True):
            m.load_state_dict(s)
