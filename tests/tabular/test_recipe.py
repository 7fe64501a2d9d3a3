"""The estimators' training recipe: which parameters a table of a given size trains with."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

import deepctrl as dc
from deepctrl.engine import training, workers
from deepctrl.tabular import recipe as recipe_module
from deepctrl.tabular.recipe import MANY_ROWS, training_recipe


def test_small_tables_keep_the_long_constant_rate_recipe():
    r = training_recipe(800)
    assert (
        r.batch_size,
        r.learning_rate,
        r.max_epochs,
        r.patience,
        r.lr_schedule,
        r.n_seeds,
        r.max_hidden,
    ) == (32, 1e-3, 500, 20, "constant", 5, 128)
    assert training_recipe(100).batch_size == 16  # 100 / 32 rounds to 4: the floor


@pytest.mark.parametrize(
    ("rows", "batch", "epochs"),
    [
        (MANY_ROWS, 256, 50),  # 10,000 / 50 = 200 -> 256; 40 steps an epoch: 2000 / 40
        (25_600, 512, 40),  # 50 steps an epoch: 40 epochs for 2000 steps
        (800_000, 1024, 5),  # 782 steps an epoch: 3 epochs would do, 5 at the least
        (5_000_000, 1024, 5),
    ],
)
def test_large_tables_get_a_step_budget(rows, batch, epochs):
    r = training_recipe(rows)
    assert (r.batch_size, r.max_epochs, r.lr_schedule, r.n_seeds, r.max_hidden) == (
        batch,
        epochs,
        "cosine",
        3,
        32,
    )
    assert r.learning_rate == pytest.approx(1e-2 * math.sqrt(batch / 512))
    assert r.patience == max(10, math.ceil(epochs / 3))


def test_given_parameters_are_kept():
    r = training_recipe(
        25_600,
        batch_size=64,
        learning_rate=0.5,
        max_epochs=7,
        patience=2,
        lr_schedule="constant",
        n_seeds=1,
    )
    assert (r.batch_size, r.learning_rate, r.max_epochs, r.patience, r.lr_schedule, r.n_seeds) == (
        64,
        0.5,
        7,
        2,
        "constant",
        1,
    )
    # the learning rate follows the batch the user chose
    assert training_recipe(25_600, batch_size=128).learning_rate == pytest.approx(5e-3)


def test_a_named_recipe_holds_whatever_the_rows():
    budget = training_recipe(5_000, recipe="step_budget")  # 100 rows a step -> 128
    assert (budget.batch_size, budget.max_epochs, budget.lr_schedule, budget.n_seeds) == (
        128,
        50,  # 40 steps an epoch: 2000 / 40
        "cosine",
        3,
    )
    assert (budget.max_hidden, budget.one_thread) == (32, False)
    assert budget.learning_rate == pytest.approx(1e-2 * math.sqrt(128 / 512))
    long = training_recipe(40_000, recipe="long")  # 40,000 / 32 -> 256 at the most
    assert (long.batch_size, long.learning_rate, long.max_epochs, long.patience) == (
        256,
        1e-3,
        500,
        20,
    )
    assert (long.lr_schedule, long.n_seeds, long.max_hidden, long.one_thread) == (
        "constant",
        5,
        128,
        True,
    )
    assert training_recipe(5_000, recipe="auto") == training_recipe(5_000)
    with pytest.raises(ValueError, match="recipe must be one of auto, long, step_budget"):
        training_recipe(5_000, recipe="fast")


def test_an_estimator_takes_the_recipe_it_is_given():
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 250)})
    est = dc.DeepCTRLRegressor(recipe="step_budget", max_epochs=1, random_state=0)
    est.fit(X, X["x"])
    # 200 training rows: the long recipe by the rows, the step budget as asked
    assert est.recipe_ == training_recipe(200, max_epochs=1, recipe="step_budget")
    assert est.recipe_.lr_schedule == "cosine" and len(est.models_) == 3
    assert est.network_["hidden"] == 32


def test_an_estimator_trains_with_its_recipe(monkeypatch):
    monkeypatch.setattr(recipe_module, "MANY_ROWS", 100)  # the large-table recipe on 200 rows
    calls = []
    original = training.fit

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(training, "fit", spy)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 250), "z": rng.normal(0, 1, 250)})
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("x", "increasing")], random_state=0)
    est.fit(X, 2 * X["x"] + X["z"])
    (kw,) = calls
    assert (kw["batch_size"], kw["lr_schedule"], len(kw["seeds"])) == (16, "cosine", 3)
    assert kw["max_epochs"] == 154 and est.recipe_.max_epochs == 154  # 13 steps an epoch
    assert est.network_["hidden"] == 32 and est.batch_size_ == 16


@pytest.mark.parametrize(
    ("many_rows", "busy", "expected"), [(10_000, 0, 1), (100, 0, 2), (100, 1, 1)]
)
def test_small_tables_train_on_one_thread_large_ones_on_the_free_cores(
    monkeypatch, many_rows, busy, expected
):
    monkeypatch.setattr(recipe_module, "MANY_ROWS", many_rows)
    monkeypatch.setattr(workers, "busy_elsewhere", lambda: busy)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    threads = []
    original = training.fit

    def spy(*args, **kwargs):
        threads.append(torch.get_num_threads())
        return original(*args, **kwargs)

    monkeypatch.setattr(training, "fit", spy)
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 250)})
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        dc.DeepCTRLRegressor(max_epochs=2, n_seeds=1, random_state=0).fit(X, X["x"])
        assert threads == [expected] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_bad_recipe_parameters_are_refused():
    X, y = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]}), [1.0, 2.0, 3.0, 4.0]
    with pytest.raises(ValueError, match="lr_schedule must be 'auto' or one of"):
        dc.DeepCTRLRegressor(lr_schedule="linear").fit(X, y)
    with pytest.raises(ValueError, match="n_seeds must be a positive integer or 'auto', got 0"):
        dc.DeepCTRLRegressor(n_seeds=0).fit(X, y)
    with pytest.raises(ValueError, match="learning_rate must be positive or 'auto'"):
        dc.DeepCTRLRegressor(learning_rate=-1.0).fit(X, y)
    with pytest.raises(
        ValueError, match="recipe must be 'auto' or one of \\('long', 'step_budget'\\), got 'fast'"
    ):
        dc.DeepCTRLRegressor(recipe="fast").fit(X, y)


@pytest.mark.parametrize(("rows", "busy", "expected"), [(50, 1, 1), (50, 0, 2), (5, 1, 2)])
def test_many_predictions_run_on_the_free_cores(monkeypatch, rows, busy, expected):
    from deepctrl.tabular import alpha_evaluation

    rng = np.random.default_rng(0)
    X = pd.DataFrame({"x": rng.uniform(0, 1, 60)})
    est = dc.DeepCTRLRegressor(max_epochs=1, n_seeds=1, random_state=0).fit(X, X["x"])
    monkeypatch.setattr(alpha_evaluation, "MANY_PREDICTIONS", 20)  # rows times alphas
    monkeypatch.setattr(workers, "busy_elsewhere", lambda: busy)
    monkeypatch.setattr(workers.os, "cpu_count", lambda: 2)
    seen = []
    original = est.combined_at

    def spy(*args):
        seen.append(torch.get_num_threads())
        return original(*args)

    monkeypatch.setattr(est, "combined_at", spy)
    sweep = alpha_evaluation.sweep_outputs.predict_sweep

    def sweep_spy(*args, **kwargs):
        seen.append(torch.get_num_threads())
        return sweep(*args, **kwargs)

    monkeypatch.setattr(alpha_evaluation.sweep_outputs, "predict_sweep", sweep_spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        one = est.predict(X[:rows], alpha=np.full(rows, 0.5))  # per-row alphas
        assert seen == [expected] and torch.get_num_threads() == 2
        # one alpha for every row: the same numbers, through the sweep's path
        np.testing.assert_allclose(est.predict(X[:rows], alpha=0.5), one, rtol=1e-6)
        assert seen == [expected, expected] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
