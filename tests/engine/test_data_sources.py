"""Data beyond one tensor: Datasets, DataLoaders, several inputs, integer inputs."""

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset, IterableDataset, TensorDataset

import deepctrl as dc
from helpers import small_net

RULE = dc.rules.Monotonic(0, "increasing")


def data(n=300):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] - 0.5 * X[:, 1:2]


def net():
    return small_net(16)


def weights(model):
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def test_a_dataset_trains_exactly_like_the_same_tensors():
    """Same order, batches, alpha draws and perturbations: bitwise the same models."""
    X, y = data()
    kw = dict(max_epochs=3, batch_size=32, shuffle=False, seeds=[0, 1], patience=2)
    a = dc.fit(
        net(), RULE, dc.methods.DeepCTRL(), train=(X[:240], y[:240]), val=(X[240:], y[240:]), **kw
    )
    b = dc.fit(
        net(),
        RULE,
        dc.methods.DeepCTRL(),
        train=TensorDataset(X[:240], y[:240]),
        val=TensorDataset(X[240:], y[240:]),
        **kw,
    )
    assert torch.equal(a.state["rho"], b.state["rho"])
    for s in range(2):
        assert torch.equal(weights(a.models[s]), weights(b.models[s]))
        assert a.history[s] == b.history[s]


def test_shuffled_dataset_a_seed_in_a_group_matches_it_alone():
    X, y = data()
    kw = dict(train=TensorDataset(X, y), max_epochs=2, batch_size=32, input_noise=0.01)
    group = dc.fit(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seeds=[0, 1, 2], **kw)
    alone = dc.fit(net(), RULE, dc.methods.DeepCTRL(rho=1.0), seeds=[2], **kw)
    assert torch.equal(weights(group.models[2]), weights(alone.model))
    assert not torch.equal(weights(group.models[0]), weights(alone.model))


def test_a_dataloader_is_shared_by_the_seeds_and_equals_unshuffled_tensors():
    X, y = data()
    loader = DataLoader(TensorDataset(X, y), batch_size=50)
    a = dc.fit(net(), RULE, dc.methods.DeepCTRL(rho=1.0), train=loader, max_epochs=2, seeds=[0, 1])
    b = dc.fit(
        net(),
        RULE,
        dc.methods.DeepCTRL(rho=1.0),
        train=(X, y),
        batch_size=50,
        shuffle=False,
        max_epochs=2,
        seeds=[0, 1],
    )
    assert torch.equal(weights(a.models[1]), weights(b.models[1]))


class Generated(Dataset):
    """Rows made on demand from their index: the data never exist in memory at once.

    ``__getitem__`` takes a list of indices (used with a BatchSampler), so a batch is made in
    one call. ``largest`` records the largest request.
    """

    def __init__(self, n):
        self.n, self.largest = n, 0

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        idx = torch.as_tensor(index)
        self.largest = max(self.largest, idx.numel())
        g = torch.Generator().manual_seed(int(idx.sum()))
        x = torch.randn(idx.numel(), 3, generator=g) + idx[:, None] * 1e-6
        return x, x[:, :1] - 0.5 * x[:, 1:2]


def test_generated_data_are_read_a_batch_at_a_time():
    dataset = Generated(5000)
    sampler = torch.utils.data.BatchSampler(
        torch.utils.data.RandomSampler(dataset, generator=torch.Generator().manual_seed(0)),
        batch_size=100,
        drop_last=False,
    )
    loader = DataLoader(dataset, sampler=sampler, batch_size=None)
    result = dc.fit(net(), RULE, dc.methods.DeepCTRL(), train=loader, max_epochs=2)
    assert dataset.largest == 100
    assert result.history[0]["train_loss"][1] < result.history[0]["train_loss"][0]
    table = dc.sweep(
        result.model,
        RULE,
        DataLoader(
            dataset,
            sampler=torch.utils.data.BatchSampler(range(5000), 1000, False),
            batch_size=None,
        ),
        alphas=[0.0, 1.0],
    )
    assert table["verification_ratio"][1] >= 0.95
    assert dataset.largest == 1000


class Stream(IterableDataset):
    """An iterable dataset without a length: alpha is drawn batch by batch."""

    def __iter__(self):
        X, y = data(200)
        yield from zip(X, y, strict=True)


