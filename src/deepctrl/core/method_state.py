"""`SeedState`: what a training method remembers, for every seed trained at once.

A method (`deepctrl.core.methods`) is a formula; its state lives here and belongs to
whoever trains: [fit][deepctrl.engine.training.fit]'s engine keeps one for all its seeds and
slices it when seeds stop early, [Objective][deepctrl.core.objective.Objective] keeps one for
its single model. Every tensor has the seed axis first, and every seed has its own alpha
prior (its own random generator) where the method draws alpha. A stack of methods trained
as one job (`deepctrl.core.method_stack.MethodStack`) has one part per member, in stack
order.

Nothing here is reduced over DDP ranks: a method updates its state from quantities that
are already summed over the ranks (rho's losses, the dual step's violations), so every rank
holds the same state.

Examples:
    >>> import torch
    >>> state = SeedState(3, n_rules=1)
    >>> state.add("rho", torch.tensor([0.5, 1.0, 2.0]))
    >>> kept = state.select([True, False, True])      # the second seed stopped
    >>> kept["rho"].tolist(), len(kept)
    ([0.5, 2.0], 2)
    >>> SeedState.join([kept, state.select([False, True, False])])["rho"].tolist()
    [0.5, 2.0, 1.0]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.checks import nonneg_int, saved_state
from deepctrl.core.priors import Prior


class SeedState:
    """Per-seed state of a method for `n_seeds` seeds: named tensors (seed axis first),
    one alpha prior per seed (or none), the number of rule leaves the method weighs, and
    the parts of a stack of methods.

    `state["rho"]` reads a tensor, `state["rho"] = t` replaces one declared with
    [add][deepctrl.methods.SeedState.add], `"rho" in state` asks whether there is one, and
    `len(state)` is the number of seeds.

    Args:
        n_seeds: The number of seeds.
        n_rules: The number of rule leaves the method weighs.
        priors: One alpha prior per seed, or none for a method that draws no alpha.
        parts: The states of the members of a stack of methods, whose seeds add up to
            `n_seeds`; none for one method.

    Raises:
        ValueError: When `n_seeds` or `n_rules` is not an integer >= 0, or `priors` or
            `parts` do not match `n_seeds`.
    """

    def __init__(
        self,
        n_seeds: int,
        n_rules: int = 0,
        priors: Sequence[Prior] = (),
        parts: Sequence[SeedState] = (),
    ) -> None:
        n_seeds, n_rules = nonneg_int(n_seeds, "n_seeds"), nonneg_int(n_rules, "n_rules")
        if priors and len(priors) != n_seeds:
            raise ValueError(f"{len(priors)} priors for {n_seeds} seeds")
        if parts and sum(len(p) for p in parts) != n_seeds:
            raise ValueError(f"parts of {[len(p) for p in parts]} seeds for {n_seeds} seeds")
        self.n_seeds, self.n_rules = n_seeds, n_rules
        self.priors = list(priors)
        self.parts = list(parts)
        self.tensors: dict[str, Tensor] = {}

    def __len__(self) -> int:
        return self.n_seeds

    def __contains__(self, name: str) -> bool:
        return name in self.tensors

    def __getitem__(self, name: str) -> Tensor:
        return self.tensors[name]

    def __setitem__(self, name: str, value: Tensor) -> None:
        if name not in self.tensors:
            raise KeyError(f"the state has no tensor {name!r}; declare it with add()")
        self.add(name, value)

    def add(self, name: str, value: Tensor) -> None:
        """Declare (or replace) a per-seed tensor.

        Args:
            name: The tensor's name, e.g. `"rho"`.
            value: The tensor; its first axis must be the seeds.

        Raises:
            ValueError: When `value`'s first axis is not one entry per seed.
        """
        if value.dim() == 0 or value.shape[0] != self.n_seeds:
            raise ValueError(
                f"state {name!r} needs one entry per seed ({self.n_seeds}) along "
                f"its first axis, got shape {tuple(value.shape)}"
            )
        self.tensors[name] = value

    def _split(self, mask: Tensor) -> tuple[Tensor, ...]:
        return mask.split([len(p) for p in self.parts])

    def select(self, keep: Sequence[bool] | Tensor) -> SeedState:
        """The state of the seeds marked True in `keep`, in order (tensors are copied, the
        priors are shared, so they go on drawing where they stood).

        Args:
            keep: One bool per seed.

        Returns:
            The state of the kept seeds.

        Raises:
            ValueError: When `keep` does not have one entry per seed.
        """
        mask = torch.as_tensor(keep, dtype=torch.bool).cpu().reshape(-1)
        if len(mask) != self.n_seeds:
            raise ValueError(f"keep has {len(mask)} entries for {self.n_seeds} seeds")
        kept = mask.tolist()
        priors = [p for p, k in zip(self.priors, kept, strict=True) if k] if self.priors else []
        parts = (
            [part.select(m) for part, m in zip(self.parts, self._split(mask), strict=True)]
            if self.parts
            else []
        )
        out = SeedState(int(mask.sum()), self.n_rules, priors, parts)
        for name, value in self.tensors.items():
            out.tensors[name] = value[mask.to(value.device)].clone()
        return out

    @classmethod
    def join(cls, states: Sequence[SeedState]) -> SeedState:
        """The states of disjoint seed sets of one method as one state, seeds in order.

        Args:
            states: States of the same method (same tensors and parts).

        Returns:
            The joined state.

        Raises:
            ValueError: When `states` is empty or the states are of different methods.
        """
        if not states:
            raise ValueError("join needs at least one state")
        first = states[0]
        for s in states[1:]:
            if sorted(s.tensors) != sorted(first.tensors) or len(s.parts) != len(first.parts):
                raise ValueError("join needs states of the same method")
        parts = [cls.join(list(group)) for group in zip(*(s.parts for s in states), strict=True)]
        out = cls(
            sum(len(s) for s in states), first.n_rules, [p for s in states for p in s.priors], parts
        )
        for name in first.tensors:
            out.tensors[name] = torch.cat([s.tensors[name] for s in states])
        return out

    def state_dict(self) -> dict[str, Any]:
        """Tensors, the priors' generator states and the parts, for saving.

        Returns:
            A dict of plain values and tensors, read back by
                [from_state_dict][deepctrl.methods.SeedState.from_state_dict].
        """
        return {
            "n_seeds": self.n_seeds,
            "n_rules": self.n_rules,
            "tensors": {k: v.clone() for k, v in self.tensors.items()},
            "priors": [p.state_dict() for p in self.priors],
            "parts": [p.state_dict() for p in self.parts],
        }

    @classmethod
    def from_state_dict(
        cls,
        state: dict[str, Any],
        prior: Prior | Sequence[Prior] | None = None,
        parts: Sequence[SeedState] = (),
    ) -> SeedState:
        """A state from [state_dict][deepctrl.methods.SeedState.state_dict].

        Args:
            state: The saved state.
            prior: Rebuilds the saved priors: the method's prior, whose parameters they must
                have, or one prior per saved prior (each seed's own, of its own class and
                parameters). Needed when the state has priors.
            parts: The rebuilt parts of a stack of methods.

        Returns:
            The rebuilt state.

        Raises:
            ValueError: When the state has priors and `prior` is None, or is not what
                `state_dict` returns.
        """
        state = saved_seed_state(state)
        saved = state["priors"]
        if saved and prior is None:
            raise ValueError("this state has alpha priors: pass the method's prior")
        templates = list(prior) if isinstance(prior, Sequence) else [prior] * len(saved)
        if len(templates) != len(saved):
            raise ValueError(f"this state has {len(saved)} alpha priors, given {len(templates)}")
        priors = []
        for s, template in zip(saved, templates, strict=True):
            p = template.spawn(0)  # type: ignore[union-attr]
            p.load_state_dict(s)
            priors.append(p)
        out = cls(state["n_seeds"], state["n_rules"], priors, parts)
        for name, value in state["tensors"].items():
            out.add(name, value.clone())
        return out

    def __repr__(self) -> str:
        shapes = {k: tuple(v.shape) for k, v in self.tensors.items()}
        return (
            f"SeedState(seeds={self.n_seeds}, tensors={shapes}, priors={len(self.priors)}, "
            f"parts={[len(p) for p in self.parts]})"
        )


SAVED_KEYS = ("n_seeds", "n_rules", "tensors", "priors", "parts")
"""What [SeedState.state_dict][deepctrl.methods.SeedState.state_dict] holds."""


def saved_seed_state(state: object) -> dict[str, Any]:
    """`state` when it is what [SeedState.state_dict][deepctrl.methods.SeedState.state_dict]
    returns (a method's state: the ``"method"`` entry of an objective's state); otherwise an
    error that says what was given.

    Examples:
        >>> saved_seed_state({"n_seeds": 1})
        Traceback (most recent call last):
        ...
        ValueError: state is not what SeedState.state_dict() returns: it has no 'n_rules', \
'tensors', 'priors', 'parts'
    """
    if state is None:
        raise ValueError(
            "the method state is None: an objective saved before its first batch has none "
            "(load its state with Objective.load_state_dict)"
        )
    if isinstance(state, dict) and "method" in state and "n_seeds" not in state:
        raise ValueError(
            "this is an objective's state, not a method's: load it with "
            "Objective.load_state_dict, or give its 'method' entry"
        )
    return saved_state(state, SAVED_KEYS, "SeedState.state_dict()")
