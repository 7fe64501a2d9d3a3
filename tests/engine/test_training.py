import copy
import math
import warnings

import numpy as np
import pytest
import torch

import deepctrl as dc
from deepctrl.core.rules import Monotonic, Penalty, Perturbation
from helpers import small_net


def make_data(n=256, seed=0):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] - 0.5 * X[:, 1:2] + 0.05 * torch.randn(n, 1, generator=g)


def net():
    return small_net(16)


RULE = Monotonic(0, "increasing")


def weights(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_same_seed_gives_identical_weights_and_other_seeds_differ():
    kw = dict(
        train=make_data(), val=make_data(64, 1), max_epochs=3, batch_size=32, input_noise=0.01
    )
    a = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[5], **kw)
    b = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[5], **kw)
    c = dc.fit(net(), RULE, dc.methods.DeepCTRL(), seeds=[6], **kw)
    assert torch.equal(weights(a.model), weights(b.model))
    assert not torch.equal(weights(a.model), weights(c.model))


@pytest.mark.parametrize("method", [dc.methods.DeepCTRL(), dc.methods.LagrangianDual(0.1)])
def test_seed_trained_in_a_group_matches_seed_trained_alone(method):
    kw = dict(
        train=make_data(),
        val=make_data(64, 1),
        max_epochs=4,
        batch_size=32,
        input_noise=0.01,
        patience=1,
    )
    group = dc.fit(net(), RULE, method, seeds=list(range(10)), **kw)
    for s in (0, 7):
        alone = dc.fit(net(), RULE, method, seeds=[s], **kw)
        assert alone.epochs[0] == group.epochs[s]
        assert torch.allclose(weights(alone.model), weights(group.models[s]), atol=1e-5)


def test_early_stopping_stops_and_restores_the_best_epoch():
    X, y = make_data()
    Xv, yv = X[:64], -y[:64]  # validation labels contradict training: val loss soon rises
    result = dc.fit(
        net(),
        None,
        dc.methods.TaskOnly(),
        train=(X, y),
        val=(Xv, yv),
        max_epochs=200,
        patience=3,
        val_every=2,
        batch_size=32,
        seeds=[0, 1],
    )
    for s in range(2):
        history = result.history[s]
        best = min(history["val_loss"])
        assert result.best_epochs[s] == history["val_epoch"][history["val_loss"].index(best)]
        assert result.epochs[s] == result.best_epochs[s] + 3 * 2 < 200
        table = dc.sweep(result.models[s], None, Xv, yv, alphas=[0.0], metrics=("mae",))
        assert table["mae"][0] == pytest.approx(best, rel=1e-5)


def test_rule_only_validates_at_alpha_one():
    X, y = make_data()
    result = dc.fit(
        net(),
        RULE,
        dc.methods.RuleOnly(),
        train=(X, y),
        val=(X[:64], y[:64]),
        max_epochs=3,
        batch_size=64,
    )
    table = dc.sweep(result.model, RULE, X[:64], y[:64], alphas=[0.0, 1.0], metrics=("mae",))
    assert result.val_loss[0] == pytest.approx(table["mae"][1], rel=1e-5)
    assert result.val_loss[0] != pytest.approx(table["mae"][0], rel=1e-3)


class Shift(Perturbation):
    """Raises the feature by a fixed amount: no random draw, so the rule loss can be redone."""

    def __init__(self, amount: float) -> None:
        self.amount = amount

    def delta(self, values, generator=None):
        return torch.full_like(values, self.amount)

    def config(self):
        return {"kind": "shift", "amount": self.amount}