def test_an_iterable_dataset_without_length_trains():
    result = dc.fit(
        net(),
        RULE,
        dc.methods.DeepCTRL(),
        train=Stream(),
        batch_size=40,
        max_epochs=2,
        seeds=[0, 1],
    )
    assert all(len(h["train_loss"]) == 2 for h in result.history)


def same_table(a, b):
    assert a.keys() == b.keys() and a["alpha"] == b["alpha"]
    return all(x == pytest.approx(y, rel=1e-6) for k in a for x, y in zip(a[k], b[k], strict=True))


def test_sweep_and_verification_ratio_read_loaders_like_tensors():
    """Same perturbations (drawn in order block by block), metrics summed block by block."""
    X, y = data()
    model = dc.fit(net(), RULE, dc.methods.DeepCTRL(rho=1.0), train=(X, y), max_epochs=2).model
    loader = DataLoader(TensorDataset(X, y), batch_size=64)
    metrics = ("mae", "mse", "rmse")
    table = dc.sweep(model, RULE, X, y, alphas=[0.0, 0.5, 1.0], metrics=metrics)
    assert same_table(dc.sweep(model, RULE, loader, alphas=[0.0, 0.5, 1.0], metrics=metrics), table)
    assert same_table(
        dc.sweep(model, RULE, TensorDataset(X, y), alphas=[0.0, 0.5, 1.0], metrics=metrics), table
    )
    ratio = dc.verification_ratio(model, RULE, X, alpha=0.5)
    assert dc.verification_ratio(model, RULE, loader, alpha=0.5) == pytest.approx(ratio)
    assert ratio == table["verification_ratio"][1]
    labels = (y > 0).float()
    classifier = dc.fit(
        net(), RULE, dc.methods.DeepCTRL(rho=1.0), train=(X, labels), max_epochs=1
    ).model
    metrics = ("accuracy", "auc", "mae")
    assert same_table(
        dc.sweep(
            classifier,
            RULE,
            DataLoader(TensorDataset(X, labels), 50),
            alphas=[0.0, 1.0],
            metrics=metrics,
        ),
        dc.sweep(classifier, RULE, X, labels, alphas=[0.0, 1.0], metrics=metrics),
    )
    with pytest.raises(ValueError, match="pass y=None"):
        dc.sweep(model, RULE, loader, y)
    with pytest.raises(ValueError, match="sweep needs y"):
        dc.sweep(model, RULE, X)


class ImageAndTable(nn.Module):
    """Two inputs: an 8x8 image and a table whose column 0 is a token id (integer)."""

    def __init__(self, out):
        super().__init__()
        self.conv = nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.Flatten())
        self.emb, self.lin = nn.Embedding(7, 3), nn.Linear(2, 3)
        self.head = nn.Linear(2 * 36 + 6, out)
        self.seen: set[torch.dtype] = set()

    def forward(self, x):
        self.seen.add(x["token"].dtype)
        h = [self.conv(x["image"]), self.emb(x["token"]), self.lin(x["table"])]
        return self.head(torch.cat(h, dim=1))


def two_inputs(n=160):
    g = torch.Generator().manual_seed(0)
    x = {
        "image": torch.randn(n, 1, 8, 8, generator=g),
        "token": torch.randint(0, 7, (n,), generator=g),
        "table": torch.randn(n, 2, generator=g),
    }
    return x, x["table"][:, :1] + x["image"].mean((1, 2, 3))[:, None]


def test_several_inputs_integer_ids_keep_their_dtype():
    x, y = two_inputs()
    rule = dc.rules.Monotonic(0, "increasing", input="table")
    model = dc.DeepCTRL(ImageAndTable(8), ImageAndTable(8), dc.mlp(16, 1))
    result = dc.fit(
        model,
        rule,
        dc.methods.DeepCTRL(),
        train=(x, y),
        val=(x, y),
        max_epochs=2,
        batch_size=32,
        input_noise=0.01,
        seeds=[0, 1],
    )
    trained = result.model  # training itself shows the ids stayed integers: nn.Embedding
    trained.data_encoder.seen.clear()  # raises on float indices
    table = dc.sweep(trained, rule, x, y, alphas=[0.0, 1.0])
    assert trained.data_encoder.seen == {torch.int64}
    assert len(table["verification_ratio"]) == 2
    loader = DataLoader(TensorDataset(x["image"], x["token"], x["table"], y), batch_size=40)
    pairs = [({"image": a, "token": b, "table": c}, d) for a, b, c, d in loader]
    batches = DataLoader(pairs_dataset(pairs), batch_size=None)  # already batched
    assert same_table(dc.sweep(trained, rule, batches, alphas=[0.0, 1.0]), table)


