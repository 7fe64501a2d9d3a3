"""dc.Objective: the per-batch loss in a user's own loop, and the same loss as dc.fit."""

import copy
import logging
import math

import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.core.seeding import derive_seed
from deepctrl.engine.ensemble import FlatAdam
from helpers import small_net


def data(n=128, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=dtype)
    return X, X[:, :1] - 0.5 * X[:, 1:2]


def net(dtype=torch.float32):
    torch.manual_seed(0)
    return small_net(16, dtype)


RULE = dc.rules.Monotonic(0, "increasing")


def first_step_of_fit(model, rule, method, train, seed, monkeypatch):
    """dc.fit for one step; the gradient the engine computed, by parameter name."""
    grads = {}
    step = FlatAdam.step

    def spy(self):
        if not grads:
            grads.update({k: v.grad[0].clone() for k, v in self.stack.params.items()})
        step(self)

    monkeypatch.setattr(FlatAdam, "step", spy)
    n = train[1].shape[0]
    result = dc.fit(
        copy.deepcopy(model),
        rule,
        method,
        train=train,
        batch_size=n,
        max_epochs=1,
        shuffle=False,
        reinit=False,
        seeds=[seed],
    )
    return result, grads


@pytest.mark.parametrize(
    "method",
    [
        dc.methods.DeepCTRL(),
        dc.methods.DeepCTRL(rho="paper"),
        dc.methods.LagrangianDual(0.5),
        dc.methods.TaskAndRule(0.1),
    ],
    ids=["deepctrl-auto", "deepctrl-paper", "ldf", "task-and-rule"],
)
def test_objective_and_fit_give_the_same_first_step_in_float64(method, monkeypatch):
    model, (X, y) = net(torch.float64), data(dtype=torch.float64)
    result, grads = first_step_of_fit(model, RULE, method, (X, y), 5, monkeypatch)
    objective = dc.Objective(model, RULE, copy.deepcopy(method), seed=5).calibrate((X, y))
    out = objective(X, y)
    out.loss.backward()
    # the history accumulates the epoch's loss in float32
    assert result.history[0]["train_loss"][0] == pytest.approx(float(out.loss.detach()), rel=1e-6)
    for name, p in model.named_parameters():
        assert torch.allclose(p.grad, grads[name], rtol=1e-10, atol=1e-15), name
    if isinstance(method, dc.methods.DeepCTRL):
        assert objective.rho == float(result.state["rho"][0])


def test_plain_loop_learns_and_reports_per_sample_satisfaction():
    X, y = data(512)
    model = net()
    objective = dc.Objective(model, RULE, dc.methods.DeepCTRL(rho=1.0), task_loss="mse")
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(30):
        for i in range(0, 512, 64):
            out = objective(X[i : i + 64], y[i : i + 64])
            out.loss.backward()
            opt.step()
            opt.zero_grad()
            objective.after_step(out)
            losses.append(float(out.task))
    assert sum(losses[-8:]) < 0.2 * sum(losses[:8])
    out = objective(X[:64], y[:64], alpha=1.0)
    assert out.alpha == 1.0 and out.satisfied.dtype == torch.bool and out.satisfied.shape == (64,)
    assert out.verification_ratio == pytest.approx(float(out.satisfied.float().mean()))
    assert out.y_hat.shape == (64, 1)


def test_alpha_draws_follow_the_methods_prior_and_seed():
    X, y = data(16)
    a = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seed=3)
    b = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seed=3)
    draws = [a(X, y).alpha for _ in range(5)]
    assert draws == [b(X, y).alpha for _ in range(5)]
    prior = dc.priors.Beta(0.1, 0.1).spawn(derive_seed(3, "alpha"))
    assert draws == pytest.approx([float(prior.sample(1)) for _ in range(5)])
    assert dc.Objective(net(), None, dc.methods.TaskOnly())(X, y).alpha == 0.0
    assert dc.Objective(net(), RULE, dc.methods.RuleOnly())(X, y).alpha == 1.0


