"""What the REPL shows for the core objects: settings, numbers and shapes, never whole
tensors."""

import torch

import deepctrl as dc


def absolute(y_hat, y):
    return (y_hat - y).abs()[:, 0]


def objective(seed=3):
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    method = dc.methods.DeepCTRL(dc.priors.Fixed(0.25), rho=2.0)
    return dc.Objective(model, dc.rules.Monotonic(0, "increasing"), method, "mse", seed=seed)


def test_an_objective_shows_its_method_rule_loss_and_seed():
    shown = repr(objective())
    assert shown == (
        "Objective(model=DeepCTRL, rule=Monotonic(feature=0, direction='increasing'), "
        "method=DeepCTRL(prior=Fixed(a=0.25), rho=2.0), task_loss='mse', seed=3)"
    )
    own = dc.Objective(torch.nn.Linear(3, 1), None, dc.methods.TaskOnly(), absolute)
    assert repr(own) == (
        "Objective(model=Linear, rule=None, method=TaskOnly(), task_loss=absolute, seed=0)"
    )


def test_an_objective_output_shows_numbers_and_shapes_not_the_tensors():
    obj = objective()
    out = obj(torch.randn(64, 3), torch.randn(64, 1))
    shown = repr(out)
    assert shown.startswith(f"ObjectiveOutput(loss={out.loss.item():.6g}, task=")
    assert "alpha=0.25, y_hat=<float32 (64, 1)>, satisfied=<bool (64,)>" in shown
    assert "violations=<float32 (1, 1)>" in shown
    assert len(shown) < 400 and "tensor(" not in shown
    assert repr(obj).endswith("seed=3, rho=2)")


def test_a_priors_repr_rebuilds_it_with_its_seed():
    assert repr(dc.priors.Uniform(seed=3)) == "Uniform(seed=3)"
    assert repr(dc.priors.Beta(0.5, 0.5, seed=3)) == "Beta(a=0.5, b=0.5, seed=3)"
    assert repr(dc.priors.Fixed(0.5)) == "Fixed(a=0.5)"
    prior = dc.priors.Beta(0.5, 0.5, seed=3)
    rebuilt = eval(repr(prior), vars(dc.priors))
    assert torch.equal(rebuilt.sample(5), prior.sample(5))
    assert repr(prior.spawn(7)) == "Beta(a=0.5, b=0.5, seed=7)"
