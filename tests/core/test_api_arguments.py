"""Arguments of the wrong type, value or width are refused with one line naming them, and
the public objects show what they hold."""

import math

import numpy as np
import pytest
import torch

import deepctrl as dc
from deepctrl.core.method_stack import MethodStack

RULE = dc.Monotonic(0, "decreasing", perturbation=dc.rules.Relative(0.5))


def model():
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


def rows(n=32):
    X = torch.randn(n, 3, generator=torch.Generator().manual_seed(1))
    return X, -X[:, :1]


@pytest.mark.parametrize(
    "call",
    [
        lambda m, X, y: dc.sweep(m, RULE, X, y, alphas=[0.0]),
        lambda m, X, y: dc.verification_ratio(m, RULE, X),
        lambda m, X, y: dc.predict_sweep(m, RULE, X, [0.0, 1.0]),
    ],
)
def test_evaluating_rows_of_another_width_names_x(call):
    _, y = rows()
    with pytest.raises(ValueError, match=r"cannot take the X rows .*\(\(5,\), 'torch.float32'\)"):
        call(model(), torch.randn(32, 5), y)


def test_a_dataloader_of_another_width_names_the_data():
    data = torch.utils.data.TensorDataset(torch.randn(32, 5), torch.zeros(32, 1))
    with pytest.raises(ValueError, match=r"cannot take the data rows .*\(\(5,\),"):
        dc.sweep(model(), RULE, data, alphas=[0.0])


def test_predict_sweep_needs_alphas_and_a_positive_block():
    X, _ = rows()
    with pytest.raises(ValueError, match="predict_sweep needs at least one alpha"):
        dc.predict_sweep(model(), RULE, X, [])
    for bad in (-5, 0, 2.5, True):
        with pytest.raises(ValueError, match=f"block_rows must be an integer >= 1.*{bad!r}"):
            dc.predict_sweep(model(), RULE, X, [0.0], block_rows=bad)
    y_hat, ok = dc.predict_sweep(model(), RULE, X, [0.0, 1.0], block_rows=5)
    whole, whole_ok = dc.predict_sweep(model(), RULE, X, [0.0, 1.0], block_rows=64)
    assert y_hat.shape == (2, 32, 1) and torch.allclose(y_hat, whole)
    assert ok is not None and whole_ok is not None and ok.shape == whole_ok.shape


@pytest.mark.parametrize("seed", [1.7, True, -1, "1"])
def test_seeds_must_be_whole_everywhere(seed):
    X, y = rows()
    calls = [
        lambda: dc.Objective(model(), RULE, seed=seed),
        lambda: dc.sweep(model(), RULE, X, y, alphas=[0.3], seed=seed),
        lambda: dc.verification_ratio(model(), RULE, X, seed=seed),
        lambda: dc.predict_sweep(model(), RULE, X, [0.3], seed=seed),
        lambda: dc.priors.Beta(seed=seed),
        lambda: dc.priors.Uniform(seed=seed),
    ]
    for call in calls:
        with pytest.raises(ValueError, match=f"seed must be an integer >= 0, got {seed!r}"):
            call()
    assert dc.Objective(model(), RULE, seed=np.int64(3)).seed == 3


