"""`Objective`: the DeepCTRL loss of one batch, for any model in any training loop.

It draws alpha from the method's prior, runs the model once on the batch joined with its
perturbed copy, and returns the loss to call `backward()` on, with its parts. Your loop
keeps its optimizer, DataLoader, mixed precision, DDP wrapper or Lightning module.

Examples:
    >>> import torch, deepctrl as dc
    >>> model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    >>> objective = dc.Objective(model, dc.rules.Monotonic(0, "increasing"),
    ...                          dc.methods.DeepCTRL(rho=1.0))
    >>> opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    >>> x, y = torch.randn(32, 3), torch.randn(32, 1)
    >>> out = objective(x, y)
    >>> out.loss.backward(); opt.step(); opt.zero_grad(); objective.after_step(out)
    >>> out.satisfied.shape, 0.0 <= out.alpha <= 1.0
    (torch.Size([32]), True)
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from typing import Any

import torch
from torch import Tensor, nn

from deepctrl.core.batch_checks import checked_batch
from deepctrl.core.calls import accepts_alpha, one_tensor, unwrap, warn_if_alpha_unused
from deepctrl.core.checks import first_sentence, module, nonneg_int, restore_generator, saved_state
from deepctrl.core.data import check_materialized
from deepctrl.core.inputs import (
    REFUSALS,
    Inputs,
    apply,
    batch_len,
    cast_floats,
    device_of,
    refused_rows,
)
from deepctrl.core.log import info
from deepctrl.core.loss_estimate import loss_estimate, upcast
from deepctrl.core.losses import check_outputs, compute_terms
from deepctrl.core.method_checks import check_method, method_alphas, method_loss, method_state
from deepctrl.core.method_state import SeedState, saved_seed_state
from deepctrl.core.methods import DeepCTRLMethod, Method
from deepctrl.core.metrics import PerSample, per_sample
from deepctrl.core.model import DeepCTRL
from deepctrl.core.objective_output import ObjectiveOutput
from deepctrl.core.rules.base import (
    Rule,
    checked_rule,
    finite_rows,
    forward_all,
    judgement,
    perturb_all,
)
from deepctrl.core.seeding import derive_seed
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.core.world import World


class Objective:
    """The loss of `method` under `rule` for one model, one batch at a time.

    `objective(x, y)` returns an [ObjectiveOutput][deepctrl.core.objective_output.ObjectiveOutput];
    `objective(x, y, weight=w)` weighs the batch's rows: the task loss, rule loss and signed
    violations become sum(w_i l_i) / batch size, with `w` used as given (one finite weight of
    at least 0 per row; normalise it yourself, e.g. divide by the mean weight of the training
    set, so that the losses keep their scale). After each optimizer step call
    [after_step][deepctrl.core.objective.Objective.after_step] (the dual update of
    LagrangianDual; nothing for the others), after each epoch
    [after_epoch][deepctrl.core.objective.Objective.after_epoch] (rho="epoch" re-measures
    rho).

    rho (DeepCTRL's balance of the losses, see docs/rho.md): call
    [calibrate][deepctrl.core.objective.Objective.calibrate] with the training data before
    training to measure it as the paper does, over the training set at the initial weights;
    otherwise it is measured on the first batch. A float rho needs neither. `calibrate`
    measures rho unweighted.

    Args:
        model: The model to train: a [DeepCTRL][deepctrl.core.model.DeepCTRL] or any module
            (one whose `forward` takes no `alpha` is called without it).
        rule: What the model should respect; None only for methods without a rule.
        method: The training objective; None is
            [DeepCTRLMethod][deepctrl.methods.DeepCTRLMethod] with its defaults.
        task_loss: `"mae"`, `"mse"`, `"bce"`, `"cross_entropy"`, `"poisson"` (outputs
            are log-rates of counts >= 0), or a function of `(y_hat, y)` returning one
            loss per sample.
        seed: Fixes the alpha draws and perturbations; under DDP give every rank the same
            seed, so that all ranks draw the same alpha for a step.

    Raises:
        ValueError: When `method` uses a rule and `rule` is None, `task_loss` names no
            known loss, or `seed` is not an integer >= 0.
        TypeError: When `model` is not a `torch.nn.Module`.
    """

    def __init__(
        self,
        model: nn.Module,
        rule: Rule | None = None,
        method: Method | None = None,
        task_loss: str | PerSample = "mae",
        seed: int = 0,
    ) -> None:
        self.method = method if method is not None else DeepCTRLMethod()
        check_method(self.method, rule, "Objective")
        if rule is not None:
            checked_rule(rule)
        self.model, self.rule, self.task_loss = module(model, "model"), rule, task_loss
        self.loss_fn = per_sample(task_loss)
        self.seed = nonneg_int(seed, "seed")
        self._use_rule = rule is not None and self.method.uses_rule
        self._takes_alpha = accepts_alpha(model)
        warn_if_alpha_unused(model, self.method)
        self._alpha_as_tensor = isinstance(unwrap(model), DeepCTRL)
        self.state: SeedState | None = None
        """The method's state (rho, the alpha prior, multipliers) once rho is measured, else
        None."""
        self._checked = False
        self._provisional: SeedState | None = None  # evaluations' state before training
        self._generators: dict[str, torch.Generator] = {}
        self._resumed = False  # a state was loaded and no batch has run since

    def __repr__(self) -> str:
        """The method, rule, task loss and seed (and rho once measured); the model by its
        class: ``Objective(model=DeepCTRL, rule=..., method=..., task_loss='mae', seed=0)``."""
        loss = self.task_loss
        shown = f"{loss!r}" if isinstance(loss, str) else getattr(loss, "__name__", repr(loss))
        rho = self.rho
        return (
            f"Objective(model={type(unwrap(self.model)).__name__}, rule={self.rule!r}, "
            f"method={self.method!r}, task_loss={shown}, seed={self.seed}"
            + (f", rho={rho:.6g})" if rho is not None else ")")
        )

    @property
    def rho(self) -> float | None:
        """DeepCTRL's rho once known, else None."""
        return (
            float(self.state["rho"][0]) if self.state is not None and "rho" in self.state else None
        )

    def _forward(self, x: Inputs, alpha: float | Tensor) -> Tensor:
        """The model's outputs; until the first batch is checked, a model that cannot take
        the rows fails with one line naming them."""
        try:
            out = self.model(x, alpha=alpha) if self._takes_alpha else self.model(x)
        except REFUSALS as exc:
            if self._checked:
                raise
            raise refused_rows(x, exc, "given") from exc
        return one_tensor(out, "an Objective")

    def _generator(self, device: torch.device) -> torch.Generator:
        key = str(device)
        if key not in self._generators:
            # under DDP each rank perturbs its own rows: its own stream (rank 0 keeps the
            # stream of a single process)
            self._generators[key] = torch.Generator(device).manual_seed(
                derive_seed(self.seed, "perturb", World.current().rank)
            )
        return self._generators[key]

    def _dtype(self) -> torch.dtype:
        param = next(self.model.parameters(), None)
        return param.dtype if param is not None else torch.float32

    def _device(self) -> torch.device:
        param = next(self.model.parameters(), None)
        return param.device if param is not None else torch.device("cpu")

    def _estimator(self, data: Any, block_rows: int) -> Callable[[bool], tuple[Tensor, Tensor]]:
        """`estimate(reference)`: (L_rule at alpha 1, L_task at alpha 0) over `data`."""
        rule = self.rule if self._use_rule else None
        return loss_estimate(
            self.model,
            self._forward,
            rule,
            self.loss_fn,
            self.task_loss,
            self.seed,
            data,
            block_rows,
            self._device(),
            self._dtype(),
        )

    def _n_rules(self) -> int:
        return len(self.rule.leaves()) if self.rule is not None else 0

    def _setup(self, estimate: Callable[[bool], tuple[Tensor, Tensor]]) -> None:
        self.state = method_state(self.method, [self.seed], self._n_rules(), estimate)

    def calibrate(self, data: Any, block_rows: int = 4096) -> Objective:
        """Measure rho (DeepCTRL with rho "auto", "paper" or "epoch") over `data` at the
        model's current weights, in eval mode.

        Under DDP the sums are added over ranks. Sample weights are not taken: the means are
        unweighted. On an objective that has already trained (or loaded a state), only rho
        is measured again: the alpha prior's draws and the multipliers go on where they
        stood, so a resumed run that calibrates again is not reset.

        Args:
            data: The training data: `(X, y)` tensors, a Dataset or a DataLoader.
            block_rows: Rows per forward pass.

        Returns:
            The objective itself.
        """
        if self.state is None:
            self._setup(self._estimator(data, block_rows))
        elif "rho" in self.state:
            fresh = method_state(
                self.method, [self.seed], self._n_rules(), self._estimator(data, block_rows)
            )
            if self._resumed and not torch.equal(fresh["rho"], self.state["rho"]):
                warnings.warn(
                    f"calibrate after load_state_dict measured rho again at the loaded "
                    f"weights ({float(self.state['rho'][0]):.4g} -> {float(fresh['rho'][0]):.4g}); "
                    "to resume a run exactly, do not calibrate a loaded objective",
                    RuntimeWarning,
                    stacklevel=outside_stacklevel(),
                )
            self.state["rho"] = fresh["rho"]
        return self

    def __call__(
        self, x: Inputs, y: Tensor, alpha: float | None = None, weight: Any = None
    ) -> ObjectiveOutput:
        """The loss of the batch (x, y) at a drawn alpha.

        Args:
            x: The batch's inputs: a tensor, or a dict of named inputs.
            y: The batch's targets (a 1-D float tensor is read as one column).
            alpha: The rule strength to use, in [0, 1]; None draws one from the method's prior.
            weight: One weight per row, used as given: the rows' losses are weighted,
                sum(w_i l_i) / batch size. None weighs every row alike.

        Returns:
            The loss and its parts.

        Raises:
            ValueError: When the model's outputs and `y` differ in rows, `weight` is not
                one finite weight >= 0 per row, or the batch is on the meta device.
        """
        y, given_alpha, w = checked_batch(x, y, alpha, weight)
        x = cast_floats(x, self._dtype())
        if self.state is None:
            check_materialized(self.model)
            if torch.is_grad_enabled():
                self._setup(self._first_batch_estimator(x, y))
        if self.state is None and self._provisional is None:
            # an evaluation before training (a sanity check): rho of its batch, kept until
            # training (or calibrate) sets the state
            self._provisional = method_state(
                self.method, [self.seed], self._n_rules(), self._estimator((x, y), batch_len(x))
            )
        state = self.state if self.state is not None else self._provisional
        assert state is not None
        device = device_of(x)
        self._resumed = False
        # a call without gradients (a validation step, a sanity check) draws from no stream
        # training draws from, so that validating, or how often, leaves training as it is
        evaluating = not torch.is_grad_enabled()
        # the float is read on the host, before the move: no wait for the device
        if given_alpha is None:
            # an evaluation takes the alpha training would draw next, from a copy
            source = copy.deepcopy(state) if evaluating else state
            drawn = method_alphas(self.method, 1, source)[:, 0]
            a, alphas = float(drawn[0]), drawn.to(device)
        else:  # a float64 model trains at the alpha given, not its float32 rounding
            wide = torch.promote_types(self._dtype(), torch.float32)
            a, alphas = given_alpha, torch.tensor([given_alpha], dtype=wide, device=device)
        # a DeepCTRL model takes alpha as a tensor, so torch.compile does not specialise on it
        given: float | Tensor = alphas[0] if self._alpha_as_tensor else a
        rule = self.rule if self._use_rule else None
        # so does a call before training (its perturbations: the same stream every call)
        gen = (
            self._generator(device)
            if self.state is not None and not evaluating
            else torch.Generator(device).manual_seed(derive_seed(self.seed, "eval"))
        )
        perturbed = perturb_all(rule, x, gen) if rule is not None else []
        first = not self._checked
        y_hat, y_p = forward_all(lambda z: upcast(self._forward(z, given)), x, perturbed)
        self._check(y_hat, y)
        one = lambda t: t[None]  # noqa: E731
        terms, ctx = compute_terms(
            rule,
            self.loss_fn,
            apply(one, x),
            y[None],
            y_hat[None],
            [None if p is None else apply(one, p) for p in perturbed],
            [None if t is None else t[None] for t in y_p],
            alphas,
            batch_len(x),
            self.method.needs_violations,
            weight=None if w is None else w.to(y_hat.dtype)[None],
            check_grad=first,
        )
        loss = method_loss(self.method, terms, state)[0]
        satisfied = judged = None
        if rule is not None and ctx is not None:
            satisfied, judged = (t.detach() for t in judgement(rule, ctx))
            # a NaN or infinite output breaks no rule: not judged, as in dc.sweep
            judged = (
                judged
                & finite_rows(
                    y_hat.detach()[None], [None if t is None else t.detach()[None] for t in y_p]
                )[0]
            )
        task = terms.task[0].detach()
        # not measured without a rule: NaN, not a rule kept perfectly
        rule_loss = terms.rule[0].detach() if rule is not None else torch.full_like(task, math.nan)
        return ObjectiveOutput(loss, task, rule_loss, a, y_hat, satisfied, judged, terms)

    def _first_batch_estimator(
        self, x: Inputs, y: Tensor
    ) -> Callable[[bool], tuple[Tensor, Tensor]]:
        estimate = self._estimator((x, y), batch_len(x))

        def noisy(reference: bool) -> tuple[Tensor, Tensor]:
            out = estimate(reference)
            info(
                "rho measured on the first batch; call objective.calibrate(train_data) "
                "before training to measure it on the whole training set (the paper's)"
            )
            return out

        return noisy

    def _check(self, y_hat: Tensor, y: Tensor) -> None:
        if y_hat.shape[0] != y.shape[0]:
            raise ValueError(f"the batch has {y_hat.shape[0]} outputs but {y.shape[0]} targets")
        if not self._checked:
            check_outputs(y_hat.detach(), y, self.task_loss)
            # the rule's gradient is checked on the first call that has gradients
            self._checked = torch.is_grad_enabled()

    def after_step(self, out: ObjectiveOutput) -> None:
        """Call after the optimizer step: updates the method's state (LagrangianDual's
        multipliers, from the batch's violations averaged over DDP ranks).

        Args:
            out: What this objective returned for the batch.
        """
        terms = out.terms.detached()
        world = World.current()
        if self.method.needs_violations and world.size > 1:
            v = world.all_reduce_sum(terms.violations)
            terms = terms._replace(violations=v / world.size)
        if self.state is not None:
            self.method.after_step(terms, self.state)

    def after_epoch(self, data: Any = None, block_rows: int = 4096) -> None:
        """Call after each epoch; DeepCTRL with rho="epoch" re-measures rho over `data` at the
        current weights.

        Args:
            data: The training data, as for
                [calibrate][deepctrl.core.objective.Objective.calibrate]; needed with
                rho="epoch" only.
            block_rows: Rows per forward pass.

        Raises:
            ValueError: When rho="epoch" and `data` is None.
        """

        def estimate(reference: bool) -> tuple[Tensor, Tensor]:
            if data is None:
                raise ValueError(
                    "rho='epoch' re-measures rho after every epoch: pass the "
                    "training data, objective.after_epoch(train_data)"
                )
            return self._estimator(data, block_rows)(reference)

        if self.state is not None:
            self.method.after_epoch(estimate, self.state)

    def state_dict(self) -> dict[str, Any]:
        """The method's state (rho, prior generator, multipliers) and the perturbation
        generators; with the model's and optimizer's state dicts it resumes a run exactly
        (and with PyTorch's generator, `torch.get_rng_state()`, when the model draws random
        numbers of its own: dropout draws from it, not from the objective).

        Returns:
            A dict for `torch.save`, read back by
                [load_state_dict][deepctrl.core.objective.Objective.load_state_dict].
        """
        return {
            "method_kind": self._method_kind(),
            "method": None if self.state is None else self.state.state_dict(),
            "generators": {k: g.get_state() for k, g in self._generators.items()},
        }

    def _method_kind(self) -> str:
        """The method's name without its settings (``LagrangianDual``, not
        ``LagrangianDual(1)``): a state resumes under other settings of the same method."""
        return self.method.name.split("(")[0]

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what [state_dict][deepctrl.core.objective.Objective.state_dict] saved.

        Args:
            state: A state dict of an objective with the same method.

        Raises:
            ValueError: When the state is of another method, or of another number of seeds
                or rule leaves, or is not a state dict of an objective.
        """
        state = saved_state(state, ("method", "generators"), "Objective.state_dict()")
        kind = self._method_kind()
        saved_kind = state.get("method_kind", kind)  # states saved before it was kept
        if saved_kind != kind:
            raise ValueError(
                f"this state is of a {saved_kind} method; this objective trains {kind}"
            )
        saved = None if state["method"] is None else saved_seed_state(state["method"])
        streams = state["generators"]
        if not isinstance(streams, dict):
            raise ValueError(
                "state['generators'] is not what Objective.state_dict() saves: a dict of "
                f"generator states by device, got {type(streams).__name__}"
            )
        if saved is not None and (saved["n_seeds"], saved["n_rules"]) != (1, self._n_rules()):
            raise ValueError(
                f"this state is of {saved['n_seeds']} seed(s) and {saved['n_rules']} rule "
                f"leaves; this objective trains 1 seed under {self._n_rules()} rule leaves"
            )
        self.state = None if saved is None else self.method.load_state(saved)
        self._generators = {}  # streams the state does not hold start afresh
        self._resumed = True
        for key, value in streams.items():
            self._restore_stream(str(key), value)

    def _restore_stream(self, key: str, value: Any) -> None:
        """The perturbation stream of device `key` set to a saved state; a device this
        machine lacks (a GPU run resumed on a CPU) is left out with a warning."""
        try:
            device = torch.device(key)
        except RuntimeError as exc:
            raise ValueError(
                f"state['generators'] has {key!r}, which is not a device name: it is not "
                "what Objective.state_dict() saves"
            ) from exc
        try:
            generator = self._generator(device)
        except RuntimeError as exc:
            warnings.warn(
                f"the state's perturbation stream for device {key!r} is not restored "
                f"({first_sentence(exc)}); rows on other devices draw a fresh stream",
                stacklevel=outside_stacklevel(),
            )
            return
        restore_generator(generator, value, f"state['generators'][{key!r}]")
