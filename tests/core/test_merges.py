import json
import re
from pathlib import Path

import pytest
import torch

import deepctrl as dc
from deepctrl.core.merges import (
    AddMerge,
    ConcatMerge,
    DeepCTRLMerge,
    InputMerge,
    Merge,
    as_merge,
)

Z_R = torch.tensor([[1.0, 2.0], [-1.0, 0.5]])
Z_D = torch.tensor([[3.0, 4.0], [2.0, -2.0]])
CLASSES = {"deepctrl": DeepCTRLMerge, "add": AddMerge, "concat": ConcatMerge, "input": InputMerge}


class Gated(Merge):
    """A merge of one's own: cat(a z_r, (1 - a) z_d, a), the decision block reads alpha too."""

    name = "gated"

    def latent(self, z_r, z_d, a):
        return torch.cat([a * z_r, (1 - a) * z_d, a.expand(*z_d.shape[:-1], 1)], dim=-1)


def test_each_merge_latent_against_hand_computed_values():
    a = torch.tensor(0.25)
    assert DeepCTRLMerge().latent(Z_R, Z_D, a).tolist() == [
        [0.25, 0.5, 2.25, 3.0],
        [-0.25, 0.125, 1.5, -1.5],
    ]
    assert AddMerge().latent(Z_R, Z_D, a).tolist() == [[2.5, 3.5], [1.25, -1.375]]
    assert ConcatMerge().latent(Z_R, Z_D, a).tolist() == [
        [1.0, 2.0, 3.0, 4.0],
        [-1.0, 0.5, 2.0, -2.0],
    ]
    assert InputMerge().latent(Z_R, Z_D, a).tolist() == Z_D.tolist()
    assert InputMerge().encoder_input(Z_R, a).tolist() == [[1.0, 2.0, 0.25], [-1.0, 0.5, 0.25]]
    per_row = torch.tensor([[0.0], [1.0]])  # one alpha per row
    assert DeepCTRLMerge().latent(Z_R, Z_D, per_row).tolist() == [
        [0.0, 0.0, 3.0, 4.0],
        [-1.0, 0.5, 0.0, -0.0],
    ]
    assert AddMerge().latent(Z_R, Z_D, per_row).tolist() == [[3.0, 4.0], [-1.0, 0.5]]
    assert InputMerge().encoder_input(Z_R, per_row).tolist() == [[1.0, 2.0, 0.0], [-1.0, 0.5, 1.0]]
    assert Gated().latent(Z_R, Z_D, per_row).tolist() == [
        [0.0, 0.0, 3.0, 4.0, 0.0],
        [-1.0, 0.5, 0.0, -0.0, 1.0],
    ]


def test_decision_width_names_and_flags():
    assert [CLASSES[n]().decision_width(6) for n in CLASSES] == [12, 6, 12, 6]
    assert Gated().decision_width(6) == 13
    assert [CLASSES[n].name for n in CLASSES] == list(CLASSES)
    assert [CLASSES[n].uses_rule_encoder for n in CLASSES] == [True, True, True, False]
    assert repr(as_merge("concat")) == "ConcatMerge()"

    class Nameless(Merge):
        def latent(self, z_r, z_d, a):
            return z_r - z_d

    assert Nameless().name == "Nameless" and Nameless().decision_width(6) == 6


@pytest.mark.parametrize("merge", [DeepCTRLMerge(), AddMerge()])
def test_first_layer_is_the_layer_on_the_latent_at_every_alpha(merge):
    torch.manual_seed(0)
    layer = torch.nn.Linear(merge.decision_width(2), 3).double()
    z_r, z_d, alphas = Z_R.double(), Z_D.double(), torch.tensor([0.0, 0.3, 1.0, 1.4]).double()
    fast = merge.first_layer(layer, z_r, z_d, alphas)
    assert fast.shape == (4, 2, 3)
    for i, a in enumerate(alphas):
        torch.testing.assert_close(fast[i], layer(merge.latent(z_r, z_d, a)), rtol=0, atol=1e-12)


@pytest.mark.parametrize("merge", [ConcatMerge(), InputMerge(), Gated()])
def test_merges_that_cannot_mix_the_first_layer_say_so(merge):
    layer = torch.nn.Linear(4, 3)
    assert merge.first_layer(layer, Z_R, Z_D, torch.tensor([0.0, 1.0])) is None


def _model(merge, seed=0):
    torch.manual_seed(seed)
    width = as_merge(merge).decision_width(6)
    if not as_merge(merge).uses_rule_encoder:
        return dc.DeepCTRL(
            dc.mlp(4, 8, 6), None, dc.mlp(width, 3), shared=dc.mlp(3, 3), merge=merge
        )
    return dc.DeepCTRL(
        dc.mlp(3, 8, 6), dc.mlp(3, 8, 6), dc.mlp(width, 5, 3), merge=merge, residual=True
    )


@pytest.mark.parametrize("name", list(CLASSES))
def test_a_name_and_its_merge_object_give_identical_outputs(name):
    by_name, by_object = _model(name), _model(CLASSES[name]())
    assert type(by_name.merge) is CLASSES[name] and by_name.merge.name == name
    x, alphas = torch.randn(7, 3), torch.tensor([0.0, 0.35, 1.0, 1.2])
    for alpha in (0.0, 0.35, torch.linspace(0, 1, 7)):
        assert torch.equal(by_name(x, alpha), by_object(x, alpha))
    assert torch.equal(by_name.forward_alphas(x, alphas), by_object.forward_alphas(x, alphas))


@pytest.mark.parametrize("name", list(CLASSES))
def test_spec_names_the_merge_and_rebuilds_it(name):
    model = _model(name)
    spec = json.loads(json.dumps(model.spec()))
    assert spec["merge"] == name
    rebuilt = dc.DeepCTRL.from_spec(spec)
    assert type(rebuilt.merge) is CLASSES[name]
    rebuilt.load_state_dict(model.state_dict())
    x = torch.randn(4, 3)
    assert torch.equal(rebuilt(x, 0.6), model(x, 0.6))


def test_a_spec_written_before_merges_were_objects_still_loads():
    spec = {
        "merge": "add",
        "residual": False,
        "shared": None,
        "data_encoder": {"dims": [2, 4], "out_activation": None},
        "rule_encoder": {"dims": [2, 4], "out_activation": None},
        "decision": {"dims": [4, 1], "out_activation": "sigmoid"},
    }
    model = dc.DeepCTRL.from_spec(spec)
    assert isinstance(model.merge, AddMerge) and model.spec() == spec


def test_custom_merges_have_no_spec_and_bad_names_are_refused():
    assert _model(Gated()).spec() is None
    for bad in ("mean", "Add", 3):
        with pytest.raises(ValueError, match=r"one of \('deepctrl', 'add', 'concat', 'input'\)"):
            dc.DeepCTRL(dc.mlp(2, 2), dc.mlp(2, 2), dc.mlp(4, 1), merge=bad)
    with pytest.raises(TypeError, match="abstract"):
        Merge()


def test_the_documented_custom_merge_runs(capsys):
    page = (Path(__file__).resolve().parents[2] / "docs" / "core-api.md").read_text()
    block = re.search(
        r"```python\n(import torch\nimport deepctrl as dc\nfrom deepctrl.core."
        r"merges import Merge\n.*?)```",
        page,
        re.S,
    ).group(1)
    namespace: dict = {}
    exec(compile(block, "core-api.md", "exec"), namespace)
    assert capsys.readouterr().out.strip() == "torch.Size([4, 1])"
    model = namespace["model"]
    assert model.merge.name == "gated" and model.decision[0].in_features == 33
