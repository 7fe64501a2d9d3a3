import re
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.core.method_stack import MethodStack
from deepctrl.core.method_terms import Terms
from deepctrl.core.rules import Monotonic, Penalty, Perturbation
from helpers import loss_estimate

X = torch.tensor([[1.0], [2.0], [3.0]])


def fixed_model() -> dc.DeepCTRL:
    """y = x at alpha 0 and y = 2x at alpha 1."""
    data, rule, decision = (
        nn.Linear(1, 1, bias=False),
        nn.Linear(1, 1, bias=False),
        nn.Linear(2, 1, bias=False),
    )
    with torch.no_grad():
        data.weight.fill_(1.0)
        rule.weight.fill_(2.0)
        decision.weight.fill_(1.0)
    return dc.DeepCTRL(data, rule, decision)


def rho_of(rule, y, rho):
    result = dc.fit(
        fixed_model(), rule, dc.methods.DeepCTRL(rho=rho), train=(X, y), max_epochs=0, reinit=False
    )
    return result.state["rho"]


def test_paper_rho_is_the_initial_loss_ratio():
    # L_task at alpha 0 = mean|x - 1| = 1; L_rule at alpha 1 = mean relu(2x - x) = 2.
    rule = Penalty(lambda x, y: y[:, 0] - x[:, 0])
    assert rho_of(rule, torch.ones(3, 1), "paper").tolist() == [2.0]
    assert rho_of(rule, torch.ones(3, 1), "auto").tolist() == [2.0]
    assert rho_of(rule, torch.ones(3, 1), 0.25).tolist() == [0.25]


def test_rho_falls_back_to_one_when_a_loss_is_zero():
    rule = Penalty(lambda x, y: y[:, 0] - x[:, 0])
    with pytest.warns(RuntimeWarning, match="rho"):
        assert rho_of(rule, X.clone(), "paper").tolist() == [1.0]  # task loss 0
    never = Penalty(lambda x, y: -torch.ones_like(x[:, 0]))
    with pytest.warns(RuntimeWarning, match="rho"):
        assert rho_of(never, torch.ones(3, 1), "paper").tolist() == [1.0]  # rule loss 0


def test_auto_rho_falls_back_to_one_when_the_rule_barely_weighs():
    # a fresh network that nearly keeps a one-sided bound: the paper's ratio would leave
    # the task almost no weight at alpha 0
    tiny = loss_estimate(2, rule=2e-6, task=1.0)
    with pytest.warns(RuntimeWarning, match=r"rule loss is under 0.001 of the task loss \(rho"):
        state = dc.methods.DeepCTRL(rho="auto").init_state([0, 1], 1, tiny)
    assert state["rho"].tolist() == [1.0, 1.0]
    paper = dc.methods.DeepCTRL(rho="paper").init_state([0, 1], 1, tiny)
    assert paper["rho"].tolist() == pytest.approx([2e-6, 2e-6])  # the paper's formula, as is
    fine = dc.methods.DeepCTRL(rho="auto").init_state([0], 1, loss_estimate(1, 0.02, 1.0))
    assert fine["rho"].tolist() == pytest.approx([0.02])


class Shift(Perturbation):
    def delta(self, values, generator=None):
        return torch.full_like(values, 0.3)

    def config(self):
        return {"kind": "shift"}


def test_auto_rho_measures_perturbation_rules_on_the_data_slope():
    # reference rule loss = 0.3 / std(x) * std(y) = 0.3 * sqrt(3); L_task,0 = mean|x - y| = 2/3.
    rule = Monotonic(0, "increasing", perturbation=Shift())
    y = torch.tensor([[0.0], [3.0], [3.0]])
    assert rho_of(rule, y, "auto").item() == pytest.approx(0.3 * 3**0.5 / (2 / 3), rel=1e-5)
    # the paper's ratio at the fixed model: outputs rise by 2 * 0.3 > 0, so no violation.
    with pytest.warns(RuntimeWarning):
        assert rho_of(rule, y, "paper").tolist() == [1.0]


