"""Every kind of encoder trains in dc.fit, alone or with other seeds, in the right mode.

Tolerances of "a seed trained in a group ends where it ends alone". One seed alone runs as a
plain forward (the loop path). A group on the lowered path (MLPs) or on the loop path
(recurrent layers, dropout) ends bit for bit where the seed ends alone. A group on the vmap
path agrees to float rounding: batched kernels (a grouped convolution for S seeds, a plain
one for one) round differently, gradients agree to about 4e-7 relative
(tests/engine/test_ensemble.py), and Adam, which divides by the root of the squared-gradient
average, magnifies that on near-zero gradients (the rule encoder when alpha is near 0):
after three epochs the weights agree to 1.3e-4 to 3.7e-4 (asserted at 1e-3).
"""

import copy
import logging

import pytest
import torch
from torch import nn

import deepctrl as dc
from deepctrl.engine.fit_run import init_models


class LastStep(nn.Module):
    """A recurrent encoder: the last hidden state, then a linear layer."""

    def __init__(self, rnn: nn.RNNBase, out: int) -> None:
        super().__init__()
        self.rnn, self.head = rnn, nn.Linear(rnn.hidden_size, out)

    def forward(self, x):
        return self.head(self.rnn(x)[0][:, -1])


class MeanPool(nn.Module):
    def __init__(self, layer: nn.Module, width: int, out: int) -> None:
        super().__init__()
        self.layer, self.head = layer, nn.Linear(width, out)

    def forward(self, x):
        return self.head(self.layer(x).mean(1))


class TokensAndNumbers(nn.Module):
    """Two inputs: token ids (for an Embedding) and numbers."""

    def __init__(self, out: int) -> None:
        super().__init__()
        self.emb, self.lin = nn.Embedding(10, 4), nn.Linear(3, 4)
        self.head = nn.Linear(16, out)

    def forward(self, x):
        return self.head(torch.cat([self.emb(x["ids"]).flatten(1), self.lin(x["num"])], 1))


def sequences(n=192):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 5, 3, generator=g)
    return X, 2 * X[:, :, :1].mean(1) + 0.1 * torch.randn(n, 1, generator=g)


def images(n=192):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 1, 6, 6, generator=g)
    return X, X.mean((1, 2, 3))[:, None]


def rows(n=192):
    X, y = sequences(n)
    return X[:, 0], y


def tokens(n=192):
    g = torch.Generator().manual_seed(0)
    x = {"ids": torch.randint(0, 10, (n, 3), generator=g), "num": torch.randn(n, 3, generator=g)}
    return x, x["num"][:, :1] + x["ids"][:, :1].float() / 10


RULE = dc.rules.Monotonic(0, "increasing")
ENCODERS = {  # name: (encoder factory, data, rule, path, tolerance)
    "GRU": (lambda: LastStep(nn.GRU(3, 8, batch_first=True), 8), sequences, RULE, "loop", 0),
    "LSTM": (
        lambda: LastStep(nn.LSTM(3, 8, num_layers=2, batch_first=True), 8),
        sequences,
        RULE,
        "loop",
        0,
    ),
    "Conv2d": (
        lambda: nn.Sequential(nn.Conv2d(1, 4, 3), nn.ReLU(), nn.Flatten(), nn.Linear(64, 8)),
        images,
        RULE,
        "vmap",
        1e-3,
    ),
    "TransformerEncoderLayer": (
        lambda: MeanPool(nn.TransformerEncoderLayer(3, 1, 8, dropout=0.0, batch_first=True), 3, 8),
        sequences,
        RULE,
        "vmap",
        1e-3,
    ),
    "TransformerEncoderLayer+dropout": (
        lambda: MeanPool(nn.TransformerEncoderLayer(3, 1, 8, dropout=0.1, batch_first=True), 3, 8),
        sequences,
        RULE,
        "loop",
        0,
    ),
    "BatchNorm1d": (
        lambda: nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.ReLU()),
        rows,
        RULE,
        "vmap",
        1e-3,
    ),
    "Dropout": (
        lambda: nn.Sequential(nn.Linear(3, 8), nn.ReLU(), nn.Dropout(0.3)),
        rows,
        RULE,
        "loop",
        0,
    ),
    "Embedding": (
        lambda: TokensAndNumbers(8),
        tokens,
        dc.rules.Monotonic(0, "increasing", input="num"),
        "vmap",
        1e-3,
    ),
}


def deepctrl(encoder):
    return dc.DeepCTRL(encoder(), encoder(), dc.mlp(16, 8, 1))


