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
import warnings
from collections.abc import Callable
from typing import Any, NamedTuple

import torch
from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.method_state import SeedState, saved_seed_state
from deepctrl.core.priors import Beta, Prior
from deepctrl.core.seeding import derive_seed
from deepctrl.core.warn_site import outside_stacklevel


class Terms(NamedTuple):
    """Per-seed quantities of one batch, for S seeds.

    Attributes:
        task: The task loss, (S,).
        rule: The rule loss, (S,).
        violations: The mean signed violation of each rule leaf, (S, n_rules).
        alpha: The rule strength each seed trained at, (S,).
    """

    task: Tensor
    rule: Tensor
    violations: Tensor
    alpha: Tensor

    def detached(self) -> Terms:
        """The same terms cut from the autograd graph (what a method's hooks receive).

        >>> x = torch.ones(2, requires_grad=True)
        >>> Terms(x * 2, x, x[:, None], x).detached().task.requires_grad
        False
        """
        return Terms(*(t.detach() for t in self))


class Coefficients(NamedTuple):
    """Per-seed weights of a linear objective; a float weighs every seed alike.

    The objective is `task * t.task + rule * t.rule + sum_k violations_k * t.violations_k`.

    Attributes:
        task: The weight of the task loss, (S,) or a float.
        rule: The weight of the rule loss, (S,) or a float.
        violations: The weight of each signed violation, (S, n_rules) or a float.
    """

    task: Tensor | float
    rule: Tensor | float
    violations: Tensor | float

    def combine(self, t: Terms) -> Tensor:
        """The per-seed objective of terms `t`.

        Args:
            t: One batch's terms.

        Returns:
            The objective, (S,).

        Examples:
            >>> c = Coefficients(1.0, torch.tensor([0.5]), 0.0)
            >>> c.combine(Terms(torch.tensor([2.0]), torch.tensor([4.0]), torch.ones(1, 1),
            ...                 torch.zeros(1))).tolist()
            [4.0]
        """
        return (
            self.task * t.task + self.rule * t.rule + (self.violations * t.violations).sum(dim=-1)
        )

    def as_tensors(self, like: Tensor, n_rules: int) -> Coefficients:
        """Every weight as a tensor.

        Args:
            like: A tensor of S values, whose dtype and device the weights take.
            n_rules: The number of rule leaves.

        Returns:
            The weights, shapes (S,), (S,) and (S, n_rules).

        Examples:
            >>> Coefficients(1.0, 0.5, 0.0).as_tensors(torch.zeros(2), 1).violations.shape
            torch.Size([2, 1])
        """
        n = len(like)

        def full(value: Tensor | float, shape: tuple[int, ...]) -> Tensor:
            if isinstance(value, Tensor):
                return value.to(like).expand(shape)
            return torch.full(shape, float(value), dtype=like.dtype, device=like.device)

        return Coefficients(
            full(self.task, (n,)), full(self.rule, (n,)), full(self.violations, (n, n_rules))
        )

    def checked(self, n: int, n_rules: int, method: str) -> Coefficients:
        """The weights themselves, when every tensor among them fits `n` seeds.

        Args:
            n: The number of seeds.
            n_rules: The number of violation columns of the terms.
            method: The method's name, for the message.

        Returns:
            The weights, unchanged.

        Raises:
            ValueError: When a weight does not broadcast to (n,), (n,) or (n, n_rules).

        Examples:
            >>> Coefficients(torch.ones(5), 1.0, 0.0).checked(2, 1, "Mine")  # doctest: +ELLIPSIS
            Traceback (most recent call last):
            ...
            ValueError: Mine.coefficients gave task of shape (5,) for 2 seed(s): ...
        """
        for field, shape in zip(self._fields, ((n,), (n,), (n, n_rules)), strict=True):
            value = getattr(self, field)
            if isinstance(value, Tensor) and not _broadcasts(tuple(value.shape), shape):
                raise ValueError(
                    f"{method}.coefficients gave {field} of shape {tuple(value.shape)} for {n} "
                    f"seed(s): a per-seed weight has shape {shape} or is a float"
                )
        return self


