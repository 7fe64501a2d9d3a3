"""Training objectives. Each method turns per-seed task and rule losses into the loss to
minimise and says at which alpha the model trains and validates. Its per-seed state (rho,
multipliers, the alpha priors) is a [SeedState][deepctrl.methods.SeedState] that the
trainer owns and passes to every hook.

Examples:
    >>> import deepctrl as dc
    >>> m = dc.methods.TaskAndRule(0.1)
    >>> m.name, m.val_alpha
    ('TaskAndRule(0.1)', 0.0)
"""

from __future__ import annotations

import abc
from typing import Any

import torch
from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.method_state import SeedState, saved_seed_state
from deepctrl.core.method_terms import Coefficients, LossEstimate, Terms
from deepctrl.core.priors import Beta, Prior
from deepctrl.core.rho import ratio_floor, safe_ratio
from deepctrl.core.seeding import derive_seed


class Method(abc.ABC):
    """Base class: a formula over a batch's [Terms][deepctrl.methods.Terms] and a
    [SeedState][deepctrl.methods.SeedState].

    A method holds its settings only; the per-seed state (rho, multipliers, the alpha
    priors) is a `SeedState` made by [init_state][deepctrl.methods.Method.init_state] and
    owned by whoever trains (`dc.fit`'s engine or `dc.Objective`), which passes it to every
    hook. Override `objective` (or `coefficients`, see
    [LinearMethod][deepctrl.methods.LinearMethod]); stateful methods also override
    `init_state` and the update hooks.

    Attributes:
        val_alpha: The alpha at which the model is validated (for early stopping).
        train_alpha: The alpha at which the model trains, unless the method draws alphas.
        uses_rule: Whether the objective needs a rule (False: `rule=None` is allowed).
        needs_violations: Whether the objective reads the signed violations of the terms.
        draws_alpha: Whether the method trains the model at alphas it draws, which only a
            model that takes `alpha` can follow.
    """

    val_alpha: float = 0.0
    train_alpha: float = 0.0
    uses_rule: bool = True
    draws_alpha: bool = False
    needs_violations: bool = False

    @property
    def name(self) -> str:
        """The method's name in results and progress bars (the class name by default)."""
        return type(self).__name__

    def __repr__(self) -> str:
        """The class and its settings (public attributes), e.g. ``TaskAndRule(lam=0.3)``."""
        args = ", ".join(f"{k}={v!r}" for k, v in vars(self).items() if not k.startswith("_"))
        return f"{type(self).__name__}({args})"

    def init_state(self, seeds: list[int], n_rules: int, estimate: LossEstimate) -> SeedState:
        """The state of `seeds` before the first batch.

        Args:
            seeds: The seeds that train, one state entry each.
            n_rules: The number of rule leaves.
            estimate: Measures the initial losses (DeepCTRL's rho); called only by methods
                that need them.

        Returns:
            A state with no tensors and no priors, unless a subclass adds them.
        """
        return SeedState(len(seeds), n_rules)

    def load_state(self, state: dict[str, Any]) -> SeedState:
        """A state saved with [SeedState.state_dict][deepctrl.methods.SeedState.state_dict],
        rebuilt for this method.

        Args:
            state: The saved state.

        Returns:
            The rebuilt state.

        Raises:
            ValueError: When the state was saved by another method (it holds other tensors,
                priors or parts than this method's).
        """
        self.check_saved(state)
        fresh = self._fresh_state(saved_seed_state(state))
        return SeedState.from_state_dict(state, fresh.priors or None)

    def check_saved(self, state: dict[str, Any]) -> None:
        """Raise ValueError unless a saved state holds what this method's
        [init_state][deepctrl.methods.Method.init_state] makes: the same tensors, alpha
        priors or none, and as many parts.

        Args:
            state: A state saved with
                [SeedState.state_dict][deepctrl.methods.SeedState.state_dict].
        """
        state = saved_seed_state(state)
        fresh = self._fresh_state(state).state_dict()
        if holdings(state) != holdings(fresh):
            raise ValueError(
                f"this state was saved by another method: it holds {holdings(state)}, "
                f"while {self.name} keeps {holdings(fresh)}"
            )

    def _fresh_state(self, state: dict[str, Any]) -> SeedState:
        """What `init_state` makes for the seeds and rules of a saved `state` (its priors
        rebuild the saved ones)."""
        ones = torch.ones(state["n_seeds"])
        return self.init_state(
            list(range(state["n_seeds"])), state["n_rules"], lambda _: (ones, ones)
        )

    def draw_alphas(self, n: int, state: SeedState) -> Tensor:
        """Alphas for the next `n` batches of every seed of `state`.

        Args:
            n: The number of batches.
            state: The seeds' state (its priors draw the alphas).

        Returns:
            The alphas, shape (S, n); `train_alpha` everywhere unless a subclass draws them.
        """
        return torch.full((len(state), n), float(self.train_alpha))

    def val_alphas(self, state: SeedState) -> Tensor:
        """The alpha at which every seed of `state` is validated.

        Args:
            state: The seeds' state.

        Returns:
            The alphas, shape (S,); `val_alpha` everywhere unless a subclass says otherwise.
        """
        return torch.full((len(state),), float(self.val_alpha))

    @abc.abstractmethod
    def objective(self, t: Terms, state: SeedState) -> Tensor:
        """The per-seed loss; the trainer minimises its sum.

        Args:
            t: One batch's terms.
            state: The seeds' state.

        Returns:
            The loss, (S,).
        """

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients | None:
        """The objective's weights when it is linear in the terms.

        `dc.fit(compile=True)` compiles the whole training step of linear objectives only;
        a linear method returns coefficients with which
        [Coefficients.combine][deepctrl.methods.Coefficients.combine] gives what `objective`
        gives (see [LinearMethod][deepctrl.methods.LinearMethod]).

        Args:
            alpha: The rule strength of every seed, (S,).
            state: The seeds' state.

        Returns:
            The weights, or None (the default) for an objective that is not linear.
        """
        return None

    def after_step(self, t: Terms, state: SeedState) -> None:
        """Update `state` after the optimizer step (the dual step of LagrangianDual).

        Args:
            t: The batch's terms, detached.
            state: The seeds' state, updated in place.
        """

    def after_epoch(self, estimate: LossEstimate, state: SeedState) -> None:
        """Update `state` after every epoch (rho='epoch').

        Args:
            estimate: Measures the losses over the training set at the current weights.
            state: The seeds' state, updated in place.
        """


