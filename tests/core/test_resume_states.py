"""Resuming from saved states: which settings a load keeps, and states that are not what
the loader expects."""

import pytest
import torch

import deepctrl as dc
from helpers import loss_estimate, small_net

RULE = dc.rules.Monotonic(0, "increasing")


def trained_objective(method: dc.methods.Method) -> dc.Objective:
    objective = dc.Objective(small_net(3), RULE, method, seed=0)
    gen = torch.Generator().manual_seed(0)
    objective(torch.randn(16, 3, generator=gen), torch.randn(16, 1, generator=gen))
    return objective


def test_a_fixed_rho_is_the_loading_methods_and_a_measured_one_is_the_states():
    saved = dc.methods.DeepCTRL(rho=1.0).init_state([0, 1], 1, loss_estimate(2, task=2.0))
    saved = saved.state_dict()
    assert dc.methods.DeepCTRL(rho=5.0).load_state(saved)["rho"].tolist() == [5.0, 5.0]
    for mode in ("auto", "paper", "epoch"):
        assert dc.methods.DeepCTRL(rho=mode).load_state(saved)["rho"].tolist() == [1.0, 1.0]


def test_an_objective_resumed_under_another_fixed_rho_trains_with_it():
    state = trained_objective(dc.methods.DeepCTRL(rho=1.0)).state_dict()
    resumed = dc.Objective(small_net(3), RULE, dc.methods.DeepCTRL(rho=5.0), seed=0)
    resumed.load_state_dict(state)
    assert resumed.rho == 5.0
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    out = resumed(x, y, alpha=0.0)
    assert float(out.loss.detach()) == pytest.approx(5.0 * float(out.task), rel=1e-6)


def test_states_that_are_not_a_methods_are_named():
    method = dc.methods.DeepCTRL(rho=1.0)
    objective = trained_objective(method)
    with pytest.raises(ValueError, match="^this is an objective's state, not a method's"):
        method.load_state(objective.state_dict())
    with pytest.raises(ValueError, match="^the method state is None: an objective saved before"):
        method.load_state(dc.Objective(small_net(3), RULE, method).state_dict()["method"])
    with pytest.raises(ValueError, match="it has no 'n_seeds', 'n_rules', 'tensors'"):
        method.load_state(dc.priors.Beta(seed=0).state_dict())
    with pytest.raises(ValueError, match="it has no 'n_seeds'"):
        dc.methods.SeedState.from_state_dict({})
    with pytest.raises(ValueError, match="it has no 'n_seeds'"):
        dc.methods.LagrangianDual().load_state({"tensors": {}})


def test_damaged_objective_states_are_value_errors():
    objective = trained_objective(dc.methods.DeepCTRL(rho=1.0))
    state = objective.state_dict()
    with pytest.raises(ValueError, match="it has no 'n_seeds'"):
        objective.load_state_dict({**state, "method": {}})
    with pytest.raises(ValueError, match="generators'\\] is not what .* got str"):
        objective.load_state_dict({**state, "generators": "x"})
    with pytest.raises(ValueError, match="has 'nowhere', which is not a device name"):
        objective.load_state_dict({**state, "generators": {"nowhere": state["generators"]["cpu"]}})
    with pytest.raises(ValueError, match="\\['cpu'\\] is not a saved generator state"):
        objective.load_state_dict({**state, "generators": {"cpu": torch.zeros(3)}})
    prior = dc.priors.Beta(seed=0)
    with pytest.raises(ValueError, match="^state\\['generator'\\] is not a saved generator"):
        prior.load_state_dict({**prior.state_dict(), "generator": "x"})


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without a GPU")
def test_a_gpu_runs_stream_is_left_out_on_a_machine_without_one():
    objective = trained_objective(dc.methods.DeepCTRL(rho=1.0))
    state = objective.state_dict()
    moved = {**state, "generators": {"cuda:0": state["generators"]["cpu"]}}
    resumed = dc.Objective(small_net(3), RULE, dc.methods.DeepCTRL(rho=1.0), seed=0)
    with pytest.warns(UserWarning, match="stream for device 'cuda:0' is not restored"):
        resumed.load_state_dict(moved)
    assert torch.equal(resumed.state["rho"], objective.state["rho"])


class UniformAlphas(dc.methods.LinearMethod):
    """A method of one's own that keeps an alpha prior per seed, as DeepCTRL does."""

    draws_alpha = True

    def init_state(self, seeds, n_rules, estimate):
        return dc.methods.SeedState(
            len(seeds), n_rules, [dc.priors.Uniform().spawn(s) for s in seeds]
        )

    def draw_alphas(self, n, state):
        return torch.stack([p.sample(n) for p in state.priors])

    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(task=1 - alpha, rule=alpha, violations=0.0)


def test_a_method_of_ones_own_with_priors_resumes_its_alpha_draws():
    objective = trained_objective(UniformAlphas())
    saved = objective.state_dict()
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    going_on = [float(objective(x, y).alpha) for _ in range(3)]
    resumed = dc.Objective(small_net(3), RULE, UniformAlphas(), seed=0)
    resumed.load_state_dict(saved)
    assert [float(resumed(x, y).alpha) for _ in range(3)] == going_on
    assert len(UniformAlphas().load_state(saved["method"]).priors) == 1


@pytest.mark.parametrize(
    "method", [dc.methods.DeepCTRL(rho=1.0), dc.methods.LagrangianDual()], ids=["deepctrl", "dual"]
)
def test_calls_without_gradients_leave_the_training_draws_where_they_stood(method):
    """A validation step that calls the objective (and Lightning's sanity check, run again
    after a resume) must not move the alphas or perturbations training draws next."""
    gen = torch.Generator().manual_seed(1)
    x, y = torch.randn(32, 3, generator=gen), torch.randn(32, 1, generator=gen)
    state = trained_objective(method).state_dict()

    def next_training_call(validate_first: bool) -> dc.ObjectiveOutput:
        torch.manual_seed(2)
        resumed = dc.Objective(small_net(3), RULE, method, seed=0)
        resumed.load_state_dict(state)
        if validate_first:
            with torch.no_grad():
                checked = resumed(x[:8], y[:8])  # alpha drawn, rows perturbed
                assert resumed(x[:8], y[:8]).alpha == checked.alpha  # the same at every call
                resumed(x[:8], y[:8], alpha=0.0)
        return resumed(x, y)

    plain, validated = next_training_call(False), next_training_call(True)
    assert plain.alpha == validated.alpha
    assert torch.equal(plain.loss.detach(), validated.loss.detach())
    assert torch.equal(plain.terms.rule, validated.terms.rule)