def _broadcasts(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    """Whether a tensor of `shape` broadcasts to `to` without growing it (in plain Python:
    every training step asks).

    >>> _broadcasts((1, 3), (2, 3)), _broadcasts((5,), (2,)), _broadcasts((2, 1, 1), (1, 1))
    (True, False, False)
    """
    return len(shape) <= len(to) and all(
        s in (1, t) for s, t in zip(reversed(shape), reversed(to), strict=False)
    )


LossEstimate = Callable[[bool], tuple[Tensor, Tensor]]
"""`estimate(reference)`: per-seed (L_rule at alpha 1, L_task at alpha 0) over the training
set; with `reference=True` perturbation rules are measured as in `deepctrl.core.scale`."""


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
        return SeedState.from_state_dict(state, fresh.priors[0] if fresh.priors else None)

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
        lam = state["multipliers"]
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


RHO_FLOOR = 1e-3
"""With rho="auto", a rho measured on the fresh network (a rule judged on the output alone)
below this is taken for 1: the network already (nearly) keeps the rule at its initial
weights, so the ratio says nothing of how the losses compare once the rule is broken, and at
alpha 0 the task would weigh almost nothing. A rho measured on the reference response is
kept however small (its size follows the target's units)."""


def _safe_ratio(
    rule_loss: Tensor, task_loss: Tensor, last: Tensor | None = None, floor: float = 0.0
) -> Tensor:
    """L_rule / L_task per seed; 1.0 where either is zero, the ratio is not finite or below
    `floor`, with a warning at the start, or when re-measuring (`last`: the seeds' rho so
    far) once a seed falls back (not again every epoch while it stays there).

    >>> _safe_ratio(torch.tensor([2.0, 0.0]), torch.tensor([4.0, 1.0]), torch.tensor([3.0, 1.0]))
    tensor([0.5000, 1.0000], dtype=torch.float64)
    """
    ratio = rule_loss.double() / task_loss.double()
    tiny = torch.isfinite(ratio) & (rule_loss > 0) & (ratio < floor)
    bad = ~torch.isfinite(ratio) | (rule_loss <= 0) | (task_loss <= 0) | tiny
    new = bad if last is None else bad & (last.to(bad.device) != 1.0)
    if bool(new.any()):
        when, now = ("initial", "at the start") if last is None else ("re-measured", "now")
        what = (
            f"rule loss is under {floor:g} of the task loss (rho "
            f"{', '.join(f'{float(r):.2g}' for r in ratio[tiny])}) or a loss is zero"
            if bool(tiny.any())
            else "rule or task loss is zero"
        )
        warnings.warn(
            f"rho: the {when} {what} for some seeds; using rho = 1.0 "
            f"there (a rule that holds on every row {now}, or one that judges no row: a "
            "threshold that no perturbed value crosses, or a relative perturbation of a "
            "feature that is 0 everywhere). When "
            "the rule's loss is in other units than the task's, as a penalty in the target's "
            "units is, give rho yourself (deepctrl fit --rho): about the rule loss over the "
            "task loss once the rule is broken",
            RuntimeWarning,
            stacklevel=outside_stacklevel(),
        )
    return torch.where(bad, torch.ones_like(ratio), ratio)


def _floor(auto: bool, rule: Tensor, task: Tensor, estimate: LossEstimate) -> float:
    """:data:`RHO_FLOOR` when `rule`, measured for ``rho="auto"``, came from the fresh
    network (a rule judged on the output alone); 0 otherwise. A rule loss measured on the
    reference response is in the target's units, so its ratio to an MSE task loss shrinks
    with the target's scale (about 0.04 / s_y) without saying anything of the network: a
    small one is kept. Measured again on the fresh network only when the ratio is small."""
    if not auto or not bool(((rule.double() / task.double()) < RHO_FLOOR).any()):
        return 0.0
    fresh, _ = estimate(False)
    return RHO_FLOOR if torch.equal(fresh, rule) else 0.0


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
            state.add("rho", _safe_ratio(rule, task, floor=_floor(auto, rule, task, estimate)))
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
        return _checked_draws(state.priors, n) if state.priors else torch.zeros(0, n)

    def coefficients(self, alpha: Tensor, state: SeedState) -> Coefficients:
        rho = state["rho"].to(alpha)
        return Coefficients(rho * (1 - alpha), alpha, 0.0)

    def after_epoch(self, estimate: LossEstimate, state: SeedState) -> None:
        if self.rho_mode == "epoch":
            state["rho"] = _safe_ratio(*estimate(False), state["rho"])