class LinearMethod(Method):
    """A method whose objective is linear in the terms: override `coefficients` only.

    Examples:
        >>> m = TaskAndRule(0.5)
        >>> state = m.init_state([0], 1, lambda reference: (torch.ones(1), torch.ones(1)))
        >>> m.coefficients(torch.zeros(1), state).rule
        0.5
    """

    @abc.abstractmethod
    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        """Per-seed weights of the task loss, the rule loss and each signed violation.

        Args:
            alpha: The rule strength of every seed, (S,), in the dtype of the task loss.
            state: The seeds' state.

        Returns:
            The weights; constants may be floats.
        """

    def objective(self, t: Terms, state: SeedState) -> Tensor:
        c = self.coefficients(t.alpha.to(t.task.dtype), state)
        return c.checked(len(t.task), t.violations.shape[1], self.name).combine(t)


class TaskOnly(LinearMethod):
    """The task loss alone at alpha = 0."""

    uses_rule = False

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        return Coefficients(1.0, 0.0, 0.0)


class RuleOnly(LinearMethod):
    """The rule loss alone at alpha = 1; validated at alpha = 1."""

    val_alpha = 1.0
    train_alpha = 1.0

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        return Coefficients(0.0, 1.0, 0.0)


class TaskAndRule(LinearMethod):
    """L_task + lam L_rule at alpha = 0 (the usual fixed regularizer, paper Eq. 1).

    Args:
        lam: The weight of the rule loss, >= 0.

    Raises:
        ValueError: When `lam` is negative (or NaN).
    """

    def __init__(self, lam: float) -> None:
        self.lam = finite_real(lam, "TaskAndRule's lam", nonneg=True)

    @property
    def name(self) -> str:
        return f"TaskAndRule({self.lam:g})"

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        return Coefficients(1.0, self.lam, 0.0)