class pairs_dataset(IterableDataset):  # noqa: N801 (reads like a function at the call)
    def __init__(self, pairs):
        self.pairs = pairs

    def __iter__(self):
        yield from self.pairs


def test_perturbation_names_its_input_and_moves_the_last_axis_everywhere():
    g = torch.Generator().manual_seed(0)
    x = {"seq": torch.rand(4, 5, 3, generator=g) + 1.0, "ids": torch.zeros(4, 2).long()}
    rule = dc.rules.Monotonic(2, "increasing", input="seq", perturbation=dc.rules.Relative(0.5))
    x_p = rule.perturb(x, torch.Generator().manual_seed(1))
    moved = x_p["seq"] - x["seq"]
    assert x_p["ids"] is x["ids"]
    assert torch.equal(moved[..., :2], torch.zeros(4, 5, 2))
    assert bool((moved[..., 2] > 0).all())  # every time step of feature 2
    assert bool((moved[..., 2] <= 0.5 * x["seq"][..., 2]).all())
    one = dc.rules.Monotonic(-1, "increasing", perturbation=dc.rules.Relative(0.5)).perturb(
        x["seq"], torch.Generator().manual_seed(1)
    )
    assert torch.equal(one, x_p["seq"])  # index -1 is the same feature, same draws


def test_threshold_on_sequences_judges_a_crossing_at_any_step():
    rule = dc.rules.Threshold(0, 1.0, perturbation=dc.rules.Additive(0.5))
    x = torch.tensor([[[0.9], [0.2]], [[0.2], [0.3]]])
    x_p = x + 0.2
    ctx = dc.rules.Context(x, torch.zeros(2, 1), x_p, torch.ones(2, 1))
    assert rule.applicable(ctx).tolist() == [True, False]


def test_rule_input_errors_name_the_problem():
    x, y = two_inputs(16)
    model = dc.DeepCTRL(ImageAndTable(8), ImageAndTable(8), dc.mlp(16, 1))
    cases = [
        (dc.rules.Monotonic(0, "increasing"), r"several inputs \['image', 'table', 'token'\]"),
        (dc.rules.Monotonic(0, "increasing", input="price"), "names input 'price'"),
        (dc.rules.Monotonic(5, "increasing", input="table"), "out of range for 2"),
        (dc.rules.Monotonic(0, "increasing", input="token"), "cannot perturb input token"),
    ]
    for rule, message in cases:
        with pytest.raises(ValueError, match=message):
            dc.fit(model, rule, dc.methods.DeepCTRL(rho=1.0), train=(x, y), max_epochs=1)
    with pytest.raises(ValueError, match="single input tensor"):
        dc.fit(net(), dc.rules.Monotonic(0, "increasing", input="x"), train=data(), max_epochs=1)
    with pytest.raises(ValueError, match="different numbers of rows"):
        dc.fit(model, None, dc.methods.TaskOnly(), train=({**x, "token": x["token"][:3]}, y))


def test_a_dataset_of_bad_items_gets_a_clear_error():
    bad = [torch.zeros(3) for _ in range(8)]
    with pytest.raises(ValueError, match=r"must yield \(x, y\) pairs"):
        dc.fit(
            net(), None, dc.methods.TaskOnly(), train=DataLoader(bad, batch_size=4), max_epochs=1
        )
    named = [{"x": torch.zeros(3), "y": torch.zeros(1)} for _ in range(8)]
    for rho in ("auto", 1.0):  # measuring rho reads the training data first, or training does
        with pytest.raises(ValueError, match=r"^train must yield \(x, y\) pairs, got batches"):
            dc.fit(
                net(),
                dc.rules.Monotonic(0, "increasing"),
                dc.methods.DeepCTRL(rho=rho),
                train=DataLoader(named, batch_size=4),
                max_epochs=1,
            )