def test_a_small_auto_rho_of_a_perturbation_rule_is_kept():
    """Measured on the reference response, the rule loss is in the target's units and the
    MSE task loss in their square: a target in large units gives a small rho, which says
    nothing of the fresh network, so it is not taken for 1."""
    rule = Monotonic(0, "increasing", perturbation=Shift())
    y = 100 * torch.tensor([[0.0], [3.0], [3.0]])  # reference rule loss 0.3 sqrt(3) 100
    task = ((X - y) ** 2).mean().item()  # (1 + 298^2 + 297^2) / 3 at alpha 0
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = dc.fit(
            fixed_model(),
            rule,
            dc.methods.DeepCTRL(rho="auto"),
            train=(X, y),
            task_loss="mse",
            max_epochs=0,
            reinit=False,
        )
    expected = 0.3 * 3**0.5 * 100 / task
    assert expected < 1e-3  # below the floor a fresh network's measurement has
    assert result.state["rho"].item() == pytest.approx(expected, rel=1e-5)


def test_auto_rho_counts_only_the_pairs_a_threshold_rule_judges():
    # only x = 2 crosses 2.1 when raised by 0.3: a third of the monotonic rule's reference.
    rule = dc.rules.Threshold(0, 2.1, perturbation=Shift())
    y = torch.tensor([[0.0], [3.0], [3.0]])
    assert rho_of(rule, y, "auto").item() == pytest.approx(0.3 * 3**0.5 / 3 / (2 / 3), rel=1e-5)


@pytest.mark.parametrize(("offset", "expected"), [(1.5, 0.25), (5.0, 0.0)])
def test_lagrangian_multiplier_after_one_batch(offset, expected):
    # at alpha 0 the model outputs x, so g = x - offset; lam = max(0, 0 + 0.5 * mean(g)).
    rule = Penalty(lambda x, y: y[:, 0] - offset)
    result = dc.fit(
        fixed_model(),
        rule,
        dc.methods.LagrangianDual(dual_lr=0.5),
        train=(X, torch.ones(3, 1)),
        batch_size=3,
        max_epochs=1,
        reinit=False,
    )
    assert result.state["multipliers"].tolist() == [[pytest.approx(expected)]]


def test_objectives_by_hand():
    t = Terms(
        task=torch.tensor([2.0]),
        rule=torch.tensor([4.0]),
        violations=torch.tensor([[1.0, -3.0]]),
        alpha=torch.tensor([0.25]),
    )
    deep = dc.methods.DeepCTRL(rho=0.5)
    state = deep.init_state([0], 2, loss_estimate(1))
    assert deep.objective(t, state).item() == pytest.approx(0.25 * 4 + 0.5 * 0.75 * 2)
    for method, value in (
        (dc.methods.TaskAndRule(0.1), 2.4),
        (dc.methods.RuleOnly(), 4.0),
        (dc.methods.TaskOnly(), 2.0),
    ):
        assert method.objective(
            t, method.init_state([0], 2, loss_estimate(1))
        ).item() == pytest.approx(value)
    ldf = dc.methods.LagrangianDual(dual_lr=2.0)
    state = ldf.init_state([0], 2, loss_estimate(1))
    state["multipliers"] = torch.tensor([[0.5, 1.0]])
    assert ldf.objective(t, state).item() == pytest.approx(2 + 0.5 * 1 - 1.0 * 3)
    ldf.after_step(t, state)  # lam + 2 g, clamped at 0
    assert state["multipliers"].tolist() == [[2.5, 0.0]]


def test_validation_alphas():
    assert dc.methods.DeepCTRL().val_alpha == 0.0
    assert dc.methods.TaskOnly().val_alpha == 0.0
    assert dc.methods.RuleOnly().val_alpha == 1.0
    with pytest.raises(ValueError, match=r"val_alpha must be in \[0, 1\], got 1.5"):
        dc.methods.DeepCTRL(val_alpha=1.5)


