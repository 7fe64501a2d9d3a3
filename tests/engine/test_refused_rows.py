"""Rows a model cannot take fail at fit with one line naming them (train or val), whether
given as tensors, a Dataset or a DataLoader."""

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc

X = torch.randn(64, 3, generator=torch.Generator().manual_seed(0))
Y = -X[:, :1]
WIDE = torch.randn(32, 5, generator=torch.Generator().manual_seed(1))


def deepctrl():
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


@pytest.mark.parametrize(
    "val",
    [
        (WIDE, Y[:32]),
        TensorDataset(WIDE, Y[:32]),
        DataLoader(TensorDataset(WIDE, Y[:32]), batch_size=8),
    ],
    ids=["tensors", "dataset", "loader"],
)
@pytest.mark.parametrize("plain", [False, True], ids=["deepctrl", "mlp"])
def test_validation_rows_of_another_width_name_val(val, plain):
    net = dc.mlp(3, 8, 1) if plain else deepctrl()
    rule = None if plain else dc.Monotonic(0, "decreasing")
    method = dc.methods.TaskOnly() if plain else dc.methods.DeepCTRL(rho=1.0)
    with pytest.raises(ValueError, match=r"cannot take the val rows .*\(\(5,\), 'torch.float32'\)"):
        dc.fit(net, rule, method, train=(X, Y), val=val, max_epochs=1)


def test_a_training_dataloader_of_another_width_names_the_training_rows():
    train = DataLoader(TensorDataset(torch.randn(64, 5), Y), batch_size=8)
    with pytest.raises(ValueError, match=r"cannot take the training rows .*\(\(5,\),"):
        dc.fit(dc.mlp(3, 8, 1), None, dc.methods.TaskOnly(), train=train, max_epochs=1)


def test_only_fit_hints_at_weights_for_batches_of_three():
    triples = DataLoader(TensorDataset(X, Y, torch.ones(64)), batch_size=8)
    with pytest.raises(ValueError, match=r"batches of 3 parts.*\(sample weights need tensors\)"):
        dc.fit(dc.mlp(3, 8, 1), None, dc.methods.TaskOnly(), train=triples, max_epochs=1)
    with pytest.raises(ValueError, match=r"batches of 3 parts.*or pass \(X, y\) tensors$"):
        dc.sweep(deepctrl(), None, triples, alphas=[0.0])


def test_a_dict_where_the_model_takes_a_tensor_is_named_in_one_line():
    rule, method = dc.Monotonic(0, "decreasing"), dc.methods.DeepCTRL(rho=1.0)
    as_dict = {"x": X}
    with pytest.raises(ValueError, match=r"^the model cannot take the val rows .*'x'.*'shape'$"):
        dc.fit(deepctrl(), rule, method, train=(X, Y), val=(as_dict, Y), max_epochs=1)
    with pytest.raises(ValueError, match=r"^the model cannot take the training rows .*not dict$"):
        dc.fit(deepctrl(), rule, method, train=(as_dict, Y), max_epochs=1)
    with pytest.raises(ValueError, match=r"^the model cannot take the X rows .*not dict$"):
        dc.sweep(deepctrl(), None, as_dict, Y, [0.0])
    with pytest.raises(ValueError, match=r"^the model cannot take the given rows .*not dict$"):
        dc.Objective(dc.mlp(3, 8, 1), None, dc.methods.TaskOnly())(as_dict, Y)


@pytest.mark.parametrize("seeds", [[0], [0, 1, 2]])
def test_a_model_with_one_part_moved_to_another_dtype_is_refused_before_training(seeds):
    model = deepctrl()
    model.data_encoder.double()  # the rest stays float32: the model cannot run its own rows
    with pytest.raises(RuntimeError):
        model(X.double(), alpha=0.5)
    with pytest.raises(
        ValueError,
        match=r"^the model's parameters are of 2 dtypes \(torch.float32, torch.float64\); fit "
        r"trains a model of one: move it whole",
    ):
        dc.fit(
            model,
            dc.Monotonic(0, "decreasing"),
            dc.methods.DeepCTRL(rho=1.0),
            train=(X, Y),
            max_epochs=1,
            seeds=seeds,
        )
