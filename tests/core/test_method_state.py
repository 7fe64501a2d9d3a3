"""SeedState: per-seed method state, sliced when seeds stop and joined across seed sets."""

import pytest
import torch

import deepctrl as dc
from deepctrl.core.method_stack import MethodStack
from deepctrl.core.method_terms import Terms
from helpers import loss_estimate


def test_select_and_join_keep_each_seed_with_its_own_tensors_and_prior():
    method = dc.methods.DeepCTRL(rho="paper")
    state = method.init_state([7, 8, 9], 1, loss_estimate(3, task=2.0))
    assert state["rho"].tolist() == [0.5, 0.5, 0.5] and len(state.priors) == 3
    state["rho"] = torch.tensor([1.0, 2.0, 3.0])
    first, rest = state.select([True, False, False]), state.select([False, True, True])
    assert first["rho"].tolist() == [1.0] and rest["rho"].tolist() == [2.0, 3.0]
    assert rest.priors == state.priors[1:]  # the same generators go on drawing
    joined = dc.methods.SeedState.join([first, rest])
    assert joined["rho"].tolist() == [1.0, 2.0, 3.0] and joined.priors == state.priors
    first["rho"] += 10  # a selection is a copy
    assert state["rho"].tolist() == [1.0, 2.0, 3.0]


def test_each_seed_draws_from_its_own_generator_after_a_round_trip():
    method = dc.methods.DeepCTRL(rho=1.0)
    state = method.init_state([0, 1], 1, loss_estimate(2, task=2.0))
    method.draw_alphas(5, state)
    saved = state.state_dict()
    expected = method.draw_alphas(4, state)
    again = method.load_state(saved)
    assert torch.equal(method.draw_alphas(4, again), expected)
    assert again["rho"].tolist() == [1.0, 1.0]
    # seed 1's draws do not depend on seed 0
    alone = method.init_state([1], 1, loss_estimate(1, task=2.0))
    method.draw_alphas(5, alone)
    assert torch.equal(method.draw_alphas(4, alone)[0], expected[1])


def test_a_stack_state_has_one_part_per_member_and_slices_them_together():
    stack = MethodStack(
        [dc.methods.LagrangianDual(1.0), dc.methods.DeepCTRL(rho=2.0)], seeds_each=2
    )
    state = stack.init_state([0, 1, 0, 1], 2, loss_estimate(4, task=2.0))
    assert [len(p) for p in state.parts] == [2, 2] and len(state) == 4
    t = Terms(
        torch.zeros(4), torch.zeros(4), torch.tensor([[1.0, -1.0], [2.0, 0.5]] * 2), torch.zeros(4)
    )
    stack.after_step(t, state)
    live = state.select([False, True, True, False])
    assert live.parts[0]["multipliers"].tolist() == [[2.0, 0.5]]
    assert live.parts[1]["rho"].tolist() == [2.0] and len(live.parts[1].priors) == 1
    saved = live.state_dict()
    rebuilt = stack.load_state(saved)
    assert rebuilt.parts[0]["multipliers"].tolist() == [[2.0, 0.5]]
    assert rebuilt.parts[1]["rho"].tolist() == [2.0]


def test_bad_states_are_refused():
    state = dc.methods.SeedState(2)
    with pytest.raises(ValueError, match="one entry per seed"):
        state.add("rho", torch.ones(3))
    with pytest.raises(KeyError, match="declare it with add"):
        state["rho"] = torch.ones(2)
    with pytest.raises(ValueError, match="keep has 3 entries for 2 seeds"):
        state.select([True, True, False])
    other = dc.methods.SeedState(1)
    other.add("rho", torch.ones(1))
    with pytest.raises(ValueError, match="same method"):
        dc.methods.SeedState.join([state, other])
    saved = dc.methods.DeepCTRL(rho=1.0).init_state([0], 1, loss_estimate(1, task=2.0)).state_dict()
    with pytest.raises(ValueError, match="pass the method's prior"):
        dc.methods.SeedState.from_state_dict(saved)