def test_rho_from_the_first_batch_is_announced_and_equals_calibrating_on_it(caplog):
    X, y = data(64)
    lazy = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho="paper"))
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        lazy(X, y)
    assert "first batch" in caplog.text
    eager = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho="paper")).calibrate((X, y))
    assert lazy.rho == eager.rho and lazy.rho > 0


def test_calibrate_on_a_dataloader_matches_tensors():
    X, y = data(300)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=50)
    for rho in ("auto", "paper"):
        a = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=rho)).calibrate((X, y), 50)
        b = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=rho)).calibrate(loader)
        assert a.rho == pytest.approx(b.rho, rel=1e-5)


def test_lagrangian_dual_hook_moves_the_multiplier_only_when_called():
    X, y = data(64)
    objective = dc.Objective(net(), RULE, dc.methods.LagrangianDual(dual_lr=2.0))
    out = objective(X, y)
    assert float(objective.state["multipliers"][0, 0]) == 0.0
    objective.after_step(out)
    expected = max(0.0, 2.0 * float(out.terms.violations[0, 0].detach()))
    assert float(objective.state["multipliers"][0, 0]) == pytest.approx(expected)


def test_rho_per_epoch_needs_the_training_data():
    X, y = data(64)
    objective = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho="epoch")).calibrate((X, y))
    with pytest.raises(ValueError, match="pass the training data"):
        objective.after_epoch()
    before = objective.rho
    model = objective.model
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.5)
    objective.after_epoch((X, y))
    assert objective.rho != before


def test_state_dict_resumes_the_same_draws():
    X, y = data(32)
    a = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seed=1)
    a(X, y)
    state = copy.deepcopy(a.state_dict())
    nxt = a(X, y)
    b = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seed=99)
    b.load_state_dict(state)
    again = b(X, y)
    assert again.alpha == nxt.alpha
    assert float(again.loss.detach()) == pytest.approx(float(nxt.loss.detach()), rel=1e-6)


def test_autocast_computes_the_losses_in_float32():
    X, y = data(64)
    model = net()
    objective = dc.Objective(model, RULE, dc.methods.DeepCTRL(rho=1.0), seed=2)
    reference = float(copy.deepcopy(objective)(X, y).loss.detach())
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = objective(X, y)
    assert out.loss.dtype == torch.float32 and out.y_hat.dtype == torch.float32
    out.loss.backward()
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in model.parameters())
    assert float(out.loss.detach()) == pytest.approx(reference, rel=0.05)


def test_dict_inputs_and_a_model_of_your_own_that_takes_alpha():
    class TwoInputs(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.lin = torch.nn.Embedding(5, 2), torch.nn.Linear(3, 2)
            self.out = torch.nn.Linear(4, 1)

        def forward(self, x, alpha):
            h = torch.cat([self.emb(x["ids"]), self.lin(x["num"])], dim=1)
            return self.out(h) * (1 + alpha)

    g = torch.Generator().manual_seed(0)
    x = {"ids": torch.randint(0, 5, (16,), generator=g), "num": torch.randn(16, 3, generator=g)}
    rule = dc.rules.Monotonic(0, "increasing", input="num")
    out = dc.Objective(TwoInputs(), rule, dc.methods.DeepCTRL(rho=1.0))(x, torch.randn(16, 1))
    assert out.loss.requires_grad and out.satisfied.shape == (16,)
    with pytest.raises(ValueError, match="must name the one it perturbs, e.g. input='num'"):
        dc.Objective(TwoInputs(), RULE, dc.methods.DeepCTRL(rho=1.0))(x, torch.randn(16, 1))


def test_clear_errors():
    X, y = data(16)
    with pytest.raises(ValueError, match="needs a rule"):
        dc.Objective(net(), None)
    with pytest.raises(ValueError, match=r"target has 2 values per row .* outputs 1"):
        dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), task_loss="mse")(
            X, torch.zeros(16, 2)
        )
    with pytest.raises(ValueError, match="sigmoid"):
        dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), task_loss="bce")(
            X * 100, (y > 0).float()
        )