def weights(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def buffers(model):
    return {k: v.clone() for k, v in model.state_dict().items() if "running" in k}


@pytest.mark.parametrize("name", sorted(ENCODERS))
def test_a_seed_in_a_group_ends_where_it_ends_alone(name):
    encoder, make, rule, path, tol = ENCODERS[name]
    X, y = make()
    kw = dict(train=(X, y), val=(X, y), max_epochs=3, batch_size=32, patience=2)
    group = dc.fit(deepctrl(encoder), rule, dc.methods.DeepCTRL(rho=1.0), seeds=[0, 1, 2], **kw)
    alone = dc.fit(deepctrl(encoder), rule, dc.methods.DeepCTRL(rho=1.0), seeds=[1], **kw)
    assert group.path == path and alone.path == "loop"  # one seed: a plain forward
    assert alone.epochs[0] == group.epochs[1]
    a, b = weights(alone.model), weights(group.models[1])
    if tol == 0:
        assert torch.equal(a, b)
    else:
        assert torch.allclose(a, b, atol=tol)
        assert not torch.equal(weights(group.models[0]), b)
    table = dc.sweep(group.model, rule, X, y, alphas=[0.0, 1.0])
    assert all(0.0 <= v <= 1.0 for v in table["verification_ratio"])


def test_recurrent_encoders_fall_back_with_one_line(caplog):
    X, y = sequences(64)
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        result = dc.fit(
            deepctrl(ENCODERS["GRU"][0]),
            RULE,
            dc.methods.DeepCTRL(rho=1.0),
            train=(X, y),
            max_epochs=1,
            seeds=[0, 1],
        )
    lines = [r.getMessage() for r in caplog.records]
    assert result.path == "loop" and len(lines) == 1
    assert "vmap cannot run" in lines[0] and "one after another" in lines[0]
    # the reason is PyTorch's: torch < 2.4 stops at GRU.flatten_parameters reading .data
    assert "gru" in lines[0] or "`data`" in lines[0]
    assert "\n" not in lines[0]


def test_training_in_train_mode_everything_else_in_eval_mode():
    """BatchNorm and Dropout: validation, rho, sweeps and returned models run in eval mode."""
    X, y = rows(256)

    def encoder():
        return nn.Sequential(
            nn.Linear(3, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dropout(0.5), nn.Linear(16, 8)
        )

    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0])
    result = dc.fit(
        deepctrl(encoder),
        rule,
        dc.methods.DeepCTRL(rho="paper"),
        train=(X, y),
        val=(X[:64], y[:64]),
        max_epochs=4,
        seeds=[0, 1],
    )
    model = result.model
    assert not any(m.training for m in model.modules())
    # validation ran in eval mode: it equals an eval-mode sweep of the restored weights
    table = dc.sweep(model, rule, X[:64], y[:64], alphas=[0.0])
    assert result.val_loss[0] == pytest.approx(table["mae"][0], rel=1e-5)
    # a sweep changes no buffer and gives the same numbers twice, even in train mode
    model.train()
    before = buffers(model)
    again = dc.sweep(model, rule, X[:64], y[:64], alphas=[0.0, 0.5, 1.0])
    assert again == dc.sweep(model, rule, X[:64], y[:64], alphas=[0.0, 0.5, 1.0])
    assert again["mae"][0] == table["mae"][0]
    assert all(torch.equal(v, buffers(model)[k]) for k, v in before.items())
    assert all(m.training for m in model.modules())  # the sweep gave the mode back
    dc.verification_ratio(model, rule, X[:64], alpha=0.5)
    assert all(torch.equal(v, buffers(model)[k]) for k, v in before.items())


def test_rho_is_measured_in_eval_mode():
    X, y = rows(128)

    def encoder():
        return nn.Sequential(nn.Linear(3, 8), nn.Dropout(0.9))

    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0])
    rhos = [
        dc.fit(
            deepctrl(encoder),
            rule,
            dc.methods.DeepCTRL(rho="paper"),
            train=(X, y),
            max_epochs=0,
            seeds=[s],
        ).state["rho"]
        for s in (0, 0)
    ]
    assert torch.equal(rhos[0], rhos[1])
    model = init_models(deepctrl(encoder), [0])[0]
    objective = dc.Objective(model, rule, dc.methods.DeepCTRL(rho="paper"))
    assert objective.calibrate((X, y)).rho == pytest.approx(float(rhos[0][0]), rel=1e-6)
    assert all(m.training for m in model.modules())