def test_wrong_types_are_named():
    from deepctrl.core.rules.perturbation import perturbation_from_config

    with pytest.raises(TypeError, match="table must be a dict of columns.*got list"):
        dc.select_alpha([0.0, 1.0])
    with pytest.raises(TypeError, match="cfg must be a rule's config"):
        dc.rules.rule_from_config("monotonic")
    with pytest.raises(ValueError, match="the monotonic rule's config needs 'perturbation'"):
        dc.rules.rule_from_config({"kind": "monotonic", "feature": 0})
    with pytest.raises(ValueError, match="the allof rule's config needs 'rules'"):
        dc.rules.rule_from_config({"kind": "allof"})
    with pytest.raises(ValueError, match="the relative perturbation's config needs 'u'"):
        perturbation_from_config({"kind": "relative"})
    with pytest.raises(ValueError, match=r"a rule's config needs 'kind' \(monotonic, threshold"):
        dc.rules.rule_from_config({"feature": 0})
    with pytest.raises(ValueError, match=r"unknown rule kind 'monotone' \(monotonic, threshold"):
        dc.rules.rule_from_config({"kind": "monotone"})
    with pytest.raises(ValueError, match="a perturbation's config needs 'kind' \\(relative"):
        perturbation_from_config({"u": 0.1})
    with pytest.raises(TypeError, match="perturbation must be a Perturbation.*got 0.1"):
        dc.rules.Monotonic(0, "increasing", perturbation=0.1)
    with pytest.raises(TypeError, match="perturbation must be a Perturbation"):
        dc.rules.Monotonic(0, "increasing").with_feature(1, perturbation="relative")
    with pytest.raises(ValueError, match="has no 'method', 'generators'"):
        dc.Objective(model(), RULE).load_state_dict({})
    with pytest.raises(ValueError, match="not what Beta.state_dict.* no 'params'"):
        dc.priors.Beta().load_state_dict({})
    with pytest.raises(TypeError, match="state must be the dict"):
        dc.priors.Beta().load_state_dict(None)
    for prior in (dc.priors.Uniform(), dc.priors.Beta(), dc.priors.Fixed(0.5)):
        with pytest.raises(ValueError, match="number of draws must be an integer >= 0, got -1"):
            prior.sample(-1)
    assert dc.priors.Uniform().sample(0).shape == (0,)


def test_a_model_that_is_not_a_module_is_named(tmp_path):
    X, y = rows()
    path = dc.save(model(), tmp_path / "m.safetensors")
    calls = [
        lambda: dc.Objective("net.pt", RULE),
        lambda: dc.fit("net.pt", RULE, train=(X, y), max_epochs=1),
        lambda: dc.sweep("net.pt", RULE, X, y, alphas=[0.0]),
        lambda: dc.verification_ratio("net.pt", RULE, X),
        lambda: dc.save("net.pt", tmp_path / "x.safetensors"),
        lambda: dc.load(path, model="net.pt"),
    ]
    for call in calls:
        with pytest.raises(TypeError, match=r"model must be a torch.nn.Module, got 'net.pt' \(str"):
            call()


def test_constructors_refuse_what_fails_later():
    with pytest.raises(TypeError, match="Standardized's inner must be a Perturbation"):
        dc.rules.Standardized("relative", 0.0, 1.0)
    with pytest.raises(TypeError, match="Penalty's fn must be a function"):
        dc.rules.Penalty(0.5)
    with pytest.raises(TypeError, match="data_encoder must be a torch.nn.Module, got None"):
        dc.DeepCTRL(None, dc.mlp(3, 8), dc.mlp(16, 1))
    with pytest.raises(TypeError, match="decision must be a torch.nn.Module, got 'mlp'"):
        dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), "mlp")
    with pytest.raises(TypeError, match="rule_encoder must be a torch.nn.Module"):
        dc.DeepCTRL(dc.mlp(3, 8), "mlp", dc.mlp(16, 1))
    with pytest.raises(TypeError, match="shared must be a torch.nn.Module"):
        dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1), shared=3)
    with pytest.raises(TypeError, match="Residual's inner must be a torch.nn.Module"):
        dc.Residual(None)
    with pytest.raises(ValueError, match="n_seeds must be an integer >= 0, got -1"):
        dc.methods.SeedState(-1)
    with pytest.raises(ValueError, match=r"mlp sizes must be positive integers, got \(3, 2.9\)"):
        dc.mlp(3, 2.9)
    assert dc.mlp(np.int64(3), 2)[0].in_features == 3


