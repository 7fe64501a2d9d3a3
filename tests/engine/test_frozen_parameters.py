"""Parameters the user froze (``requires_grad=False``) are neither trained nor re-drawn by
``dc.fit``, on every path a stack takes, while the others train."""

import pytest
import torch
from torch import nn

import deepctrl as dc

RULE = dc.rules.Monotonic(0, "increasing")


def _data(n=128):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] + 0.1 * torch.randn(n, 1, generator=g)


def _frozen_encoder_model(encoder=lambda: dc.mlp(3, 8)):
    torch.manual_seed(0)
    model = dc.DeepCTRL(encoder(), encoder(), dc.mlp(16, 1))
    for p in model.data_encoder.parameters():
        p.requires_grad_(False)
    return model


@pytest.mark.parametrize(
    ("seeds", "path", "options"),
    [
        ([0, 1], "lowered", {}),
        ([0, 1], "lowered", {"reinit": False}),
        ([0], "lowered", {"compile": True}),
        ([0, 1], "loop", {"encoder": lambda: nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.2))}),
        ([0, 1], "vmap", {"encoder": lambda: nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8))}),
        (
            [0, 1],
            "vmap",
            {"encoder": lambda: nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8)), "reinit": False},
        ),
    ],
)
def test_frozen_parameters_keep_their_values_and_the_others_train(seeds, path, options):
    options = dict(options)
    compile_, reinit = options.pop("compile", False), options.pop("reinit", True)
    model = _frozen_encoder_model(**options)
    given = {k: v.clone() for k, v in model.state_dict().items()}
    result = dc.fit(
        model,
        RULE,
        dc.methods.DeepCTRL(rho=1.0),
        train=_data(),
        max_epochs=2,
        seeds=seeds,
        reinit=reinit,
        progress=False,
        compile=compile_,
    )
    assert result.path == path
    for trained in result.models:
        for name, value in trained.state_dict().items():
            if name.startswith("data_encoder.") and "running" not in name and "batches" not in name:
                assert torch.equal(value, given[name]), name
        assert not torch.equal(trained.rule_encoder[0].weight, given["rule_encoder.0.weight"])
        assert not next(trained.data_encoder.parameters()).requires_grad
    assert torch.equal(model.data_encoder[0].weight, given["data_encoder.0.weight"])


def test_a_model_with_every_parameter_frozen_is_refused():
    model = _frozen_encoder_model()
    model.requires_grad_(False)
    with pytest.raises(ValueError, match="every parameter of the model has requires_grad=False"):
        dc.fit(model, RULE, dc.methods.DeepCTRL(), train=_data(), max_epochs=1, progress=False)
