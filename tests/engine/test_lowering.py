import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils import parametrizations

import deepctrl as dc
from deepctrl.core.calls import predict
from deepctrl.core.layers import OneHotLinear, Residual
from deepctrl.core.merges import Merge
from deepctrl.engine.ensemble import Stack
from deepctrl.engine.lowering import ExactSums, lower, twin_pairs


class Named(nn.Linear):
    """A linear layer with its own __init__ and an attribute, and Linear's forward."""

    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__(d_in, d_out)
        self.note = "mine"


class Doubled(nn.Linear):
    def forward(self, x):
        return 2 * super().forward(x)


class Tagged(dc.DeepCTRL):
    tag = "a DeepCTRL that only adds an attribute"


class Remixed(dc.DeepCTRL):
    def mix(self, z_r, z_d, alpha):
        return super().mix(z_r, z_d, alpha) * 0.5


class Shifted(nn.ReLU):
    pass


class LastSoftmax(nn.LogSoftmax):
    pass


class Gated(Merge):
    name = "gated"

    def latent(self, z_r, z_d, a):
        return torch.cat([a * z_r, (1 - a) * z_d, a.expand(*z_d.shape[:-1], 1)], dim=-1)


def _subclassed(dtype: torch.dtype = torch.float32) -> nn.Module:
    return Tagged(
        nn.Sequential(Named(3, 8), Shifted(), Named(8, 4)),
        nn.Sequential(Named(3, 8), Shifted(), Named(8, 4)),
        Residual(nn.Sequential(Named(9, 9), nn.Tanh())),
        merge=Gated(),
    ).to(dtype)


def _classifier() -> nn.Module:
    return dc.DeepCTRL(dc.mlp(3, 6), dc.mlp(3, 6), nn.Sequential(Named(12, 4), LastSoftmax(dim=-1)))


def _plain() -> nn.Module:
    return nn.Sequential(Named(3, 5), nn.ReLU(), Named(5, 2))


def _doubled() -> nn.Module:
    return nn.Sequential(Named(3, 4), Doubled(4, 2))


def _remixed() -> nn.Module:
    return Remixed(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 2))


def _weight_norm() -> nn.Module:
    return nn.Sequential(parametrizations.weight_norm(nn.Linear(3, 2)))


def _stacked_against_eager(make, dtype: torch.dtype) -> tuple[Stack, float]:
    torch.manual_seed(0)
    models = [make().to(dtype) for _ in range(3)]
    stack = Stack(models)
    x = torch.randn(3, 6, 3, dtype=dtype)
    alpha = torch.tensor([0.0, 0.4, 1.2], dtype=dtype)
    out = stack(x, alpha)
    eager = torch.stack([predict(m, x[i], float(alpha[i])) for i, m in enumerate(models)])
    return stack, float((out - eager).detach().abs().max())


@pytest.mark.parametrize(("dtype", "tol"), [(torch.float32, 1e-6), (torch.float64, 1e-12)])
def test_subclasses_keeping_their_parents_forward_lower_and_match_eager(dtype, tol):
    for make in (_subclassed, _classifier, _plain):
        assert lower(make()) is not None
        stack, diff = _stacked_against_eager(make, dtype)
        assert stack.path == "lowered"
        assert diff <= tol


def test_subclasses_overriding_forward_are_not_lowered_and_keep_their_forward():
    for module in (
        Doubled(3, 2),
        _doubled(),
        _remixed(),
        nn.Sequential(dc.mlp(3, 4), LastSoftmax(dim=1)),
    ):
        assert lower(module) is None
    for make in (_doubled, _remixed):
        stack, diff = _stacked_against_eager(make, torch.float32)
        assert stack.path == "vmap" and diff <= 1e-6


def test_a_parametrized_linear_is_not_lowered():
    layer = parametrizations.weight_norm(nn.Linear(3, 2))
    assert isinstance(layer, nn.Linear) and lower(layer) is None
    stack, diff = _stacked_against_eager(_weight_norm, torch.float32)
    assert stack.path == "vmap" and diff <= 1e-6


