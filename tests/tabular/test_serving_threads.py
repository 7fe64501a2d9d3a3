"""A fitted table model served from several threads: loading and evaluating change none of
the process's state that other threads share, or give it back whatever order they end in."""

from __future__ import annotations

import threading
import warnings

import numpy as np
import pandas as pd
import pytest
import torch

import deepctrl as dc
from deepctrl.engine.workers import threads


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 9, 80), "shop": rng.choice(list("abc"), 80)})
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], max_epochs=2)
    est.fit(X, 20 - X["price"].to_numpy())
    return est.save(tmp_path_factory.mktemp("serving") / "m.deepctrl"), X


def test_loading_changes_no_state_that_other_threads_share(saved, monkeypatch):
    path, X = saved

    def shared(name):
        def refuse(*args, **kwargs):
            raise AssertionError(f"loading called {name}")

        return refuse

    monkeypatch.setattr(torch, "set_default_dtype", shared("torch.set_default_dtype"))
    monkeypatch.setattr(torch.random, "fork_rng", shared("torch.random.fork_rng"))
    monkeypatch.setattr(warnings, "catch_warnings", shared("warnings.catch_warnings"))
    try:
        again = dc.DeepCTRLRegressor.load(path)
    finally:
        monkeypatch.undo()  # before pytest reports: it uses warnings.catch_warnings itself
    np.testing.assert_array_equal(again.predict(X), dc.DeepCTRLRegressor.load(path).predict(X))


def test_overlapping_blocks_give_the_programs_thread_count_back_in_any_order():
    before = torch.get_num_threads()
    program = 3 if before != 3 else 2
    torch.set_num_threads(program)
    entered = [threading.Event(), threading.Event()]
    leave = [threading.Event(), threading.Event()]

    def block(i: int) -> None:
        with threads(1):
            entered[i].set()
            leave[i].wait(10)

    try:
        first = threading.Thread(target=block, args=(0,))
        first.start()
        entered[0].wait(10)
        second = threading.Thread(target=block, args=(1,))
        second.start()
        entered[1].wait(10)
        leave[0].set()  # the first to start ends first
        first.join(10)
        leave[1].set()
        second.join(10)
        assert _in_a_new_thread() == program
        with threads(1):
            with threads(2):
                assert torch.get_num_threads() == 2
            assert torch.get_num_threads() == 1  # the outer block's, in one thread
        assert torch.get_num_threads() == program
    finally:
        torch.set_num_threads(before)


def _in_a_new_thread() -> int:
    """torch's thread count as a thread started now sees it (a thread's own setting is
    OpenMP's, and new threads start from the process's)."""
    seen: list[int] = []
    probe = threading.Thread(target=lambda: seen.append(torch.get_num_threads()))
    probe.start()
    probe.join(10)
    return seen[0]
