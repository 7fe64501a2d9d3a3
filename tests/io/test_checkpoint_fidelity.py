"""Model files give back the function that was saved, or refuse: output activations,
wrappers, configs JSON would change, and the order of the weights read back."""

import math

import pytest
import torch

import deepctrl as dc


def _model(out_activation=None):
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1, out_activation=out_activation))


def test_a_model_without_the_saved_sigmoid_is_refused(tmp_path):
    path = dc.save(_model("sigmoid"), tmp_path / "sigmoid.safetensors")
    with pytest.raises(ValueError, match="decision had out_activation='sigmoid', and this model's"):
        dc.load(path, _model())
    plain = dc.save(_model(), tmp_path / "plain.safetensors")
    with pytest.raises(
        ValueError, match="out_activation=None, and this model's has out_activation="
    ):
        dc.load(plain, _model("sigmoid"))
    x = torch.randn(4, 3)
    same = dc.load(path, _model("sigmoid"))
    assert torch.equal(same(x, 0.5), dc.load(path)(x, 0.5))
    assert ((same(x, 0.5) > 0) & (same(x, 0.5) < 1)).all()


def test_a_compiled_wrapper_loads_what_it_wraps(tmp_path):
    torch.manual_seed(0)
    trained = _model()
    path = dc.save(torch.compile(trained), tmp_path / "m.safetensors")
    wrapper = torch.compile(_model())
    assert dc.load(path, wrapper) is wrapper and not wrapper.training
    for name, value in trained.state_dict().items():
        assert torch.equal(wrapper._orig_mod.state_dict()[name], value), name


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"weights": {0: 0.2}}, r"config\['weights'\] has the key 0, .* the string '0'"),
        ({"seen": {1: "int", "1": "str"}}, r"config\['seen'\] has the key 1"),
        (
            {"grid": [{"x": 1}, {(1, 2): 3}]},
            r"config\['grid'\]\[1\] has the key \(1, 2\), .* nothing",
        ),
        ({"best": math.nan}, r"config\['best'\] is nan, which JSON cannot hold"),
        ({"losses": [1.0, float("inf")]}, r"config\['losses'\]\[1\] is inf"),
    ],
)
def test_a_config_json_would_change_is_refused(tmp_path, config, message):
    with pytest.raises(ValueError, match=message):
        dc.save(_model(), tmp_path / "m.safetensors", config)
    assert not (tmp_path / "m.safetensors").exists()


def test_the_weights_read_back_are_in_name_order(tmp_path):
    model = _model()
    path = dc.save(model, tmp_path / "m.safetensors", {"n": 1, "nested": {"a": [1, 2.5]}})
    ckpt = dc.read_checkpoint(path)
    assert list(ckpt.state_dict) == sorted(model.state_dict())
    assert ckpt.config == {"n": 1, "nested": {"a": [1, 2.5]}, "architecture": model.spec()}
