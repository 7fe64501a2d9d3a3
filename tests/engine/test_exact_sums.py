import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.engine.lowering import ExactSums, lower


def _net() -> dc.DeepCTRL:
    # encoders of different shapes: no twin views, so plain named parameters run it
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 5, 8), dc.mlp(16, 4, 1))


def _stacked(model: nn.Module, dtype: torch.dtype) -> dict[str, torch.Tensor]:
    return {
        k: v.detach().to(dtype).unsqueeze(0).requires_grad_(True)
        for k, v in model.named_parameters()
    }


def _grads(exact: ExactSums | None, dtype: torch.dtype, x: torch.Tensor) -> dict:
    model = _net()
    params = _stacked(model, dtype)
    f = lower(model, exact=exact)
    f(params, x.to(dtype)[None], torch.tensor([0.3], dtype=dtype)).square().sum().backward()
    return {k: v.grad for k, v in params.items()}


def test_exact_gradients_are_the_float64_gradients_rounded_once():
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(1))
    reference = _grads(None, torch.float64, x)  # float64 autograd, rounded below
    exact = _grads(ExactSums(), torch.float32, x)
    plain = _grads(None, torch.float32, x)
    differs = 0
    for k, ref in reference.items():
        # the per-row terms are float32 products either way: agreement to float32 rounding
        torch.testing.assert_close(exact[k], ref.float(), rtol=2e-6, atol=1e-9)
        differs += int(not torch.equal(plain[k], exact[k]))
    assert differs > 0  # float32 sums round otherwise somewhere


def test_exact_gradients_do_not_depend_on_how_the_rows_are_split():
    # the sum over a batch equals the sum of its two halves' float64 sums, rounded once
    x = torch.randn(64, 3, generator=torch.Generator().manual_seed(2))
    model = _net()
    params = _stacked(model, torch.float32)
    whole = ExactSums(reduce=lambda t: None)
    f = lower(model, exact=whole)
    alpha = torch.tensor([0.7])
    for part in (x[:40], x[40:]):
        f(params, part[None], alpha).square().sum().backward()
    for v in params.values():
        v.grad = torch.zeros_like(v)
    whole.finish()
    split = dict(params)
    params = _stacked(model, torch.float32)
    exact_one = lower(model, exact=ExactSums())
    exact_one(params, x[None], alpha).square().sum().backward()
    for k, v in params.items():
        assert torch.equal(v.grad, split[k].grad), k


def test_exact_linear_passes_a_float64_gradient_check():
    g = torch.Generator().manual_seed(3)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    f = lower(model, exact=ExactSums())
    names = [k for k, _ in model.named_parameters()]
    x = torch.randn(2, 5, 3, dtype=torch.float64, generator=g, requires_grad=True)
    weights = [
        torch.randn(2, *p.shape, dtype=torch.float64, generator=g, requires_grad=True)
        for p in model.parameters()
    ]

    def run(x, *w):
        return f(dict(zip(names, w, strict=True)), x, torch.zeros(2, dtype=torch.float64))

    assert torch.autograd.gradcheck(run, (x, *weights))


def test_exact_sums_refuse_a_model_off_the_matrix_product_path():
    model = dc.DeepCTRL(nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4)), dc.mlp(3, 4), dc.mlp(8, 1))
    X = torch.randn(32, 3)
    with pytest.raises(ValueError, match="exact_sums=True needs an MLP-made model"):
        dc.fit(
            model,
            dc.rules.Monotonic(0, "increasing"),
            train=(X, X[:, :1]),
            max_epochs=1,
            seeds=[0, 1],
            exact_sums=True,
        )


def test_exact_sums_train_to_float_rounding_of_the_default():
    g = torch.Generator().manual_seed(4)
    X = torch.randn(200, 3, generator=g)
    y = X[:, :1] - X[:, 1:2]
    rule = dc.rules.Monotonic(0, "increasing")
    runs = [
        dc.fit(
            _net(),
            rule,
            dc.methods.DeepCTRL(rho=1.0),
            train=(X, y),
            max_epochs=2,
            batch_size=32,
            seeds=[0],
            exact_sums=exact,
        )
        for exact in (False, True)
    ]
    for k, v in runs[0].model.state_dict().items():
        torch.testing.assert_close(runs[1].model.state_dict()[k], v, rtol=0, atol=1e-3)