def test_alphas_as_arrays_and_one_number():
    X, y = rows()
    m = model()
    listed = dc.sweep(m, RULE, X, y, alphas=[0.0, 0.5, 1.0])
    assert dc.sweep(m, RULE, X, y, alphas=np.linspace(0, 1, 3)) == listed
    assert dc.sweep(m, RULE, X, y, alphas=torch.linspace(0, 1, 3)) == listed
    for one in (0.5, np.float64(0.5), torch.tensor(0.5), np.array(0.5)):
        with pytest.raises(ValueError, match=r"for one alpha, give \[0.5\]"):
            dc.sweep(m, RULE, X, y, alphas=one)
    with pytest.raises(ValueError, match=r"alphas must be one-dimensional, got shape \(2, 2\)"):
        dc.sweep(m, RULE, X, y, alphas=torch.zeros(2, 2))
    with pytest.raises(ValueError, match=r"one-dimensional, got \[0.0, 1.0\] among them"):
        dc.sweep(m, RULE, X, y, alphas=[[0.0, 1.0]])  # a list of lists, as np.array's input
    mixed = [torch.tensor(0.0), np.float64(0.5), np.array(1.0)]
    assert dc.sweep(m, RULE, X, y, alphas=mixed) == listed


def test_sweep_takes_l1_as_training_does_and_a_tensor_alpha():
    X, y = rows()
    m = model()
    table = dc.sweep(m, RULE, X, y, alphas=[0.0, 1.0], metrics="l1")
    assert sorted(table) == ["alpha", "mae", "verification_ratio"]
    assert table["mae"] == dc.sweep(m, RULE, X, y, alphas=[0.0, 1.0], metrics="mae")["mae"]
    both = dc.sweep(m, None, X, y, alphas=[0.0], metrics=("l1", "mae", "mse"))
    assert list(both) == ["alpha", "mae", "mse"]
    given = dc.verification_ratio(m, RULE, X, alpha=torch.tensor(0.5))
    assert given == dc.verification_ratio(m, RULE, X, alpha=0.5)
    assert given == dc.verification_ratio(m, RULE, X, alpha=np.float32(0.5))


def test_methods_perturbations_and_stacks_show_their_settings():
    assert repr(dc.methods.DeepCTRL()) == "DeepCTRL(prior=Beta(a=0.1, b=0.1), rho='auto')"
    shown = repr(dc.methods.DeepCTRL(dc.priors.Uniform(), rho=2.0, val_alpha=0.5))
    assert shown == "DeepCTRL(prior=Uniform(), rho=2.0, val_alpha=0.5)"
    assert repr(dc.methods.TaskOnly()) == "TaskOnly()"
    assert repr(dc.methods.RuleOnly()) == "RuleOnly()"
    assert repr(dc.methods.TaskAndRule(0.3)) == "TaskAndRule(lam=0.3)"
    assert repr(dc.methods.LagrangianDual(0.5)) == "LagrangianDual(dual_lr=0.5)"
    stack = MethodStack([dc.methods.TaskOnly(), dc.methods.TaskAndRule(1)], 2)
    assert repr(stack) == "MethodStack([TaskOnly(), TaskAndRule(lam=1.0)], seeds_each=2)"
    assert repr(dc.rules.Additive(0.5)) == "Additive(scale=0.5)"
    assert math.isclose(eval(repr(dc.rules.Relative(0.2)), vars(dc.rules)).u, 0.2)


def test_integer_tensors_count_as_integers_and_float_tensors_do_not():
    X, y = rows()
    seed, block = torch.tensor(3), torch.tensor(10)
    one = dc.sweep(model(), RULE, X, y, alphas=[0.3], seed=seed)
    assert one == dc.sweep(model(), RULE, X, y, alphas=[0.3], seed=3)
    assert dc.verification_ratio(model(), RULE, X, seed=seed) == dc.verification_ratio(
        model(), RULE, X, seed=3
    )
    y_hat, _ = dc.predict_sweep(model(), RULE, X, [0.0], block_rows=block)
    assert y_hat.shape == (1, 32, 1)
    assert dc.priors.Beta(seed=0).sample(torch.tensor(3)).shape == (3,)
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got tensor"):
        dc.sweep(model(), RULE, X, y, alphas=[0.3], seed=torch.tensor(3.0))
    with pytest.raises(ValueError, match="block_rows must be an integer >= 1 or None, got tensor"):
        dc.predict_sweep(model(), RULE, X, [0.0], block_rows=torch.tensor(0))