def test_no_rule_nan_ratio():
    X, y = data(8)
    out = dc.Objective(net(), None, dc.methods.TaskOnly())(X, y)
    assert out.satisfied is None and math.isnan(out.verification_ratio)
    assert math.isnan(float(out.rule)) and out.rule.dtype == out.task.dtype


def test_a_rule_loss_not_computed_reads_nan_not_zero():
    X, y = data(8)
    broken = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] + 10.0)  # y_hat <= -10: broken
    model = net()
    task_only = dc.Objective(model, broken, dc.methods.TaskOnly())(X, y)
    assert math.isnan(float(task_only.rule)) and not task_only.rule.requires_grad
    assert float(task_only.terms.rule.sum()) == 0.0  # the method's terms are unchanged
    measured = dc.Objective(model, broken, dc.methods.TaskAndRule(0.0))(X, y)
    assert float(measured.rule) > 5.0 and measured.verification_ratio == 0.0
    assert torch.equal(task_only.loss.detach(), measured.loss.detach())


def test_batch_weights_give_the_weighted_sum_over_the_batch_size():
    x = torch.tensor([[1.0, 2.0, 0.0], [0.5, -1.0, 1.0], [-2.0, 0.3, 0.5], [0.0, 1.5, -1.0]])
    y = torch.tensor([[1.0], [0.0], [-1.0], [2.0]])
    w = torch.tensor([2.0, 0.0, 0.5, 1.0], dtype=torch.float64)  # cast to the losses' dtype
    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0] + 0.1)
    model = net()
    objective = dc.Objective(model, rule, dc.methods.DeepCTRL(rho=2.0), task_loss="mse")
    out = objective(x, y, alpha=0.25, weight=w)
    with torch.no_grad():
        y_hat = model(x, 0.25)[:, 0].tolist()
    task = sum(
        wi * (yh - yi) ** 2 for wi, yh, yi in zip(w.tolist(), y_hat, y[:, 0].tolist(), strict=True)
    )
    gap = [max(0.0, yh - xi + 0.1) for yh, xi in zip(y_hat, x[:, 0].tolist(), strict=True)]
    rule_loss = sum(wi * g for wi, g in zip(w.tolist(), gap, strict=True))
    assert rule_loss > 0
    assert float(out.task) == pytest.approx(task / 4, rel=1e-6)
    assert float(out.rule) == pytest.approx(rule_loss / 4, rel=1e-6)
    assert float(out.loss.detach()) == pytest.approx(
        0.25 * rule_loss / 4 + 2.0 * 0.75 * task / 4, rel=1e-6
    )
    dual = dc.Objective(model, rule, dc.methods.LagrangianDual(), task_loss="mse")
    signed = sum(
        wi * (yh - xi + 0.1) for wi, yh, xi in zip(w.tolist(), y_hat, x[:, 0].tolist(), strict=True)
    )
    violations = dual(x, y, alpha=0.25, weight=w).terms.violations.detach()
    assert float(violations[0, 0]) == pytest.approx(signed / 4, rel=1e-6)
    zero = objective(x, y, alpha=0.25, weight=torch.zeros(4))  # allowed in a batch
    assert float(zero.loss.detach()) == 0.0
    with pytest.raises(ValueError, match="the batch weights: 3 weights for 4 rows"):
        objective(x, y, weight=w[:3])
    with pytest.raises(ValueError, match="the batch weights must be >= 0"):
        objective(x, y, weight=-w)


def test_a_state_of_other_rules_is_refused():
    X, y = data(16)
    two = dc.rules.AllOf([RULE, dc.rules.Monotonic(1, "decreasing")])
    saved = dc.Objective(net(), two, dc.methods.LagrangianDual())
    saved(X, y)
    one = dc.Objective(net(), RULE, dc.methods.LagrangianDual())
    with pytest.raises(
        ValueError,
        match="^this state is of 1 seed\\(s\\) and 2 rule leaves; this objective trains 1 seed "
        "under 1 rule leaves$",
    ):
        one.load_state_dict(saved.state_dict())