class LagrangianDual(LinearMethod):
    """Lagrangian dual framework (Fioretto et al. 2020): one multiplier per rule.

    Primal: minimise L_task + sum_k lam_k mean(g_k) with the SIGNED constraint g_k.
    Dual, after every batch: lam_k <- max(0, lam_k + dual_lr mean(g_k)). The multipliers are
    the state's `"multipliers"`, shape (seeds, rules), zero at the start.

    Args:
        dual_lr: The step size of the dual update, > 0.

    Raises:
        ValueError: When `dual_lr` is not positive.
    """

    needs_violations = True

    def __init__(self, dual_lr: float = 1.0) -> None:
        self.dual_lr = finite_real(dual_lr, "LagrangianDual's dual_lr", positive=True)

    @property
    def name(self) -> str:
        return f"LagrangianDual({self.dual_lr:g})"

    def init_state(self, seeds: list[int], n_rules: int, estimate: LossEstimate) -> SeedState:
        state = SeedState(len(seeds), n_rules)
        state.add("multipliers", torch.zeros(len(seeds), n_rules))
        return state

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        return Coefficients(1.0, 0.0, state["multipliers"].to(alpha))

    def after_step(self, t: Terms, state: SeedState) -> None:
        lam = state["multipliers"]  # zeros of float32 at first: a float64 model's widen them
        lam = lam.to(torch.promote_types(lam.dtype, t.violations.dtype))
        g = t.violations.detach().to(lam.device, lam.dtype)
        state["multipliers"] = torch.clamp(lam + self.dual_lr * g, min=0.0)


def _checked_draws(priors: list[Prior], n: int) -> Tensor:
    """``prior.sample(n)`` of every prior, stacked (priors, n) and checked: shape (n,) each,
    every draw in [0, 1] (the paper's objective weighs the task by 1 - alpha, so a draw above
    1 would train the model away from the data). The built-in priors pass by construction; a
    prior of one's own may not. One check of the stack per batch keeps it cheap."""
    draws = [p.sample(n) for p in priors]
    for prior, d in zip(priors, draws, strict=True):
        if not isinstance(d, Tensor) or tuple(d.shape) != (n,):
            got = tuple(d.shape) if isinstance(d, Tensor) else type(d).__name__
            name = type(prior).__name__
            raise ValueError(f"{name}.sample({n}) returned {got}; it must return shape ({n},)")
    stacked = torch.stack(draws)
    low, high = torch.aminmax(stacked)
    if not (float(low) >= 0.0 and float(high) <= 1.0):  # NaN fails too
        row, col = (int(i) for i in torch.nonzero(~((stacked >= 0) & (stacked <= 1)))[0])
        raise ValueError(
            f"{type(priors[row]).__name__} drew alpha {float(stacked[row, col]):g}, outside "
            "[0, 1]: the training objective weighs the task by 1 - alpha, so a prior must "
            "draw in [0, 1]"
        )
    return stacked


def holdings(state: dict[str, Any]) -> str:
    """What a saved state holds, in words.

    >>> holdings({"tensors": {"rho": 0}, "priors": [{}], "parts": []})
    'rho and alpha priors'
    >>> holdings({"tensors": {}, "priors": [], "parts": [{}, {}]})
    'the states of 2 methods'
    """
    held = sorted(state["tensors"]) + (["alpha priors"] if state["priors"] else [])
    if state["parts"]:
        held.append(f"the states of {len(state['parts'])} methods")
    return " and ".join(held) or "nothing"


RHO_MODES = ("auto", "paper", "epoch")