def test_twin_encoders_need_the_same_architecture():
    assert len(twin_pairs(_subclassed())) == 4
    mixed = dc.DeepCTRL(nn.Sequential(Named(3, 4)), nn.Sequential(nn.Linear(3, 4)), dc.mlp(8, 1))
    assert lower(mixed) is not None and twin_pairs(mixed) == []
    one_encoder = dc.DeepCTRL(dc.mlp(4, 4), None, dc.mlp(4, 1), merge="input")
    assert lower(one_encoder) is not None and twin_pairs(one_encoder) == []


def test_exact_sums_lower_subclasses_too():
    model = _subclassed(torch.float64)
    stack = Stack([model], exact=ExactSums())
    x, alpha = torch.randn(1, 16, 3, dtype=torch.float64), torch.tensor([0.3], dtype=torch.float64)
    out = stack(x, alpha)
    out.square().sum().backward()
    model(x[0], 0.3).square().sum().backward()
    assert stack.path == "lowered" and stack.twins
    torch.testing.assert_close(out[0], model(x[0], 0.3), rtol=0, atol=1e-12)
    for k, p in model.named_parameters():
        torch.testing.assert_close(stack.params[k].grad[0], p.grad, rtol=0, atol=1e-12, msg=k)


def _fit(model: nn.Module, eager: bool, monkeypatch: pytest.MonkeyPatch) -> dc.FitResult:
    if eager:  # every seed's plain forward, as benchmarks/encoder_paths.py forces a path
        monkeypatch.setattr(Stack, "_choose", lambda self, x, alpha: "loop")
    X = torch.randn(96, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0])
    result = dc.fit(
        model,
        rule,
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, X.sum(1, True)),
        max_epochs=3,
        seeds=[0, 1],
        batch_size=32,
        reinit=False,
    )
    monkeypatch.undo()
    return result


def test_a_custom_merge_trains_eagerly_and_lowered_alike(monkeypatch):
    torch.manual_seed(0)
    start = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(9, 6, 1), merge=Gated())
    start = start.double()
    eager, lowered = _fit(start, True, monkeypatch), _fit(start, False, monkeypatch)
    assert (eager.path, lowered.path) == ("loop", "lowered")
    moved = (lowered.models[0].decision[0].weight - start.decision[0].weight).detach()
    assert float(moved.abs().max()) > 1e-3
    for e, low in zip(eager.models, lowered.models, strict=True):
        assert isinstance(low.merge, Gated)
        for (k, p), q in zip(e.named_parameters(), low.parameters(), strict=True):
            torch.testing.assert_close(p, q, rtol=0, atol=1e-12, msg=k)
    x = torch.randn(5, 3, dtype=torch.float64)
    model = lowered.models[0]
    assert not torch.allclose(model(x, 0.0), model(x, 1.0))
    torch.testing.assert_close(
        model.forward_alphas(x, [0.0, 0.5, 1.0])[1], model(x, 0.5), rtol=0, atol=1e-12
    )


def _one_hot_model() -> nn.Module:
    def encoder() -> nn.Module:
        layers = dc.mlp(6, 8, 4)
        layers[0] = OneHotLinear.replacing(layers[0], ((1, 5),))
        return layers

    return dc.DeepCTRL(encoder(), encoder(), dc.mlp(8, 1))


def test_one_hot_first_layers_lower_as_lookups_and_match_eager():
    torch.manual_seed(0)
    models = [_one_hot_model().double() for _ in range(3)]
    # lowered, the encoders apart: twins would copy the wide input for the second half
    assert lower(models[0]) is not None and twin_pairs(models[0]) == []
    stack = Stack(models)
    x = torch.randn(3, 7, 6, dtype=torch.float64)
    x[..., 1:5] = F.one_hot(torch.randint(0, 4, (3, 7)), 4).double()
    x[:, 0, 1:5] = 0.0  # an unseen category
    alpha = torch.tensor([0.0, 0.4, 1.2], dtype=torch.float64)
    out = stack(x, alpha)
    out.square().sum().backward()
    assert stack.path == "lowered"
    for i, m in enumerate(models):
        eager = m(x[i], float(alpha[i]))
        torch.testing.assert_close(out[i], eager, rtol=0, atol=1e-12)
        eager.square().sum().backward()
        for k, p in m.named_parameters():
            torch.testing.assert_close(stack.params[k].grad[i], p.grad, rtol=0, atol=1e-12, msg=k)