def test_deepctrl_validates_at_its_val_alpha():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(96, 3, generator=g)
    y = X[:, :1] - X[:, 1:2]
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    rule = dc.rules.Monotonic(0, "increasing")
    method = dc.methods.DeepCTRL(rho=1.0, val_alpha=0.75)
    result = dc.fit(model, rule, method, train=(X, y), val=(X, y), max_epochs=3, seeds=[0])
    with torch.no_grad():  # the best weights' validation loss is their MAE at alpha 0.75
        mae = float((result.model(X, 0.75) - y).abs().mean())
    assert result.val_loss[0] == pytest.approx(mae, rel=1e-5)
    assert float((result.model(X, 0.0) - y).abs().mean()) != pytest.approx(mae, rel=1e-3)


def test_method_arguments_are_checked():
    with pytest.raises(ValueError, match="rho must be"):
        dc.methods.DeepCTRL(rho="sometimes")
    with pytest.raises(ValueError, match="rho must be > 0, got 0"):
        dc.methods.DeepCTRL(rho=0.0)
    with pytest.raises(ValueError, match="rho must be finite, got inf"):
        dc.methods.DeepCTRL(rho=float("inf"))
    with pytest.raises(ValueError, match="TaskAndRule's lam must be >= 0"):
        dc.methods.TaskAndRule(-1.0)
    with pytest.raises(ValueError, match="TaskAndRule's lam must be finite"):
        dc.methods.TaskAndRule(float("inf"))
    with pytest.raises(ValueError, match="LagrangianDual's dual_lr must be > 0"):
        dc.methods.LagrangianDual(0.0)
    with pytest.raises(ValueError, match="LagrangianDual's dual_lr must be finite"):
        dc.methods.LagrangianDual(float("nan"))


class _Squared(dc.methods.Method):
    def objective(self, t: Terms, state: dc.methods.SeedState) -> torch.Tensor:
        return t.task**2


def test_a_method_stack_weighs_every_seed_as_its_member_does():
    members = [
        dc.methods.TaskOnly(),
        dc.methods.TaskAndRule(0.5),
        dc.methods.LagrangianDual(1.0),
        dc.methods.DeepCTRL(rho=2.0),
        dc.methods.RuleOnly(),
    ]
    stack = MethodStack(members, seeds_each=2)
    state = stack.init_state(list(range(10)), 2, loss_estimate(10))
    state.parts[2]["multipliers"] = torch.tensor([[0.5, 1.0], [2.0, 0.0]])
    g = torch.Generator().manual_seed(0)
    t = Terms(
        torch.rand(10, generator=g),
        torch.rand(10, generator=g),
        torch.randn(10, 2, generator=g),
        torch.rand(10, generator=g),
    )
    c = stack.coefficients(t.alpha, state)
    a = t.alpha.tolist()
    assert c.task.tolist() == pytest.approx(
        [1, 1, 1, 1, 1, 1, 2 * (1 - a[6]), 2 * (1 - a[7]), 0, 0]
    )
    assert c.rule.tolist() == pytest.approx([0, 0, 0.5, 0.5, 0, 0, a[6], a[7], 1, 1])
    assert c.violations.tolist() == [[0, 0]] * 4 + [[0.5, 1.0], [2.0, 0.0]] + [[0, 0]] * 4
    torch.testing.assert_close(c.combine(t), stack.objective(t, state), rtol=0, atol=1e-7)
    keep = torch.tensor([True, False, True, True, False, True, True, True, False, True])
    state = state.select(keep)  # seeds that stop leave the state and the coefficients
    assert [len(p) for p in state.parts] == [1, 2, 1, 2, 1]
    small = Terms(*(v[keep] for v in t))
    c = stack.coefficients(small.alpha, state)
    assert c.violations.tolist() == [[0, 0]] * 3 + [[2.0, 0.0]] + [[0, 0]] * 3
    torch.testing.assert_close(c.combine(small), stack.objective(small, state), rtol=0, atol=1e-7)