def test_plain_module_trains_without_alpha():
    """Full-batch steps of a plain module (no alpha) under L_task + 0.1 L_rule: the recorded
    losses and the final weights are those of Adam steps on the same objective."""
    X, y = (t.double() for t in make_data(64))
    torch.manual_seed(3)
    model = dc.mlp(3, 8, 1).double()
    rule = Monotonic(0, "increasing", perturbation=Shift(0.5))
    result = dc.fit(
        copy.deepcopy(model),
        rule,
        dc.methods.TaskAndRule(0.1),
        train=(X, y),
        max_epochs=3,
        batch_size=64,
        shuffle=False,
        reinit=False,
    )

    reference = copy.deepcopy(model)
    params = list(reference.parameters())
    m = [torch.zeros_like(p) for p in params]
    v = [torch.zeros_like(p) for p in params]
    X_p = X.clone()
    X_p[:, 0] += 0.5
    losses, rule_losses = [], []
    for t in range(1, 4):  # Adam, lr 1e-3, betas (0.9, 0.999), eps 1e-8, written out
        out = reference(X)
        rule_loss = torch.relu(out - reference(X_p)).mean()
        loss = (out - y).abs().mean() + 0.1 * rule_loss
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g, m_p, v_p in zip(params, grads, m, v, strict=True):
                m_p.mul_(0.9).add_(0.1 * g)
                v_p.mul_(0.999).add_(0.001 * g * g)
                p -= 1e-3 * (m_p / (1 - 0.9**t)) / ((v_p / (1 - 0.999**t)).sqrt() + 1e-8)
        losses.append(loss.item())
        rule_losses.append(rule_loss.item())
    assert min(rule_losses) > 0.01  # the rule term is part of every recorded loss
    assert result.history[0]["train_loss"] == pytest.approx(losses, rel=1e-6)
    assert result.history[0]["val_loss"] == [] and result.epochs == result.best_epochs == [3]
    trained, start = weights(result.model), weights(model)
    assert torch.allclose(trained, weights(reference), rtol=0, atol=1e-9)
    assert float((trained - start).abs().max()) > 2e-3  # three steps of about lr each


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


@pytest.mark.parametrize("name", ["progress", "shuffle", "reinit", "compile", "exact_sums"])
@pytest.mark.parametrize("value", ["no", 1, None])
def test_an_on_off_option_that_is_not_a_bool_is_refused_naming_it(name, value):
    with pytest.raises(ValueError, match=f"^{name} must be True or False, got {value!r}$"):
        dc.fit(net(), RULE, train=make_data(16), max_epochs=1, **{name: value})
    with pytest.raises(ValueError, match=f"^{name} must be True or False"):
        dc.fit_methods(net(), RULE, [dc.methods.TaskOnly()], train=make_data(16), **{name: value})


def test_numpy_bools_are_on_off_options_too():
    kw = dict(train=make_data(16), max_epochs=1, seeds=[0, 1], workers=1)
    plain = dc.fit(net(), RULE, shuffle=False, reinit=True, **kw)
    numpy = dc.fit(net(), RULE, shuffle=np.False_, reinit=np.True_, **kw)
    assert torch.equal(weights(plain.models[1]), weights(numpy.models[1]))


def test_energy_penalty_trains_and_reports_history():
    """rho is the paper's ratio at the shared initial weights; every seed's best validation
    loss is the minimum of its history, at its best epoch, and is the returned model's."""
    X, y = make_data()
    Xv, yv = X[:32], -y[:32]  # validation contradicts training: the last epoch is not the best
    rule = Penalty(lambda x, yh: (yh**2).sum(1) - (x[:, :1] ** 2).sum(1), tau=-0.2)
    torch.manual_seed(0)
    model = net()
    result = dc.fit(
        copy.deepcopy(model),
        rule,
        dc.methods.DeepCTRL(),
        train=(X, y),
        val=(Xv, yv),
        max_epochs=4,
        seeds=[0, 1],
        reinit=False,
    )
    with torch.no_grad():
        rule_0 = torch.relu(model(X, 1.0)[:, 0] ** 2 - X[:, 0] ** 2 + 0.2).mean()
        task_0 = (model(X, 0.0) - y).abs().mean()
    assert float(rule_0) > 0.01
    assert result.state["rho"].tolist() == pytest.approx([float(rule_0 / task_0)] * 2, rel=1e-5)
    for s in range(2):
        history = result.history[s]
        assert history["val_epoch"] == [1, 2, 3, 4] and len(history["train_loss"]) == 4
        best = min(history["val_loss"])
        assert result.val_loss[s] == best
        assert result.best_epochs[s] == history["val_epoch"][history["val_loss"].index(best)] < 4
        with torch.no_grad():
            again = (result.models[s](Xv, 0.0) - yv).abs().mean()
        assert float(again) == pytest.approx(best, rel=1e-5)
        assert not torch.equal(weights(result.models[s]), weights(model))
    # same start, own alpha draws and batch order: the seeds part ways
    assert result.history[0]["train_loss"] != result.history[1]["train_loss"]