def test_batchnorm_running_statistics_train_per_seed():
    X, y = rows(256)

    def encoder():
        return nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8))

    result = dc.fit(
        deepctrl(encoder),
        RULE,
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, y),
        max_epochs=2,
        seeds=[0, 1],
    )
    stats = [m.data_encoder[1].running_mean for m in result.models]
    assert not torch.equal(stats[0], torch.zeros(8))
    assert not torch.equal(stats[0], stats[1])
    # 256 rows in batches of 64, two epochs
    assert int(result.models[0].data_encoder[1].num_batches_tracked) == 2 * 4


class PositionalAttention(nn.Module):
    """Attention over time with a fixed positional table, a buffer kept out of the
    state_dict (``persistent=False``) or in it."""

    def __init__(self, steps: int, width: int, persistent: bool) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.register_buffer("table", torch.randn(steps, width), persistent=persistent)
        self.inp = nn.Linear(3, width)
        self.layer = nn.TransformerEncoderLayer(width, 2, 16, dropout=0.0, batch_first=True)

    def forward(self, x):
        return self.layer(self.inp(x) + self.table)[:, -1]


@pytest.mark.parametrize("validated", [False, True])
def test_a_buffer_left_out_of_the_state_dict_trains_as_a_kept_one(validated):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(96, 5, 3, generator=g)
    y = -X[:, -1, :1]

    def fit(persistent: bool) -> nn.Module:
        model = dc.DeepCTRL(
            PositionalAttention(5, 8, persistent),
            PositionalAttention(5, 8, persistent),
            dc.mlp(16, 8, 1),
        )
        val = (X[:32], y[:32]) if validated else None
        result = dc.fit(
            model,
            dc.rules.Monotonic(0, "decreasing"),
            train=(X, y),
            val=val,
            max_epochs=2,
            batch_size=32,
            seeds=[0, 1],
            reinit=False,
        )
        return result.models[1]

    kept, left_out = fit(True), fit(False)
    assert "data_encoder.table" not in left_out.state_dict()
    for (name, a), b in zip(kept.named_parameters(), left_out.parameters(), strict=True):
        assert torch.equal(a, b), name


class SharedGRUHead(nn.Module):
    """An encoder made of a GRU (shared with the other encoder) and a head of its own."""

    def __init__(self, gru: nn.GRU, head: nn.Linear) -> None:
        super().__init__()
        self.gru, self.head = gru, head

    def forward(self, x):
        return self.head(self.gru(x)[0][:, -1])


class LastState(nn.Module):
    def __init__(self, gru: nn.GRU) -> None:
        super().__init__()
        self.gru = gru

    def forward(self, x):
        return self.gru(x)[0][:, -1]


def test_encoders_sharing_a_module_train_as_the_same_network_given_as_shared():
    """One GRU inside both encoders is the `shared=` network written another way: dc.fit
    trains it, keeps the tie, and ends where the `shared=` model ends (the GRU's gradient
    sums its two uses in another order: float rounding, magnified by Adam)."""
    torch.manual_seed(0)
    gru, heads = nn.GRU(3, 8, batch_first=True), [nn.Linear(8, 8) for _ in range(2)]
    decision = dc.mlp(16, 8, 1)
    tied = dc.DeepCTRL(SharedGRUHead(gru, heads[0]), SharedGRUHead(gru, heads[1]), decision)
    start = gru.weight_hh_l0.detach().clone()
    shared = dc.DeepCTRL(
        copy.deepcopy(heads[0]),
        copy.deepcopy(heads[1]),
        copy.deepcopy(decision),
        shared=LastState(copy.deepcopy(gru)),
    )
    g = torch.Generator().manual_seed(0)
    X = torch.randn(96, 5, 3, generator=g)
    y = -X[:, -1, :1]
    kwargs = dict(train=(X, y), max_epochs=3, batch_size=32, seeds=[0], reinit=False)
    a = dc.fit(tied, dc.rules.Monotonic(0, "decreasing"), **kwargs).model
    b = dc.fit(shared, dc.rules.Monotonic(0, "decreasing"), **kwargs).model
    assert a.data_encoder.gru is a.rule_encoder.gru
    assert not torch.equal(a.data_encoder.gru.weight_hh_l0, start)
    for name, p in b.shared.gru.named_parameters():
        torch.testing.assert_close(getattr(a.data_encoder.gru, name), p, atol=1e-3, rtol=0)
    torch.testing.assert_close(a.rule_encoder.head.weight, b.rule_encoder.weight, atol=1e-3, rtol=0)