class DeepCTRLMethod(LinearMethod):
    """The paper's objective: alpha L_rule + rho (1 - alpha) L_task, alpha ~ prior per batch.

    Public as `dc.methods.DeepCTRL`, the paper's name (the network is `dc.DeepCTRL`).

    The values of `rho`:

    * `"paper"`: L_rule,0 / L_task,0 over the training set at the initial weights (rule
      loss at alpha = 1, task loss at alpha = 0), 1.0 where either is zero;
    * `"auto"` (default): `"paper"` for rules judged on the output alone (such as
      the pendulum's energy rule); for perturbation rules L_rule is measured on the
      reference response of `deepctrl.core.scale` instead of the fresh network, which
      barely reacts to a 10 % input change (the paper's ratio is then near 0 and the
      rule wins at every alpha > 0; see docs/rho.md);
    * `"epoch"`: the paper's ratio re-estimated after every epoch (Appendix A.5), 1.0
      where either loss is zero;
    * a float fixes rho.

    Args:
        prior: The distribution of alpha drawn for every batch; None is the paper's
            [Beta(0.1, 0.1)][deepctrl.priors.Beta].
        rho: The balance of the task loss against the rule loss (see above).
        val_alpha: The alpha at which the model is validated for early stopping: 0, the
            paper's choice, suits a prior that draws alphas near 0; a prior that never
            does (alphas in [0.5, 1], say) should validate where it draws.

    Raises:
        ValueError: When `rho` is neither a positive finite number nor one of `"auto"`,
            `"paper"` and `"epoch"`, or `val_alpha` is outside [0, 1].
    """

    draws_alpha = True

    def __init__(
        self, prior: Prior | None = None, rho: float | str = "auto", val_alpha: float = 0.0
    ) -> None:
        self.val_alpha = finite_real(val_alpha, "val_alpha")
        if not 0.0 <= self.val_alpha <= 1.0:
            raise ValueError(f"val_alpha must be in [0, 1], got {val_alpha!r}")
        if isinstance(rho, str):
            if rho not in RHO_MODES:
                raise ValueError(f"rho must be a positive float or one of {RHO_MODES}, got {rho!r}")
        else:  # numpy scalars and one-element tensors fix rho too
            rho = finite_real(rho, "rho", positive=True)
        if prior is not None and not isinstance(prior, Prior):
            raise ValueError(
                f"prior must be a deepctrl prior (dc.priors.Beta, Uniform, Fixed), got {prior!r}"
            )
        self.prior = prior if prior is not None else Beta(0.1, 0.1)
        self.rho_mode = rho

    @property
    def name(self) -> str:
        return "DeepCTRL"

    def __repr__(self) -> str:
        """As built, under its public name: ``DeepCTRL(prior=Beta(a=0.1, b=0.1),
        rho='auto')`` (`val_alpha` when not 0)."""
        shown = f"DeepCTRL(prior={self.prior!r}, rho={self.rho_mode!r}"
        return shown + (f", val_alpha={self.val_alpha!r})" if self.val_alpha else ")")

    def init_state(self, seeds: list[int], n_rules: int, estimate: LossEstimate) -> SeedState:
        """Each seed's prior (its generator seeded from the seed) and rho: the fixed value,
        or measured with `estimate`.

        Args:
            seeds: The seeds that train.
            n_rules: The number of rule leaves.
            estimate: Measures the initial losses; called unless rho is a number.

        Returns:
            The state, with the tensor `"rho"` (S,) and one prior per seed.
        """
        state = SeedState(
            len(seeds), n_rules, [self.prior.spawn(derive_seed(s, "alpha")) for s in seeds]
        )
        if isinstance(self.rho_mode, float):
            state.add("rho", torch.full((len(seeds),), float(self.rho_mode), dtype=torch.float64))
        else:
            auto = self.rho_mode == "auto"
            rule, task = estimate(auto)
            state.add("rho", safe_ratio(rule, task, floor=ratio_floor(auto, rule, task, estimate)))
        return state

    def load_state(self, state: dict[str, Any]) -> SeedState:
        """A saved state rebuilt for this method. A fixed rho is a setting, like the other
        methods' settings: this method's value replaces the saved one. With `"auto"`,
        `"paper"` or `"epoch"` the saved rho, measured, is kept.

        Args:
            state: A state saved with
                [SeedState.state_dict][deepctrl.methods.SeedState.state_dict].

        Returns:
            The rebuilt state.

        Raises:
            ValueError: When the state was saved by another method.
        """
        self.check_saved(state)
        out = SeedState.from_state_dict(state, self.prior)
        if isinstance(self.rho_mode, float):
            out["rho"] = torch.full_like(out["rho"], self.rho_mode)
        return out

    def draw_alphas(self, n: int, state: SeedState) -> Tensor:
        return _checked_draws(state.priors, n)

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        rho = state["rho"].to(alpha)
        return Coefficients(rho * (1 - alpha), alpha, 0.0)

    def after_epoch(self, estimate: LossEstimate, state: SeedState) -> None:
        if self.rho_mode == "epoch":
            state["rho"] = safe_ratio(*estimate(False), state["rho"])