def test_a_cosine_schedule_sets_every_epochs_learning_rate(monkeypatch):
    from deepctrl.engine.ensemble import FlatAdam

    seen = []
    original = FlatAdam.set_lr

    def record(self, lr):
        seen.append(lr)
        original(self, lr)

    monkeypatch.setattr(FlatAdam, "set_lr", record)
    X = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    dc.fit(
        model,
        dc.rules.Monotonic(0, "increasing"),
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, X[:, :1]),
        max_epochs=5,
        lr=0.1,
        lr_schedule="cosine",
    )
    # half a cosine from 0.1 to 0.1 / 50 over five epochs
    expected = [0.1 * (0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * e / 4))) for e in range(5)]
    assert seen == pytest.approx(expected, rel=1e-12)
    assert seen[0] == 0.1 and seen[-1] == pytest.approx(0.002)
    with pytest.raises(ValueError, match="lr_schedule must be one of"):
        dc.fit(model, train=(X, X[:, :1]), method=dc.methods.TaskOnly(), lr_schedule="step")


def test_reinit_warns_of_parameters_no_reset_reaches():
    class Scaled(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = torch.nn.Parameter(torch.full((1,), 3.0))
            self.inner = torch.nn.Linear(2, 1)

        def forward(self, x):
            return self.inner(x) * self.scale

    X = torch.randn(32, 2, generator=torch.Generator().manual_seed(0))
    fit = dict(train=(X, X[:, :1]), max_epochs=0, seeds=[0, 1], method=dc.methods.TaskOnly())
    with pytest.warns(UserWarning, match="reinit: parameters scale are in modules without"):
        result = dc.fit(Scaled(), None, **fit)
    first, second = result.models
    assert first.scale.item() == second.scale.item() == 3.0  # kept, in every seed
    assert not torch.equal(first.inner.weight, second.inner.weight)  # reset per seed
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.fit(Scaled(), None, **fit, reinit=False)
        dc.fit(dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1)), None, **fit)


def test_the_deepctrl_method_warns_of_a_model_that_takes_no_alpha():
    X = torch.randn(32, 2, generator=torch.Generator().manual_seed(0))
    rule = Monotonic(0, "increasing")
    message = "MLP.forward takes no alpha, so the alphas DeepCTRL draws do not reach"
    with pytest.warns(UserWarning, match=message):
        dc.fit(dc.mlp(2, 1), rule, train=(X, X[:, :1]), max_epochs=0, seeds=[0])
    with pytest.warns(UserWarning, match=message):
        dc.Objective(dc.mlp(2, 1), rule, dc.methods.DeepCTRL(), seed=0)
    with warnings.catch_warnings():  # a method that draws no alpha: a plain baseline
        warnings.simplefilter("error")
        dc.fit(
            dc.mlp(2, 1),
            rule,
            train=(X, X[:, :1]),
            max_epochs=0,
            seeds=[0],
            method=dc.methods.TaskAndRule(1.0),
        )
    with pytest.raises(ValueError, match="input_noise must be >= 0, got nan"):
        dc.fit(small_net(), rule, train=(X[:, :1].repeat(1, 3), X[:, :1]), input_noise=math.nan)


def test_a_forward_with_keyword_arguments_gets_alpha_by_name():
    class Gated(torch.nn.Module):  # alpha arrives in **options
        def __init__(self) -> None:
            super().__init__()
            self.data, self.rule = torch.nn.Linear(2, 1), torch.nn.Linear(2, 1)

        def forward(self, x, **options):
            alpha = torch.as_tensor(options["alpha"]).reshape(-1, 1)
            return alpha * self.rule(x) + (1 - alpha) * self.data(x)

    X = torch.randn(64, 2, generator=torch.Generator().manual_seed(0))
    rule = Monotonic(0, "increasing")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "takes no alpha"
        result = dc.fit(Gated(), rule, train=(X, X[:, :1]), max_epochs=2, seeds=[0])
        objective = dc.Objective(Gated(), rule, dc.methods.DeepCTRL(), seed=0)
    model = result.model
    table = dc.sweep(model, rule, X, X[:, :1], alphas=[0.0, 1.0], metrics=("mae",))
    with torch.no_grad():
        at = [model(X, alpha=a) for a in (0.0, 1.0)]
    assert table["mae"][0] == pytest.approx(float((at[0] - X[:, :1]).abs().mean()), rel=1e-5)
    assert table["mae"][1] == pytest.approx(float((at[1] - X[:, :1]).abs().mean()), rel=1e-5)
    assert objective(X, X[:, :1]).loss.requires_grad
