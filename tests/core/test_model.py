import pytest
import torch

import deepctrl as dc
from deepctrl.core.merges import as_merge


def small(merge="deepctrl", residual=False):
    torch.manual_seed(0)
    if merge == "input":
        return dc.DeepCTRL(dc.mlp(4, 8, 6), None, dc.mlp(6, 3), merge="input")
    width = as_merge(merge).decision_width(6)
    return dc.DeepCTRL(
        dc.mlp(3, 8, 6), dc.mlp(3, 8, 6), dc.mlp(width, 3), merge=merge, residual=residual
    )


@pytest.mark.parametrize("merge", ["deepctrl", "add", "concat", "input"])
def test_output_shapes(merge):
    model = small(merge)
    x = torch.randn(5, 3)
    assert model(x, 0.3).shape == (5, 3)
    assert model(x, torch.full((5,), 0.3)).shape == (5, 3)
    assert model.forward_alphas(x, [0.0, 0.5, 1.0]).shape == (3, 5, 3)


def _grad_norms(model, alpha):
    model.zero_grad()
    model(torch.randn(7, 3), alpha).pow(2).sum().backward()
    norm = lambda m: sum(float(p.grad.abs().sum()) for p in m.parameters())  # noqa: E731
    return norm(model.rule_encoder), norm(model.data_encoder)


def test_alpha_zero_cuts_rule_encoder_and_alpha_one_cuts_data_encoder():
    model = small()
    rule_g, data_g = _grad_norms(model, 0.0)
    assert rule_g == 0.0 and data_g > 0
    rule_g, data_g = _grad_norms(model, 1.0)
    assert data_g == 0.0 and rule_g > 0


@pytest.mark.parametrize("merge", ["deepctrl", "add", "concat", "input"])
def test_per_sample_alpha_equals_scalar_alpha(merge):
    model, x = small(merge), torch.randn(6, 3)
    assert torch.allclose(model(x, torch.full((6,), 0.37)), model(x, 0.37), atol=1e-6)
    mixed = torch.tensor([0.0, 0.2, 0.4, 0.6, 0.8, 1.0])
    rows = torch.stack([model(x[i : i + 1], float(a))[0] for i, a in enumerate(mixed)])
    assert torch.allclose(model(x, mixed), rows, atol=1e-6)


@pytest.mark.parametrize("merge", ["deepctrl", "add", "concat", "input"])
def test_forward_alphas_equals_separate_forwards(merge):
    model, x = small(merge, residual=merge != "input"), torch.randn(9, 3)
    alphas = [0.0, 0.25, 1.0, 1.3]
    many = model.forward_alphas(x, alphas)
    for i, a in enumerate(alphas):
        assert torch.allclose(many[i], model(x, a), atol=1e-6)


def test_alpha_beyond_one_extrapolates_the_latent_linearly():
    model, x = small(), torch.randn(4, 3)
    z_r, z_d = model.encode(x)
    z = [model.mix(z_r, z_d, a) for a in (0.5, 1.0, 1.5)]
    assert torch.allclose(z[2] - z[1], z[1] - z[0], atol=1e-6)
    assert torch.isfinite(model(x, 1.5)).all() and torch.isfinite(model(x, -0.5)).all()


def test_residual_adds_input():
    model, x = small(residual=True), torch.randn(4, 3)
    expected = model.decision(model.mix(*model.encode(x), 0.2))
    assert torch.allclose(model(x, 0.2) - x, expected, atol=1e-6)


def test_concat_ignores_alpha():
    model, x = small("concat"), torch.randn(4, 3)
    assert torch.equal(model(x, 0.0), model(x, 1.0))


def test_mlp_layers_and_parameter_count():
    net = dc.mlp(4, 64, 16)
    assert [type(m).__name__ for m in net] == ["Linear", "ReLU", "Linear"]
    assert sum(p.numel() for p in net.parameters()) == 4 * 64 + 64 + 64 * 16 + 16
    assert type(dc.mlp(3, 1, out_activation="sigmoid")[-1]).__name__ == "Sigmoid"


def test_spec_round_trip_rebuilds_same_architecture():
    model = dc.DeepCTRL(
        dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 4), shared=dc.mlp(4, 4), residual=True
    )
    rebuilt = dc.DeepCTRL.from_spec(model.spec())
    rebuilt.load_state_dict(model.state_dict())
    x = torch.randn(3, 4)
    assert torch.equal(rebuilt(x, 0.4), model(x, 0.4))
    assert dc.DeepCTRL(torch.nn.Linear(2, 2), dc.mlp(2, 2), dc.mlp(4, 1)).spec() is None


def test_bad_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match="merge must be one of"):
        dc.DeepCTRL(dc.mlp(2, 2), dc.mlp(2, 2), dc.mlp(4, 1), merge="mean")
    with pytest.raises(ValueError, match="rule_encoder=None"):
        dc.DeepCTRL(dc.mlp(3, 2), dc.mlp(2, 2), dc.mlp(2, 1), merge="input")
    with pytest.raises(ValueError, match="positive"):
        dc.mlp(3, 0)
    with pytest.raises(ValueError, match=r"shape \(batch,\)"):
        small()(torch.randn(2, 3), torch.zeros(2, 2))


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")
def test_torchscript_is_refused_with_one_line_and_torch_export_serves_per_row_alpha():
    model = small()
    with pytest.raises(TypeError, match="torch.export.export or deepctrl.to_onnx"):
        torch.jit.script(model)
    x, alpha = torch.randn(5, 3), torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0])
    program = torch.export.export(model, (x,), {"alpha": alpha})
    torch.testing.assert_close(program.module()(x, alpha=alpha), model(x, alpha))


@pytest.mark.parametrize("decision", [dc.mlp(8, 2), torch.nn.Linear(8, 2)])
def test_a_decision_block_of_the_wrong_width_is_named_in_one_line(decision):
    model = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), decision)  # the merge gives 8 + 8
    x = torch.zeros(3, 4)
    for call in (lambda: model(x, 0.5), lambda: model.forward_alphas(x, [0.0, 1.0])):
        with pytest.raises(ValueError, match="takes 8 features, but merge='deepctrl' gives it 16"):
            call()


def test_the_width_check_passes_matching_and_lazy_decision_blocks():
    x = torch.zeros(3, 4)
    added = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), torch.nn.Linear(8, 2), merge="add")
    assert added(x, 0.5).shape == (3, 2)
    lazy = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), torch.nn.Sequential(torch.nn.LazyLinear(2)))
    assert lazy(x, 0.5).shape == (3, 2)
