import pytest
import torch

import deepctrl as dc
from deepctrl.core.rules import Monotonic, Penalty


def make_data(n=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] - 0.5 * X[:, 1:2] + 0.05 * torch.randn(n, 1, generator=g)


def net():
    return dc.DeepCTRL(dc.mlp(3, 16, 8), dc.mlp(3, 16, 8), dc.mlp(16, 8, 1))


RULE = Monotonic(0, "increasing")


def weights(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_same_seed_gives_identical_weights_and_other_seeds_differ():
    kw = dict(train=make_data(), val=make_data(64, 1), max_epochs=3, batch_size=32,
              input_noise=0.01)
    a = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[5], **kw)
    b = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[5], **kw)
    c = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[6], **kw)
    assert torch.equal(weights(a.model), weights(b.model))
    assert not torch.equal(weights(a.model), weights(c.model))


@pytest.mark.parametrize("method", [dc.methods.DeepCTRL(), dc.methods.LagrangianDual(0.1)])
def test_seed_trained_in_a_group_matches_seed_trained_alone(method):
    kw = dict(train=make_data(), val=make_data(64, 1), max_epochs=4, batch_size=32,
              input_noise=0.01, patience=1)
    group = dc.fit(net(), RULE, method, seeds=list(range(10)), **kw)
    for s in (0, 7):
        alone = dc.fit(net(), RULE, method, seeds=[s], **kw)
        assert alone.epochs[0] == group.epochs[s]
        assert torch.allclose(weights(alone.model), weights(group.models[s]), atol=1e-5)


def test_early_stopping_stops_and_restores_the_best_epoch():
    X, y = make_data()
    Xv, yv = X[:64], -y[:64]  # validation labels contradict training: val loss soon rises
    result = dc.fit(net(), None, dc.methods.TaskOnly(), train=(X, y), val=(Xv, yv),
                    max_epochs=200, patience=3, val_every=2, batch_size=32, seeds=[0, 1])
    for s in range(2):
        history = result.history[s]
        best = min(history["val_loss"])
        assert result.best_epochs[s] == history["val_epoch"][history["val_loss"].index(best)]
        assert result.epochs[s] == result.best_epochs[s] + 3 * 2 < 200
        table = dc.sweep(result.models[s], None, Xv, yv, alphas=[0.0], metrics=("mae",))
        assert table["mae"][0] == pytest.approx(best, rel=1e-5)


def test_rule_only_validates_at_alpha_one():
    X, y = make_data()
    result = dc.fit(net(), RULE, dc.methods.RuleOnly(), train=(X, y), val=(X[:64], y[:64]),
                    max_epochs=3, batch_size=64)
    table = dc.sweep(result.model, RULE, X[:64], y[:64], alphas=[0.0, 1.0], metrics=("mae",))
    assert result.val_loss[0] == pytest.approx(table["mae"][1], rel=1e-5)
    assert result.val_loss[0] != pytest.approx(table["mae"][0], rel=1e-3)


def test_plain_module_trains_without_alpha():
    X, y = make_data()
    result = dc.fit(dc.mlp(3, 8, 1), RULE, dc.methods.TaskAndRule(0.1), train=(X, y),
                    max_epochs=2)
    assert len(result.history[0]["train_loss"]) == 2


def test_fit_checks_its_inputs():
    X, y = make_data()
    with pytest.raises(ValueError, match="needs a rule"):
        dc.fit(net(), None, dc.methods.DeepCTRL(), train=(X, y))
    with pytest.raises(ValueError, match="256 rows but y has 10"):
        dc.fit(net(), RULE, train=(X, y[:10]))
    bad = X.clone()
    bad[3, 1] = float("nan")
    with pytest.raises(ValueError, match="NaN or infinite values in 1 rows"):
        dc.fit(net(), RULE, train=(bad, y))
    with pytest.raises(ValueError, match="distinct"):
        dc.fit(net(), RULE, train=(X, y), seeds=[1, 1])
    with pytest.raises(ValueError, match="needs train"):
        dc.fit(net(), RULE)


def test_energy_penalty_trains_and_reports_history():
    X, y = make_data()
    rule = Penalty(lambda x, yh: (yh**2).sum(1) - (x[:, :1] ** 2).sum(1))
    result = dc.fit(net(), rule, dc.methods.DeepCTRL(), train=(X, y), val=(X[:32], y[:32]),
                    max_epochs=2, seeds=[0, 1])
    assert result.method.state_dict()["rho"].shape == (2,)
    assert all(len(h["train_loss"]) == 2 for h in result.history)
