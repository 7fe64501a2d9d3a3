"""A method's hooks receive the batch's terms cut from the graph, on every training path;
and a call under no_grad before training leaves training as it was."""

import pytest
import torch

import deepctrl as dc

RULE = dc.rules.Monotonic(0, "increasing")


class RuleAverage(dc.methods.LinearMethod):
    """L_task + (1 + m) L_rule, m a running average of the rule loss kept in the state."""

    def init_state(self, seeds, n_rules, estimate):
        state = dc.methods.SeedState(len(seeds), n_rules)
        state.add("average", torch.zeros(len(seeds)))
        return state

    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(1.0, 1.0 + state["average"].to(alpha), 0.0)

    def after_step(self, t, state):
        assert not (t.task.requires_grad or t.rule.requires_grad or t.violations.requires_grad)
        state["average"] = 0.9 * state["average"] + 0.1 * t.rule


def _data() -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(64, 3, generator=g)
    return X, -X[:, :1]


def _model() -> dc.DeepCTRL:
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 1))


def test_an_objective_hands_the_hook_detached_terms_every_step():
    X, y = _data()
    model = _model()
    objective = dc.Objective(model, RULE, RuleAverage())
    opt = torch.optim.Adam(model.parameters(), 1e-2)
    rules = []
    for _ in range(3):
        out = objective(X, y)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        objective.after_step(out)
        rules.append(float(out.terms.rule.detach()[0]))
    expected = 0.0
    for r in rules:
        expected = 0.9 * expected + 0.1 * r
    average = objective.state["average"]
    assert not average.requires_grad
    assert float(average[0]) > 0
    assert abs(float(average[0]) - expected) <= 1e-6 * expected  # float32 steps


def test_fit_trains_a_method_whose_hook_keeps_the_terms():
    X, y = _data()
    result = dc.fit(_model(), RULE, RuleAverage(), train=(X, y), max_epochs=2, batch_size=16)
    average = result.state["average"]
    assert not average.requires_grad
    assert bool(torch.isfinite(average).all()) and float(average.abs().max()) > 0


def test_a_call_under_no_grad_before_training_leaves_training_as_it_was():
    X, y = _data()

    def trained(sanity_check: bool) -> list[torch.Tensor]:
        model = _model()
        objective = dc.Objective(model, RULE, dc.methods.DeepCTRL())
        if sanity_check:
            with torch.no_grad():
                objective(X[:16], y[:16])
        opt = torch.optim.Adam(model.parameters(), 1e-2)
        for i in range(3):
            out = objective(X[16 * i : 16 * (i + 1)], y[16 * i : 16 * (i + 1)])
            opt.zero_grad()
            out.loss.backward()
            opt.step()
        return [p.detach().clone() for p in model.parameters()]

    for a, b in zip(trained(True), trained(False), strict=True):
        assert torch.equal(a, b)


class NoRuleCount(RuleAverage):
    """A method whose state forgets the number of rule leaves."""

    def init_state(self, seeds, n_rules, estimate):
        state = dc.methods.SeedState(len(seeds))
        state.add("average", torch.zeros(len(seeds)))
        return state


def test_a_state_that_does_not_match_its_seeds_and_rules_is_refused_at_once():
    # such a state would train, and its own saved copy fail to load much later
    X, y = _data()
    said = (
        "^NoRuleCount.init_state returned a state of 1 seed\\(s\\) and 0 rule leaves for 1 "
        "seed\\(s\\) and 1 rule leaves: build it as SeedState\\(len\\(seeds\\), n_rules\\)$"
    )
    with pytest.raises(ValueError, match=said):
        dc.Objective(_model(), RULE, NoRuleCount(), seed=0)(X, y)
    with pytest.raises(ValueError, match=said.replace("1 seed", "2 seed", 2)):
        dc.fit(_model(), RULE, NoRuleCount(), train=(X, y), seeds=[0, 1], max_epochs=1)
    objective = dc.Objective(_model(), RULE, RuleAverage(), seed=0)
    objective(X, y)
    again = dc.Objective(_model(), RULE, RuleAverage(), seed=0)
    again.load_state_dict(objective.state_dict())
    assert torch.equal(again.state["average"], objective.state["average"])