def test_a_state_of_another_method_is_refused():
    X, y = data(16)
    deep = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0))
    deep(X, y)
    dual = dc.Objective(net(), RULE, dc.methods.LagrangianDual(dual_lr=0.5))
    with pytest.raises(
        ValueError,
        match="^this state is of a DeepCTRL method; this objective trains LagrangianDual$",
    ):
        dual.load_state_dict(deep.state_dict())
    other_rate = dc.Objective(net(), RULE, dc.methods.LagrangianDual(dual_lr=0.1))
    other_rate(X, y)
    dual.load_state_dict(other_rate.state_dict())  # the same method with another dual rate


def test_calibrating_again_keeps_the_multipliers_and_the_alpha_draws():
    X, y = data(64)
    always = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] + 5.0)  # violated by every row
    dual = dc.Objective(net(), always, dc.methods.LagrangianDual(dual_lr=0.1))
    for _ in range(3):
        dual.after_step(dual(X, y))
    kept = dual.state["multipliers"].clone()
    assert float(kept[0, 0]) > 1.0
    dual.calibrate((X, y))
    assert torch.equal(dual.state["multipliers"], kept)

    deep, twin = (
        dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho="paper"), seed=3).calibrate((X, y))
        for _ in range(2)
    )
    deep(X, y)
    twin(X, y)
    with torch.no_grad():
        for p in deep.model.parameters():
            p.mul_(2.0)
    deep.calibrate((X, y))  # rho measured again at the new weights, the draws go on
    assert deep.rho != twin.rho
    assert deep(X, y).alpha == twin(X, y).alpha


def test_a_deepctrl_model_gets_alpha_as_a_tensor_so_compile_does_not_specialise_on_it():
    from torch._dynamo.testing import CompileCounter

    X, y = data(32)
    counter = CompileCounter()
    compiled = torch.compile(net(), backend=counter)
    objective = dc.Objective(compiled, RULE, dc.methods.DeepCTRL(rho=1.0))
    alphas = {objective(X, y).alpha for _ in range(10)}
    assert len(alphas) == 10 and counter.frame_count <= 2


def test_inputs_are_cast_to_the_models_dtype():
    X, y = data(32)
    wide = dc.Objective(net(torch.float64), RULE, dc.methods.DeepCTRL(rho=1.0), seed=4)
    same = copy.deepcopy(wide)
    out = wide(X, y)  # float32 rows into a float64 model
    assert out.y_hat.dtype == torch.float64
    assert float(out.loss.detach()) == float(same(X.double(), y.double()).loss.detach())


