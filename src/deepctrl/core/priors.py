"""Priors P(alpha) for the rule strength drawn once per training batch (paper Sec. 2).

Each prior owns a `torch.Generator`, so draws are reproducible and independent of the
global random state.

Examples:
    >>> prior = Beta(0.1, 0.1, seed=0)
    >>> a = prior.sample(1000)
    >>> bool(((a >= 0) & (a <= 1)).all())
    True
"""

from __future__ import annotations

import abc
import copy
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.checks import finite_real, nonneg_int, restore_generator, saved_state


def _log_gamma_sample(shape: float, n: int, generator: torch.Generator) -> Tensor:
    """log of n Gamma(shape, 1) draws (Marsaglia-Tsang; boosted for shape < 1), float64."""
    boost = shape < 1.0
    d = (shape + 1.0 if boost else shape) - 1.0 / 3.0
    c = 1.0 / (9.0 * d) ** 0.5
    out = torch.empty(n, dtype=torch.float64)
    todo = torch.arange(n)
    while todo.numel():
        m = todo.numel()
        z = torch.randn(m, generator=generator, dtype=torch.float64)
        u = torch.rand(m, generator=generator, dtype=torch.float64)
        v = (1.0 + c * z) ** 3
        ok = v > 0
        logv = torch.log(torch.where(ok, v, torch.ones_like(v)))
        ok &= torch.log(u) < 0.5 * z**2 + d - d * v + d * logv
        out[todo[ok]] = torch.log(torch.tensor(d, dtype=torch.float64)) + logv[ok]
        todo = todo[~ok]
    if boost:
        u = torch.rand(n, generator=generator, dtype=torch.float64)
        out += torch.log(u) / shape
    return out


