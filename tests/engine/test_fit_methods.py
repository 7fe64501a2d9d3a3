"""Several methods of one network trained as one stacked job (``dc.fit_methods``)."""

import pytest
import torch

import deepctrl as dc
from deepctrl.core.method_stack import MethodStack
from deepctrl.core.method_terms import Terms
from helpers import loss_estimate, small_net


def _data():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 3, generator=g)
    y = X.sum(1, keepdim=True) + 0.1 * torch.randn(200, 1, generator=g)
    return (X[:150], y[:150]), (X[150:], y[150:])


def _net():
    return small_net()


def _methods():
    return [
        dc.methods.DeepCTRL(rho="auto"),
        dc.methods.TaskOnly(),
        dc.methods.RuleOnly(),
        dc.methods.TaskAndRule(0.5),
        dc.methods.LagrangianDual(0.5),
    ]


def test_each_method_trains_as_it_does_alone():
    train, val = _data()
    rule = dc.rules.Monotonic(0, "increasing")
    kw = dict(train=train, val=val, max_epochs=6, patience=2, seeds=[3, 4], input_noise=0.01)
    together = dc.fit_methods(_net(), rule, _methods(), **kw)
    assert [r.method.name for r in together] == [m.name for m in _methods()]
    for method, joint in zip(_methods(), together, strict=True):
        alone = dc.fit(_net(), rule, method, **kw)
        assert joint.seeds == [3, 4] and joint.epochs == alone.epochs
        assert joint.best_epochs == alone.best_epochs
        for a, b in zip(alone.models, joint.models, strict=True):
            for name, value in a.state_dict().items():
                torch.testing.assert_close(b.state_dict()[name], value, rtol=1e-5, atol=1e-6)
        assert sorted(joint.state.tensors) == sorted(alone.state.tensors)
        for key, value in alone.state.tensors.items():
            torch.testing.assert_close(joint.state[key], value)
        assert [p.generator.get_state().tolist() for p in joint.state.priors] == [
            p.generator.get_state().tolist() for p in alone.state.priors
        ]


def test_stack_splits_terms_by_member_and_keeps_each_members_seeds():
    lam = dc.methods.LagrangianDual(2.0)
    stack = MethodStack([dc.methods.TaskAndRule(0.5), lam], seeds_each=2)
    state = stack.init_state([0, 1, 0, 1], 1, loss_estimate(4))
    t = Terms(
        task=torch.tensor([1.0, 2.0, 3.0, 4.0]),
        rule=torch.tensor([10.0, 20.0, 0.0, 0.0]),
        violations=torch.tensor([[0.0], [0.0], [0.5], [-1.0]]),
        alpha=torch.zeros(4),
    )
    # TaskAndRule(0.5): task + 0.5 rule; LagrangianDual with zero multipliers: task
    assert stack.objective(t, state).tolist() == [6.0, 12.0, 3.0, 4.0]
    stack.after_step(t, state)
    assert state.parts[1]["multipliers"].flatten().tolist() == [1.0, 0.0]  # max(0, 0 + 2 g)
    live = state.select([True, False, False, True])
    assert [len(p) for p in live.parts] == [1, 1]
    t2 = Terms(
        task=torch.tensor([1.0, 1.0]),
        rule=torch.tensor([2.0, 0.0]),
        violations=torch.tensor([[0.0], [1.0]]),
        alpha=torch.zeros(2),
    )
    assert stack.objective(t2, live).tolist() == [2.0, 1.0]  # second member: 1 + 0 * 1
    stack.after_step(t2, live)  # only the member's remaining seed (its second) moves
    assert live.parts[1]["multipliers"].flatten().tolist() == [2.0]
    assert state.parts[1]["multipliers"].flatten().tolist() == [1.0, 0.0]  # a copy was sliced


def test_stack_validates_and_draws_per_member():
    stack = MethodStack([dc.methods.TaskOnly(), dc.methods.RuleOnly()], seeds_each=2)
    state = stack.init_state([5, 6, 5, 6], 1, loss_estimate(4))
    assert stack.val_alphas(state).tolist() == [0.0, 0.0, 1.0, 1.0]
    assert stack.draw_alphas(3, state).tolist() == [[0.0] * 3, [0.0] * 3, [1.0] * 3, [1.0] * 3]
    assert stack.uses_rule and not stack.needs_violations


def test_stack_hands_each_member_its_own_loss_estimates():
    seen = []

    class Spy(dc.methods.TaskOnly):
        def init_state(self, seeds, n_rules, estimate):
            seen.append([t.tolist() for t in estimate(False)])
            return super().init_state(seeds, n_rules, estimate)

    stack = MethodStack([Spy(), Spy()], seeds_each=2)
    stack.init_state(
        [0, 1, 0, 1],
        1,
        lambda reference: (torch.tensor([1.0, 2.0, 3.0, 4.0]), torch.tensor([5.0, 6.0, 7.0, 8.0])),
    )
    assert seen == [[[1.0, 2.0], [5.0, 6.0]], [[3.0, 4.0], [7.0, 8.0]]]


def test_bad_input():
    train, _ = _data()
    rule = dc.rules.Monotonic(0, "increasing")
    with pytest.raises(ValueError, match="at least one method"):
        dc.fit_methods(_net(), rule, [], train=train)
    with pytest.raises(ValueError, match="unknown options"):
        dc.fit_methods(_net(), rule, [dc.methods.TaskOnly()], train=train, epochs=3)
    with pytest.raises(ValueError, match="needs a rule"):
        dc.fit_methods(_net(), None, [dc.methods.TaskOnly(), dc.methods.RuleOnly()], train=train)
    with pytest.raises(ValueError, match="need 4 seeds, got 3"):
        MethodStack([dc.methods.TaskOnly()] * 2, seeds_each=2).init_state(
            [0, 1, 2], 1, loss_estimate(3)
        )


class UniformAlpha(dc.methods.LinearMethod):
    """alpha L_rule + (1 - alpha) L_task, alpha from a uniform prior of each seed: written as
    a user would, with no care for a state of no seeds."""

    draws_alpha = True

    def init_state(self, seeds, n_rules, estimate):
        return dc.methods.SeedState(len(seeds), n_rules, [dc.priors.Uniform(seed=s) for s in seeds])

    def draw_alphas(self, n, state):
        return torch.stack([p.sample(n) for p in state.priors])

    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(1 - alpha, alpha, 0.0)


def test_a_method_whose_seeds_all_stopped_is_not_called_again():
    """Its hooks never see a state of no seeds, and every member ends as it ends alone."""
    train, val = _data()
    rule = dc.rules.Monotonic(0, "increasing")
    kwargs = dict(
        train=train, val=val, max_epochs=40, seeds=[0], batch_size=50, patience=3, lr=3e-2
    )
    methods = [UniformAlpha(), dc.methods.TaskOnly()]
    alone = [dc.fit(_net(), rule, m, **kwargs) for m in methods]
    together = dc.fit_methods(_net(), rule, methods, **kwargs)
    assert alone[0].epochs < alone[1].epochs  # the method of one's own stops first
    for a, t in zip(alone, together, strict=True):
        assert t.epochs == a.epochs
        for p, q in zip(a.model.parameters(), t.model.parameters(), strict=True):
            torch.testing.assert_close(p, q, atol=1e-6, rtol=0)