def test_methods_that_are_not_linear_have_no_coefficients():
    alpha = torch.zeros(2)
    squared = _Squared()
    assert squared.coefficients(alpha, squared.init_state([0, 1], 1, loss_estimate(2))) is None
    stack = MethodStack([_Squared(), dc.methods.TaskOnly()], seeds_each=1)
    assert stack.coefficients(alpha, stack.init_state([0, 1], 1, loss_estimate(2))) is None


def test_the_documented_custom_linear_method_runs(capsys):
    doc = (Path(__file__).resolve().parents[2] / "docs" / "core-api.md").read_text()
    block = re.search(
        r"```python\n(import torch\nimport deepctrl as dc\n\n\nclass WarmRule.*?)```", doc, re.S
    ).group(1)
    namespace: dict = {}
    exec(compile(block, "core-api.md", "exec"), namespace)
    assert capsys.readouterr().out.strip() == "tensor([5.])"
    method = namespace["WarmRule"]()
    state = method.init_state([0, 1, 2], 2, loss_estimate(3))
    c = method.coefficients(torch.zeros(3), state).as_tensors(torch.zeros(3), 2)
    assert c.rule.tolist() == [0.5] * 3 and c.violations.shape == (3, 2)


def test_a_member_whose_seeds_all_stopped_leaves_the_others_training():
    members = [dc.methods.DeepCTRL(rho=1.0), dc.methods.DeepCTRL(rho=2.0)]
    stack = MethodStack(members, seeds_each=2)
    state = stack.init_state([0, 1, 0, 1], 1, loss_estimate(4))
    state = state.select([False, False, True, True])  # the first member stopped
    assert stack.draw_alphas(3, state).shape == (2, 3)
    assert stack.val_alphas(state).tolist() == [0.0, 0.0]
    alpha = torch.tensor([0.25, 0.5])
    c = stack.coefficients(alpha, state)
    assert c.task.tolist() == [1.5, 1.0] and c.rule.tolist() == [0.25, 0.5]


def test_a_rho_from_an_infinite_or_nan_loss_falls_back_to_one_and_says_why():
    X = torch.randn(300, 3, generator=torch.Generator().manual_seed(0))
    model = dc.DeepCTRL(dc.mlp(3, 16, 8), dc.mlp(3, 16, 8), dc.mlp(16, 8, 1))
    huge = -X[:, :1] * 1e20  # float32 squares overflow: the task loss is infinite
    with pytest.warns(RuntimeWarning, match="initial rule or task loss is NaN or infinite"):
        result = dc.fit(
            model,
            Monotonic(0, "decreasing"),
            dc.methods.DeepCTRL(rho="paper"),
            train=(X, huge),
            task_loss="mse",
            max_epochs=1,
        )
    assert result.state["rho"].tolist() == [1.0]  # not 0, which DeepCTRL(rho=0) refuses
    log_of_negative = Penalty(lambda x, y_hat: torch.log(y_hat[:, 0] + x[:, 0]))
    with pytest.warns(RuntimeWarning, match="a log or square root of a negative number"):
        objective = dc.Objective(model, log_of_negative, dc.methods.DeepCTRL(rho="paper"), seed=0)
        assert float(objective.calibrate((X, -X[:, :1])).rho) == 1.0


def test_rho_epoch_warns_when_a_seed_falls_back_to_one_not_every_epoch():
    from deepctrl.core.rho import safe_ratio

    rule, task = torch.tensor([0.0, 2.0]), torch.tensor([1.0, 4.0])
    with pytest.warns(RuntimeWarning, match="re-measured rule or task loss is zero"):
        rho = safe_ratio(rule, task, torch.tensor([0.3, 0.7]))
    assert rho.tolist() == [1.0, 0.5]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert safe_ratio(rule, task, rho).tolist() == [1.0, 0.5]  # still there: quiet