def test_a_model_with_several_outputs_is_one_clear_error():
    class TwoHeads(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(3, 2)

        def forward(self, x):
            h = self.lin(x)
            return h[:, :1], h[:, 1:]

    X, y = data(8)
    with pytest.raises(ValueError, match="returned a tuple.*torch.cat"):
        dc.Objective(TwoHeads(), RULE, dc.methods.DeepCTRL(rho=1.0))(X, y)


class ScalarLoss(dc.rules.Rule):
    def loss(self, ctx):
        return ctx.y_hat.sum()

    def satisfied(self, ctx):
        return torch.ones(ctx.y_hat.shape[0], dtype=torch.bool)


class DropsRows(dc.rules.Monotonic):
    def perturb(self, x, generator=None):
        return super().perturb(x, generator)[:-1]


class WholeColumn(dc.rules.Perturbation):  # no config(): it only matters for saving
    def delta(self, values, generator=None):
        return torch.ones(values.shape[0], 1)


@pytest.mark.parametrize(
    ("rule", "task_loss", "message"),
    [
        (ScalarLoss(), "mae", r"ScalarLoss.loss gave \(\) for 16 samples"),
        (RULE, lambda y_hat, y: (y_hat - y).abs().mean(), r"the task loss gave \(\) for 16"),
        (DropsRows(0, "increasing"), "mae", r"DropsRows.perturb returned \(15, 3\) for .*16, 3"),
        (
            dc.rules.Monotonic(0, "increasing", perturbation=WholeColumn()),
            "mae",
            r"WholeColumn.delta returned \(16, 1\) for values of \(16,\)",
        ),
    ],
)
def test_rules_and_losses_of_the_wrong_shape_are_one_clear_error(rule, task_loss, message):
    X, y = data(16)
    with pytest.raises(ValueError, match=message):
        dc.Objective(net(), rule, dc.methods.DeepCTRL(rho=1.0), task_loss=task_loss)(X, y)


def test_a_perturbation_of_your_own_needs_config_only_to_be_saved():
    rule = dc.rules.Monotonic(0, "increasing", perturbation=WholeColumn())
    with pytest.raises(ValueError, match="WholeColumn cannot be described in a model file"):
        rule.config()


def test_a_function_given_as_a_rule_is_refused_with_a_hint():
    X, y = data(16)
    fn = lambda x, y_hat: y_hat[:, 0]  # noqa: E731
    hint = r"got function: wrap a function of \(x, y_hat\) in dc.rules.Penalty"
    with pytest.raises(ValueError, match=hint):
        dc.Objective(net(), fn)
    with pytest.raises(ValueError, match="every member of AllOf must be a deepctrl rule"):
        dc.rules.AllOf([RULE, fn])
    with pytest.raises(ValueError, match=hint):
        dc.fit(net(), fn, train=(X, y), max_epochs=1)
    with pytest.raises(ValueError, match=hint):
        dc.sweep(net(), fn, X, y)


def test_a_float64_model_weighs_the_task_by_rho_exactly():
    X, y = data(8, dtype=torch.float64)
    objective = dc.Objective(net(torch.float64), RULE, dc.methods.DeepCTRL(rho=0.1))
    out = objective(X, y, alpha=0.3)
    # 0.1 held in float32 would be 0.10000000149: a relative error of 1.5e-8 on the task term
    expected = 0.3 * out.rule.double() + 0.1 * 0.7 * out.task.double()
    assert float(out.loss.detach()) == pytest.approx(float(expected), rel=1e-14)
    assert objective.state_dict()["method"]["tensors"]["rho"].dtype == torch.float64


def test_a_loaded_state_starts_the_perturbation_streams_it_does_not_hold_afresh():
    X, y = data(32)
    fresh = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seed=0)
    saved = fresh.state_dict()  # before any batch: no stream drawn yet
    used = dc.Objective(fresh.model, RULE, dc.methods.DeepCTRL(rho=1.0), seed=0)
    for _ in range(3):
        used(X, y)
    used.load_state_dict(saved)
    a, b = fresh(X, y), used(X, y)
    assert a.alpha == b.alpha
    assert torch.equal(a.rule, b.rule) and torch.equal(a.loss, b.loss)


def _resumable_run(epochs_before, epochs_after, X, y, save_rng=True, calibrate_again=False):
    """Train a dropout DeepCTRL with an Objective; stop after `epochs_before`, rebuild
    everything from the checkpoint (as a new process would) and train `epochs_after` more."""

    def build():
        torch.manual_seed(42)
        dropped = torch.nn.Sequential(
            dc.mlp(3, 16), torch.nn.ReLU(), torch.nn.Dropout(0.3), dc.mlp(16, 8)
        )
        model = dc.DeepCTRL(dropped, dc.mlp(3, 16, 8), dc.mlp(16, 16, 1))
        objective = dc.Objective(model, RULE, seed=0)
        return model, objective, torch.optim.Adam(model.parameters(), lr=1e-2)

    def train(model, objective, optimizer, epochs):
        for _ in range(epochs):
            for i in range(0, len(X), 32):
                out = objective(X[i : i + 32], y[i : i + 32])
                optimizer.zero_grad()
                out.loss.backward()
                optimizer.step()

    model, objective, optimizer = build()
    objective.calibrate((X, y))
    train(model, objective, optimizer, epochs_before)
    saved = copy.deepcopy(
        (model.state_dict(), optimizer.state_dict(), objective.state_dict(), torch.get_rng_state())
    )
    torch.manual_seed(123)  # a new process's own generator
    model, objective, optimizer = build()
    model.load_state_dict(saved[0])
    optimizer.load_state_dict(saved[1])
    objective.load_state_dict(saved[2])
    if save_rng:
        torch.set_rng_state(saved[3])
    if calibrate_again:
        objective.calibrate((X, y))
    train(model, objective, optimizer, epochs_after)
    return model