def test_a_state_loads_only_into_the_method_that_saved_it():
    deep = dc.methods.DeepCTRL(rho=1.0)
    saved = deep.init_state([0, 1], 2, loss_estimate(2, task=2.0)).state_dict()
    with pytest.raises(ValueError) as caught:
        dc.methods.LagrangianDual(1.0).load_state(saved)
    assert str(caught.value) == (
        "this state was saved by another method: it holds rho and alpha priors, while "
        "LagrangianDual(1) keeps multipliers"
    )
    with pytest.raises(
        ValueError, match="holds rho and alpha priors, while TaskOnly keeps nothing"
    ):
        dc.methods.TaskOnly().load_state(saved)
    dual = dc.methods.LagrangianDual(2.0).init_state([0, 1], 2, loss_estimate(2, task=2.0))
    with pytest.raises(ValueError, match="holds multipliers, while DeepCTRL keeps rho and alpha"):
        deep.load_state(dual.state_dict())
    stack = MethodStack([dc.methods.LagrangianDual(1.0), deep], seeds_each=1)
    with pytest.raises(ValueError, match="keeps the states of 2 methods"):
        stack.load_state(saved)
    assert deep.load_state(saved)["rho"].tolist() == [1.0, 1.0]  # its own loads
    assert dc.methods.DeepCTRL(rho="auto").load_state(saved)["rho"].tolist() == [1.0, 1.0]


def test_a_seed_that_stops_early_keeps_the_state_it_stopped_with():
    # LagrangianDual's multipliers grow every step; a seed that stopped earlier must report
    # the multipliers of its last step, as it does when trained alone.
    g = torch.Generator().manual_seed(0)
    X = torch.randn(96, 2, generator=g)
    y = X[:, :1] + 0.3 * torch.randn(96, 1, generator=g)
    rule = dc.rules.Penalty(lambda x, out: out[:, 0] - x[:, 0])  # holds for about half the rows
    kw = dict(
        train=(X[:64], y[:64]),
        val=(X[64:], y[64:]),
        batch_size=16,
        max_epochs=60,
        patience=2,
        lr=0.01,
    )

    def net():
        return dc.DeepCTRL(dc.mlp(2, 8), dc.mlp(2, 8), dc.mlp(16, 1))

    together = dc.fit(net(), rule, dc.methods.LagrangianDual(0.5), seeds=[0, 1, 2], **kw)
    assert len(set(together.epochs)) > 1, "the seeds should stop at different epochs"
    assert len(set(together.state["multipliers"].flatten().tolist())) == 3
    for i, seed in enumerate([0, 1, 2]):
        alone = dc.fit(net(), rule, dc.methods.LagrangianDual(0.5), seeds=[seed], **kw)
        assert alone.epochs == [together.epochs[i]]
        torch.testing.assert_close(
            together.state["multipliers"][i], alone.state["multipliers"][0], rtol=1e-5, atol=1e-6
        )


class UpperHalf(dc.priors.Prior):
    """Alphas from [0.5, 1]: a prior of one's own, as docs/core-api.md shows."""

    def sample(self, n, dtype=torch.float32):
        return 0.5 + 0.5 * torch.rand(n, generator=self.generator, dtype=dtype)

    def params(self):
        return {}


class PriorPerSeed(dc.methods.LinearMethod):
    """Seed 0 draws from Beta(0.1, 0.1), seed 1 from Beta(1, 1), seed 2 from UpperHalf."""

    draws_alpha = True

    def init_state(self, seeds, n_rules, estimate):
        priors = [
            dc.priors.Beta(0.1, 0.1, seed=seeds[0]),
            dc.priors.Beta(1.0, 1.0, seed=seeds[1]),
            UpperHalf(seed=seeds[2]),
        ]
        return dc.methods.SeedState(len(seeds), n_rules, priors)

    def draw_alphas(self, n, state):
        return torch.stack([p.sample(n) for p in state.priors])

    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(1 - alpha, alpha, 0.0)


def test_a_method_of_ones_own_gets_back_each_seeds_own_prior():
    method = PriorPerSeed()
    state = method.init_state([0, 1, 2], 1, None)
    method.draw_alphas(5, state)
    saved = state.state_dict()
    expected = method.draw_alphas(6, state)
    again = method.load_state(saved)
    assert [type(p).__name__ for p in again.priors] == ["Beta", "Beta", "UpperHalf"]
    assert [p.params() for p in again.priors[:2]] == [{"a": 0.1, "b": 0.1}, {"a": 1.0, "b": 1.0}]
    assert torch.equal(method.draw_alphas(6, again), expected)
    assert bool((expected[2] >= 0.5).all())
