"""What practitioners hand the core API and what it does with it: inputs with a time axis,
models that take alpha anywhere in their signature, validation that never gives a number,
empty data, settings out of range, and files of other precisions."""

from __future__ import annotations

import json

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc

RULE = dc.rules.Monotonic(0, "increasing")


def net(outputs: int = 1) -> dc.DeepCTRL:
    torch.manual_seed(0)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, outputs))


def data(n: int = 64) -> tuple[torch.Tensor, torch.Tensor]:
    X = torch.randn(n, 3, generator=torch.Generator().manual_seed(0))
    return X, 2 * X[:, :1]


def test_an_mlp_model_trains_on_inputs_with_a_time_axis():
    X = torch.randn(60, 4, 3, generator=torch.Generator().manual_seed(1))
    y = X[..., :1].cumsum(dim=1)
    result = dc.fit(net(), RULE, train=(X, y), max_epochs=3, seeds=[0, 1], batch_size=16)
    assert result.epochs == [3, 3]
    for model in result.models:
        out = model(X, 0.5)
        assert out.shape == (60, 4, 1) and torch.isfinite(out).all()
    # each seed is the seed trained alone
    alone = dc.fit(net(), RULE, train=(X, y), max_epochs=3, seeds=[1], batch_size=16)
    torch.testing.assert_close(alone.models[0](X, 0.5), result.models[1](X, 0.5))