class Prior(abc.ABC):
    """A distribution of alpha with its own generator.

    A prior of your own implements `sample` (n draws in [0, 1], shape (n,), from
    `self.generator` so that seeds reproduce runs) and `params`. State it changes as it
    draws (a counter, say) goes through `get_extra_state` and `set_extra_state`, so that
    `state_dict` resumes it.

    Args:
        seed: Seeds the generator, an integer >= 0; None leaves it at PyTorch's default
            seed. Training gives every seed's copy a generator of its own (see
            [spawn][deepctrl.priors.Prior.spawn]).

    Raises:
        ValueError: When `seed` is neither None nor an integer >= 0.
    """

    def __init__(self, seed: int | None = None) -> None:
        self.generator = torch.Generator()
        self.seed = None if seed is None else nonneg_int(seed, "seed")
        """The seed the generator was seeded with, None for PyTorch's default; the repr
        shows it."""
        if self.seed is not None:
            self.generator.manual_seed(self.seed)

    @abc.abstractmethod
    def sample(self, n: int, dtype: torch.dtype = torch.float32) -> Tensor:
        """Draw alphas from the prior's generator.

        Args:
            n: The number of draws.
            dtype: The draws' dtype. In float32 draws within 6e-8 of 1 round to 1.0.

        Returns:
            The draws, shape (n,), each in [0, 1] (training refuses others).
        """

    @abc.abstractmethod
    def params(self) -> dict[str, float]:
        """The prior's parameters by name, as its `repr` and saved states show them.

        Returns:
            The parameters, e.g. `{"a": 0.1, "b": 0.1}`.
        """

    def spawn(self, seed: int) -> Prior:
        """A copy with a fresh generator.

        Args:
            seed: Seeds the copy's generator.

        Returns:
            The copy; the prior itself is left as it is.
        """
        out = copy.deepcopy(self)  # each seed's copy holds lists or tensors of its own
        out.seed = int(seed)
        out.generator = torch.Generator().manual_seed(out.seed)
        return out

    def __getstate__(self) -> dict[str, Any]:
        # the generator as its state: torch.Generator itself pickles (and deep-copies) only
        # from torch 2.4 on, and priors travel to worker processes and through deepcopy.
        # As bytes, not a tensor: torch.multiprocessing shares a tensor's storage by file
        # descriptor, and this temporary one would be freed before a spawned child (as
        # Lightning's ddp_spawn starts) opened it.
        if "generator" not in self.__dict__:  # spawn copies through here too
            raise ValueError(
                f"{type(self).__name__}.__init__ must call super().__init__(seed): the prior "
                "has no generator to draw from"
            )
        state = self.__dict__.copy()
        state["generator"] = bytes(self.generator.get_state().numpy())
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.generator = torch.Generator()
        saved = torch.frombuffer(bytearray(state["generator"]), dtype=torch.uint8)
        self.generator.set_state(saved)

    def get_extra_state(self) -> Any:
        """State beyond the parameters and the generator that `state_dict` must keep: a
        prior of your own that changes as it draws returns it here.

        Returns:
            None (nothing) by default.
        """
        return None

    def set_extra_state(self, state: Any) -> None:
        """Restore what [get_extra_state][deepctrl.priors.Prior.get_extra_state] returned.

        Args:
            state: The saved extra state.
        """

    def state_dict(self) -> dict[str, Any]:
        """The parameters, the generator's state and any extra state, for saving.

        Returns:
            A dict read back by [load_state_dict][deepctrl.priors.Prior.load_state_dict].
        """
        state = {
            "prior": type(self).__qualname__,
            "params": self.params(),
            "seed": self.seed,
            "generator": self.generator.get_state(),
        }
        extra = self.get_extra_state()
        return state if extra is None else {**state, "extra_state": extra}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore the generator's state (and the seed it was seeded with) from a
        [state_dict][deepctrl.priors.Prior.state_dict].

        Args:
            state: The saved state of a prior of the same class with the same parameters.

        Raises:
            ValueError: When the saved state is another class's, its parameters differ from
                this prior's, or `state` is not a prior's state dict.
        """
        state = saved_state(state, ("params", "generator"), f"{type(self).__name__}.state_dict()")
        saved_class = state.get("prior", type(self).__qualname__)  # older states name none
        if saved_class != type(self).__qualname__:
            raise ValueError(
                f"prior state is a {saved_class}'s, this prior is a {type(self).__qualname__}"
            )
        if state["params"] != self.params():
            raise ValueError(f"prior state is for {state['params']}, this prior is {self.params()}")
        restore_generator(self.generator, state["generator"], "state['generator']")
        if "seed" in state:
            seed = state["seed"]
            self.seed = None if seed is None else nonneg_int(seed, "state['seed']")
        if "extra_state" in state:
            self.set_extra_state(state["extra_state"])

    def __repr__(self) -> str:
        """As built: ``Beta(a=0.5, b=0.5, seed=3)`` (`seed` when one was given)."""
        shown = dict(self.params())
        seed = getattr(self, "seed", None)  # a prior pickled before priors kept their seed
        if seed is not None:
            shown["seed"] = seed
        args = ", ".join(f"{k}={v}" for k, v in shown.items())
        return f"{type(self).__name__}({args})"


def draws(n: int) -> int:
    """``n`` as a number of draws: an integer >= 0.

    >>> draws(-1)
    Traceback (most recent call last):
    ...
    ValueError: the number of draws must be an integer >= 0, got -1
    """
    return nonneg_int(n, "the number of draws")


class Beta(Prior):
    """Beta(a, b); the paper's default Beta(0.1, 0.1) puts most draws near 0 and 1.

    Args:
        a: The first shape parameter, > 0.
        b: The second shape parameter, > 0.
        seed: Seeds the generator, as for [Prior][deepctrl.priors.Prior].

    Raises:
        ValueError: When `a` or `b` is not a positive finite number.
    """

    def __init__(self, a: float = 0.1, b: float = 0.1, seed: int | None = None) -> None:
        a, b = finite_real(a, "Beta's a", positive=True), finite_real(b, "Beta's b", positive=True)
        super().__init__(seed)
        self.a, self.b = a, b

    def sample(self, n: int, dtype: torch.dtype = torch.float32) -> Tensor:
        n = draws(n)
        lx = _log_gamma_sample(self.a, n, self.generator)
        ly = _log_gamma_sample(self.b, n, self.generator)
        return torch.sigmoid(lx - ly).to(dtype)

    def params(self) -> dict[str, float]:
        return {"a": self.a, "b": self.b}


class Uniform(Prior):
    """U[0, 1], i.e. Beta(1, 1).

    Args:
        seed: Seeds the generator, as for [Prior][deepctrl.priors.Prior].
    """

    def sample(self, n: int, dtype: torch.dtype = torch.float32) -> Tensor:
        return torch.rand(draws(n), generator=self.generator, dtype=dtype)

    def params(self) -> dict[str, float]:
        return {}


class Fixed(Prior):
    """Always `a`.

    Args:
        a: The one value drawn, in [0, 1] (training weighs the task by 1 - a).
        seed: Seeds the generator, which a fixed prior never draws from.

    Raises:
        ValueError: When `a` is not a number in [0, 1].
    """

    def __init__(self, a: float, seed: int | None = None) -> None:
        super().__init__(seed)
        self.a = finite_real(a, "Fixed's a")
        if not 0.0 <= self.a <= 1.0:
            raise ValueError(f"Fixed needs a in [0, 1] (the alpha training draws), got {a}")

    def sample(self, n: int, dtype: torch.dtype = torch.float32) -> Tensor:
        return torch.full((draws(n),), self.a, dtype=dtype)

    def params(self) -> dict[str, float]:
        return {"a": self.a}
