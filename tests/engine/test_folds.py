"""`fit(..., folds=...)`: cross-fitting in one stacked fit computes, for every seed, what a
fit of that seed alone on its own rows computes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import deepctrl as dc

N = 103
FOLDS = [np.sort(f[:20]) for f in np.array_split(np.random.RandomState(0).permutation(N), 5)]
"""Five folds of 20 rows; three rows are in none and train every seed."""
SEEDS = [10, 11, 12, 13, 14]
OPTIONS = {"max_epochs": 300, "patience": 2, "lr": 0.01, "batch_size": 32, "task_loss": "mse"}


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(N, 4, generator=g, dtype=torch.float64)
    y = (2 * X[:, :1] + X[:, 1:2] ** 2) + 0.1 * torch.randn(N, 1, generator=g, dtype=torch.float64)
    w = torch.rand(N, generator=g, dtype=torch.float64) + 0.5
    return X, y, w


def model() -> dc.DeepCTRL:
    return dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 1)).double()


RULE = dc.rules.Monotonic(0, "increasing")


def part(X, y, w, rows, weighted):
    return (X[rows], y[rows], w[rows]) if weighted else (X[rows], y[rows])


@pytest.mark.filterwarnings("ignore:rho. the initial rule or task loss is zero")
@pytest.mark.parametrize(
    ("rho", "weighted", "noise"),
    [("auto", False, 0.0), ("auto", True, 0.1), ("epoch", True, 0.0), (0.5, False, 0.1)],
)
def test_each_seed_trains_as_it_would_alone_on_its_rows(rho, weighted, noise):
    X, y, w = data()
    options = {**OPTIONS, "input_noise": noise}
    method = dc.methods.DeepCTRL(rho=rho)
    train = (X, y, w) if weighted else (X, y)
    stacked = dc.fit(model(), RULE, method, train=train, folds=FOLDS, seeds=SEEDS, **options)
    assert len(set(stacked.epochs)) > 1  # the seeds stopped at different epochs
    for i, (fold, seed) in enumerate(zip(FOLDS, SEEDS, strict=True)):
        rest = np.setdiff1d(np.arange(N), fold)
        alone = dc.fit(
            model(),
            RULE,
            dc.methods.DeepCTRL(rho=rho),
            train=part(X, y, w, rest, weighted),
            val=part(X, y, w, fold, weighted),
            seeds=[seed],
            **options,
        )
        assert (stacked.epochs[i], stacked.best_epochs[i]) == (
            alone.epochs[0],
            alone.best_epochs[0],
        )
        assert stacked.val_loss[i] == pytest.approx(alone.val_loss[0], rel=1e-12)
        assert float(stacked.state["rho"][i]) == pytest.approx(float(alone.state["rho"][0]))
        with torch.no_grad():
            a = stacked.models[i](X, alpha=0.5)
            b = alone.models[0](X, alpha=0.5)
        torch.testing.assert_close(a, b, rtol=0, atol=1e-12)


def test_several_methods_and_workers_keep_each_seed_on_its_rows():
    X, y, _ = data()
    methods = [dc.methods.DeepCTRL(rho=0.5), dc.methods.TaskOnly()]
    options = {**OPTIONS, "max_epochs": 6}
    both = dc.fit_methods(model(), RULE, methods, train=(X, y), folds=FOLDS, seeds=SEEDS, **options)
    shared = dc.fit(model(), None, methods[1], train=(X, y), folds=FOLDS, seeds=SEEDS,
                    workers=2, **options)  # fmt: skip
    alone = dc.fit(model(), None, methods[1], train=(X, y), folds=FOLDS, seeds=SEEDS, **options)
    for m_both, m_shared, m_alone in zip(both[1].models, shared.models, alone.models, strict=True):
        with torch.no_grad():
            torch.testing.assert_close(
                m_both(X, alpha=0.0), m_alone(X, alpha=0.0), atol=1e-12, rtol=0
            )
            torch.testing.assert_close(
                m_shared(X, alpha=0.0), m_alone(X, alpha=0.0), atol=1e-12, rtol=0
            )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"folds": [np.arange(5), np.arange(5, 9)]}, "equally many rows .* sizes \\[4, 5\\]"),
        ({"folds": [np.arange(3), np.arange(3)], "seeds": [0]}, "one fold per seed: 2 folds, 1"),
        ({"folds": [np.array([0, 200])], "seeds": [0]}, "fold 0 has row indices outside 0..102"),
        ({"folds": [np.array([1, 1])], "seeds": [0]}, "fold 0 repeats a row index"),
        ({"folds": [np.array([0.5])], "seeds": [0]}, "fold 0 must be a non-empty 1-D array"),
        ({"folds": [np.arange(N)], "seeds": [0]}, "every fold leaves no training row"),
        ({"val": "X"}, "folds take their validation rows from train: pass val=None"),
    ],
)
def test_bad_folds_fail_with_one_message(change, message):
    X, y, _ = data()
    kwargs = {"folds": FOLDS[:2], "seeds": [0, 1], **change}
    if kwargs.get("val") == "X":
        kwargs["val"] = (X, y)
    with pytest.raises(ValueError, match=message):
        dc.fit(model(), RULE, dc.methods.DeepCTRL(rho=0.5), train=(X, y), max_epochs=1, **kwargs)


def test_a_fold_whose_rows_all_weigh_zero_is_refused():
    X, y, _ = data()
    w = torch.ones(N, dtype=torch.float64)
    w[torch.as_tensor(FOLDS[1])] = 0.0
    with pytest.raises(ValueError, match="every validation row of fold 1 has weight 0"):
        dc.fit(model(), RULE, train=(X, y, w), folds=FOLDS[:2], seeds=[0, 1], max_epochs=1)


def test_folds_need_tensors():
    X, y, _ = data()
    dataset = torch.utils.data.TensorDataset(X, y)
    with pytest.raises(ValueError, match="folds need train as tensors"):
        dc.fit(model(), RULE, train=dataset, folds=FOLDS[:1], seeds=[0], max_epochs=1)


def test_the_documented_example_runs():
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "core-api.md").read_text()
    section = page[page.index("### Cross-fitting in one stacked fit") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "core-api.md", "exec"), namespace)
    assert namespace["oof"].shape == (500, 1)
    assert len(namespace["result"].models) == 5