def test_a_run_with_dropout_resumes_exactly_with_pytorchs_generator_saved():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(96, 3, generator=g)
    y = -X[:, :1] + 0.1 * torch.randn(96, 1, generator=g)
    whole = _resumable_run(3, 0, X, y)
    resumed = _resumable_run(1, 2, X, y)
    assert all(
        torch.equal(a, b)
        for a, b in zip(*(m.state_dict().values() for m in (whole, resumed)), strict=True)
    )
    without = _resumable_run(1, 2, X, y, save_rng=False)  # dropout draws other masks
    assert not all(
        torch.equal(a, b)
        for a, b in zip(*(m.state_dict().values() for m in (whole, without)), strict=True)
    )
    with pytest.warns(RuntimeWarning, match="calibrate after load_state_dict measured rho again"):
        _resumable_run(1, 2, X, y, calibrate_again=True)


def test_the_custom_loops_guide_saves_and_resumes_as_shown():
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "custom-loops.md").read_text()
    section = page.split("## Saving and resuming", 1)[1].split("\n## ", 1)[0]
    block = section.split("```python\n", 1)[1].split("```", 1)[0]
    namespace: dict = {}
    exec(compile(block, "custom-loops.md", "exec"), namespace)
    assert namespace["objective"].rho is not None and "torch_rng" in namespace["checkpoint"]


def test_a_float64_model_measures_rho_and_the_data_scales_in_float64():
    from deepctrl.core.scale import RunningScales, column_std

    X, y = data(64, dtype=torch.float64)
    model = net(torch.float64)
    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0])
    objective = dc.Objective(model, rule, dc.methods.DeepCTRL(rho="paper"), task_loss="mse")
    objective.calibrate((X, y))
    rho = objective.state_dict()["method"]["tensors"]["rho"]
    with torch.no_grad():
        model.eval()
        rule_loss = torch.relu(model(X, alpha=1.0)[:, 0] - X[:, 0]).mean()
        task_loss = ((model(X, alpha=0.0) - y) ** 2).mean()
    # rounded to float32 on the way, rho was off by about 1e-8 of itself
    assert float(rho[0]) == pytest.approx(float(rule_loss / task_loss), rel=1e-13, abs=0)
    stds = X.std(dim=0)
    assert column_std(X).dtype == torch.float64
    assert torch.allclose(column_std(X), stds, rtol=1e-14, atol=0)
    running = RunningScales()
    running.add(X[:40], y[:40])
    running.add(X[40:], y[40:])
    x_scale, y_scale = running.result()
    assert x_scale.dtype == y_scale.dtype == torch.float64
    assert torch.allclose(x_scale, stds, rtol=1e-12, atol=0)


def test_rho_auto_of_timestamps_is_the_same_from_tensors_a_dataset_and_a_dataloader():
    """Seconds since 1970 over ten seconds: a mean 1e8 times the spread, whose std the sums
    of values and of their squares lose in float64."""
    g = torch.Generator().manual_seed(0)
    t = 1.7e9 + 10 * torch.rand(1000, 1, generator=g, dtype=torch.float64)
    X = torch.cat([t, torch.randn(1000, 2, generator=g, dtype=torch.float64)], 1)
    y = -(t - 1.7e9) + 0.1 * torch.randn(1000, 1, generator=g, dtype=torch.float64)
    model = net(torch.float64)
    rule = dc.rules.Monotonic(0, "decreasing")
    rows = torch.utils.data.TensorDataset(X, y)
    rhos = [
        dc.Objective(model, rule, dc.methods.DeepCTRL()).calibrate(train).rho
        for train in ((X, y), rows, torch.utils.data.DataLoader(rows, batch_size=64))
    ]
    # a value near 1.7e9 is held to 2.4e-7 s (its float64 spacing), so any two ways of
    # summing agree to about 1e-8 of a spread of seconds; the sums of squares were off 3x
    assert rhos[1] == pytest.approx(rhos[0], rel=1e-7)
    assert rhos[2] == pytest.approx(rhos[0], rel=1e-7)