class Tempered(nn.Module):
    """A model whose forward takes alpha after another parameter; it records what it got."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = net()
        self.seen: list[float] = []

    def forward(self, x: torch.Tensor, temperature: float = 1.0, alpha: float = 0.0):
        self.seen.append(float(torch.as_tensor(alpha).flatten()[0]))
        return self.inner(x, alpha) / temperature


def test_alpha_reaches_a_forward_that_takes_it_anywhere():
    X, y = data()
    model = Tempered()
    objective = dc.Objective(model, RULE, dc.methods.DeepCTRL(rho=1.0))
    out = objective(X, y, alpha=0.7)
    assert model.seen[-1] == pytest.approx(0.7)
    torch.testing.assert_close(out.y_hat, model.inner(X, 0.7))
    table = dc.sweep(model, RULE, X, y, alphas=[0.25])
    assert model.seen[-1] == pytest.approx(0.25) and table["alpha"] == [0.25]
    # trained through its signature, it learns what the network inside learns alone
    wrapped = dc.fit(Tempered(), RULE, train=(X, y), max_epochs=2).models[0]
    plain = dc.fit(net(), RULE, train=(X, y), max_epochs=2).models[0]
    torch.testing.assert_close(wrapped.inner(X, 0.3), plain(X, 0.3), rtol=1e-5, atol=1e-6)


def test_validation_on_the_last_epoch_and_a_warning_when_it_never_gives_a_number():
    X, y = data()
    result = dc.fit(net(), RULE, train=(X, y), val=(X, y), max_epochs=5, val_every=10)
    assert result.best_epochs == [5] and torch.isfinite(torch.tensor(result.val_loss)).all()
    nan_val = DataLoader(TensorDataset(X, torch.full_like(y, float("nan"))), batch_size=16)
    with pytest.warns(RuntimeWarning, match=r"seed\(s\) \[0\] never reached a finite"):
        result = dc.fit(net(), RULE, train=(X, y), val=nan_val, max_epochs=2)
    assert result.best_epochs == [0]


def test_validation_targets_are_checked_before_training():
    X, y = data()
    with pytest.raises(ValueError, match=r"^val: the target has 3 values per row"):
        dc.fit(net(), RULE, train=(X, y), val=(X, torch.randn(64, 3)), max_epochs=1)
    labels = torch.arange(64) % 3
    with pytest.raises(ValueError, match=r"^val: task_loss='cross_entropy': labels must be in"):
        dc.fit(
            net(3),
            RULE,
            train=(X, labels),
            val=(X, labels + 3),
            task_loss="cross_entropy",
            max_epochs=1,
        )


def test_a_rule_on_an_output_the_model_lacks_is_refused():
    X, y = data()
    wrong = dc.rules.Monotonic(0, "increasing", output=1)
    with pytest.raises(ValueError, match="rule output index 1 is out of range for a model with 1"):
        dc.fit(net(), wrong, train=(X, y), max_epochs=1)


def test_empty_data_is_refused_in_one_line():
    X, y = data()
    dropped = DataLoader(TensorDataset(X, y), batch_size=128, drop_last=True)
    with pytest.raises(ValueError, match="the training data has no rows .*drop_last=True"):
        dc.fit(net(), RULE, train=dropped, max_epochs=1)
    with pytest.raises(ValueError, match="the data is an empty Dataset"):
        dc.fit(net(), RULE, train=TensorDataset(X[:0], y[:0]), max_epochs=1)
    with pytest.raises(ValueError, match="the batch has no rows"):
        dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0))(X[:0], y[:0])
    empty = DataLoader(TensorDataset(X[:0], y[:0]), batch_size=4)
    with pytest.raises(ValueError, match="the data has no rows"):
        dc.sweep(net(), RULE, empty, alphas=[0.0])


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"lr": float("nan")}, "lr must be a finite number > 0, got nan"),
        ({"lr": -1e-3}, "lr must be a finite number > 0, got -0.001"),
        ({"patience": 0}, "patience must be an integer >= 1, got 0"),
        ({"batch_size": 32.0}, "batch_size must be an integer >= 1, got 32.0"),
        ({"val_every": 0}, "val_every must be an integer >= 1, got 0"),
        ({"max_epochs": -1}, "max_epochs must be an integer >= 0, got -1"),
        ({"chunk_batches": 0}, "chunk_batches must be >= 1, got 0"),
    ],
)
def test_each_bad_option_is_named(options, message):
    X, y = data()
    with pytest.raises(ValueError, match=message):
        dc.fit(net(), RULE, train=(X, y), **{"max_epochs": 1, **options})


def test_priors_outside_the_training_range_are_refused():
    with pytest.raises(ValueError, match=r"Fixed needs a in \[0, 1\].*got 1.5"):
        dc.priors.Fixed(1.5)
    with pytest.raises(ValueError, match="prior must be a deepctrl prior .*got 0.5"):
        dc.methods.DeepCTRL(prior=0.5)


def test_a_model_file_keeps_its_precision(tmp_path):
    model = net().double()
    path = dc.save(model, tmp_path / "m.safetensors")
    loaded = dc.load(path)
    assert next(loaded.parameters()).dtype == torch.float64
    x = torch.randn(5, 3, dtype=torch.float64)
    assert torch.equal(loaded(x, 0.3), model.eval()(x, 0.3))
    with pytest.raises(ValueError, match="config key 'architecture' is reserved"):
        dc.save(net(), tmp_path / "odd.safetensors", {"architecture": "mine"})
    # a file whose architecture another tool wrote
    from safetensors.torch import save_file

    from deepctrl.io.file_format import model_file_metadata

    odd = tmp_path / "odd.safetensors"
    meta = {**model_file_metadata(), "config": json.dumps({"architecture": "mine"})}
    save_file({k: v.contiguous() for k, v in net().state_dict().items()}, odd, metadata=meta)
    with pytest.raises(ValueError, match="its config's 'architecture' is not one deepctrl wrote"):
        dc.load(odd)


def test_seeds_must_be_integers():
    X, y = data()
    for seeds in (3, [0.5, 0.7], "01"):
        with pytest.raises(ValueError, match="seeds must be a list of distinct integers"):
            dc.fit(net(), RULE, train=(X, y), max_epochs=1, seeds=seeds)


def test_wrong_bce_targets_are_blamed_on_the_targets():
    X, _ = data()
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1, out_activation="sigmoid"))
    with pytest.raises(ValueError, match=r"task_loss='bce' needs targets in \[0, 1\], got 0 to 5"):
        dc.fit(model, RULE, train=(X, torch.arange(64.0) % 6), task_loss="bce", max_epochs=1)


def test_a_compiled_model_saves_what_it_wraps(tmp_path):
    model = net()
    path = dc.save(torch.compile(model), tmp_path / "m.safetensors")
    x = torch.randn(4, 3)
    assert torch.equal(dc.load(path)(x, 0.5), model.eval()(x, 0.5))


def test_inputs_the_model_cannot_take_are_named():
    X, y = data()
    wider = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 1))
    with pytest.raises(
        ValueError, match=r"cannot take the training rows .*\(3,\), 'torch\.float32'"
    ):
        dc.fit(wider, RULE, train=(X, y), max_epochs=1)
    with pytest.raises(ValueError, match=r"one row: \(\(3,\), 'torch\.int64'\)\): Input dtypes"):
        dc.fit(net(), RULE, train=(X.long(), y), max_epochs=1)


def test_the_objective_takes_alphas_from_0_to_1():
    X, y = data()
    objective = dc.Objective(net(), RULE, dc.methods.DeepCTRL(rho=1.0))
    with pytest.raises(ValueError, match=r"alpha must be in \[0, 1\] for the training objective"):
        objective(X, y, alpha=1.5)
    assert objective(X, y, alpha=1.0).alpha == 1.0


def test_sweep_refuses_targets_of_another_width():
    X, _ = data()
    two = net(2)
    with pytest.raises(ValueError, match="1 value.* per sample but the outputs 2; class labels"):
        dc.sweep(two, RULE, X, torch.arange(64) % 2, alphas=[0.0])
    with pytest.raises(ValueError, match=r"the targets have 3 value\(s\) per sample but the"):
        dc.sweep(net(), RULE, X, torch.randn(64, 3), alphas=[0.0])