def test_wide_inputs_are_scaled_and_checked_in_blocks_of_a_few_megabytes():
    """A 3,000-wide table is read 699 rows at a time (16 MiB of float64), with the same
    stds and bad-row count as one pass over the whole of it."""
    from deepctrl.core.data import block_rows, count_bad_rows
    from deepctrl.core.scale import column_std

    X = torch.randn(1500, 3000, dtype=torch.float64)
    X[[3, 1400], [7, 2999]] = float("nan")
    assert block_rows(X) == 16 * 2**20 // (8 * 3000) == 699
    assert count_bad_rows(X) == 2
    clean = X.nan_to_num()
    assert torch.allclose(column_std(clean), clean.std(dim=0), rtol=1e-12, atol=0)


def test_a_float64_models_multipliers_are_float64_and_a_float32_models_stay_float32():
    class Cap(dc.rules.SignedRule):  # g = y_hat - 0.1 <= 0
        def violation(self, ctx):
            return (ctx.y_hat - 0.1).squeeze(-1)

    for dtype in (torch.float64, torch.float32):
        X, y = data(64, dtype=dtype)
        model = net(dtype)
        objective = dc.Objective(model, Cap(), dc.methods.LagrangianDual(dual_lr=0.1), seed=0)
        objective.after_step(objective(X, y))
        with torch.no_grad():
            by_hand = max(0.0, 0.1 * float((model(X, alpha=0.0) - 0.1).double().mean()))
        lam = objective.state["multipliers"]
        assert lam.dtype == dtype
        if dtype == torch.float64:
            assert float(lam) == pytest.approx(by_hand, rel=1e-15, abs=0)
        else:  # rounded to float32 as before
            assert float(lam) == pytest.approx(by_hand, rel=1e-6)


def test_boolean_inputs_are_read_as_the_model_s_floats_by_every_entry_point():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(64, 3, generator=g) > 0.5
    y = -X[:, :1].float()
    rule = dc.rules.Monotonic(0, "decreasing")
    model = net()
    as_bool = dc.Objective(model, rule, dc.methods.DeepCTRL(rho=1.0), seed=0)(X, y).loss
    as_float = dc.Objective(model, rule, dc.methods.DeepCTRL(rho=1.0), seed=0)(X.float(), y).loss
    assert torch.equal(as_bool, as_float)
    rows = torch.utils.data.TensorDataset(X, y)
    fits = [
        dc.fit(
            net(),
            rule,
            dc.methods.DeepCTRL(rho=1.0),
            train=train,
            max_epochs=2,
            shuffle=False,
            batch_size=16,
        )
        for train in ((X, y), rows)
    ]
    for a, b in zip(fits[0].model.parameters(), fits[1].model.parameters(), strict=True):
        assert torch.equal(a, b)


def test_a_row_with_a_nan_output_is_not_judged_as_in_the_sweep():
    X = torch.randn(200, 3, generator=torch.Generator().manual_seed(0))

    class HalfNaN(nn.Module):  # keeps the decreasing rule, NaN where x1 > 0
        def __init__(self) -> None:
            super().__init__()
            self.p = nn.Parameter(torch.zeros(1))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            out = -2.0 * x[:, :1] + self.p
            return torch.where(x[:, 1:2] > 0, torch.full_like(out, float("nan")), out)

    rule = dc.rules.Monotonic(0, "decreasing")
    method = dc.methods.DeepCTRL(rho=1.0)
    out = dc.Objective(HalfNaN(), rule, method, task_loss="mae", seed=0)(X, -X[:, :1], alpha=0.5)
    assert int(out.judged.sum()) == int((X[:, 1] <= 0).sum())
    assert out.verification_ratio == 1.0 == dc.verification_ratio(HalfNaN(), rule, X)
