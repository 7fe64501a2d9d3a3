"""dc.fit(workers=N): shares of the seeds trained in worker processes, joined in order."""

import logging
import warnings

import pytest
import torch

import deepctrl as dc
from deepctrl.engine.workers import default_workers, run_jobs, seed_parts
from helpers import bar_line, small_net, warn_and_note


def _data():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(120, 3, generator=g)
    y = X[:, :1] - 0.5 * X[:, 1:2] + 0.1 * torch.randn(120, 1, generator=g)
    return (X[:90], y[:90]), (X[90:], y[90:])


def _net():
    return small_net()


def _same(a, b):
    for (name, v), w in zip(a.state_dict().items(), b.state_dict().values(), strict=True):
        assert torch.equal(v, w), name


def test_workers_train_each_share_as_it_trains_in_process():
    train, val = _data()
    rule = dc.rules.Monotonic(0, "increasing")
    kw = dict(train=train, val=val, max_epochs=8, patience=2, batch_size=16)
    side = dc.fit(_net(), rule, dc.methods.DeepCTRL(), seeds=[0, 1, 2], workers=2, **kw)
    assert side.seeds == [0, 1, 2] and len(side.models) == 3
    shares = [
        dc.fit(_net(), rule, dc.methods.DeepCTRL(), seeds=part, **kw)
        for part in seed_parts([0, 1, 2], 2)
    ]
    assert [len(s.seeds) for s in shares] == [2, 1]
    joined = dc.FitResult.join(shares)
    assert side.epochs == joined.epochs and side.best_epochs == joined.best_epochs
    assert side.state["rho"].equal(joined.state["rho"])
    for a, b in zip(side.models, joined.models, strict=True):
        _same(a, b)


def test_fit_methods_in_workers_gives_one_result_per_method():
    train, val = _data()
    results = dc.fit_methods(
        _net(),
        dc.rules.Monotonic(0, "increasing"),
        [dc.methods.TaskOnly(), dc.methods.LagrangianDual(0.5)],
        train=train,
        val=val,
        seeds=[3, 4],
        workers=2,
        max_epochs=3,
    )
    assert [r.method.name for r in results] == ["TaskOnly", "LagrangianDual(0.5)"]
    assert all(r.seeds == [3, 4] for r in results)
    assert results[1].state["multipliers"].shape == (2, 1)


def test_what_cannot_go_to_a_worker_is_refused_in_one_line():
    train, _ = _data()
    lam = dc.rules.Penalty(lambda x, y: y[:, 0] - 1.0)
    with pytest.raises(ValueError, match="must be picklable"):
        dc.fit(_net(), lam, train=train, seeds=[0, 1], workers=2, max_epochs=1)
    with pytest.raises(ValueError, match="callbacks need workers=1"):
        dc.fit(
            _net(),
            dc.rules.Monotonic(0, "increasing"),
            train=train,
            seeds=[0, 1],
            workers=2,
            max_epochs=1,
            callbacks=[print],
        )
    with pytest.raises(ValueError, match="workers must be >= 1"):
        dc.fit(_net(), dc.rules.Monotonic(0, "increasing"), train=train, workers=0)


def test_a_script_read_from_standard_input_cannot_start_workers(monkeypatch):
    import sys

    train, _ = _data()
    monkeypatch.setattr(sys.modules["__main__"], "__file__", "<stdin>", raising=False)
    with pytest.raises(ValueError, match="<stdin> is not a file .* or use workers=1"):
        dc.fit(_net(), dc.rules.Monotonic(0, "increasing"), train=train, seeds=[0, 1], workers=2)


def test_one_seed_or_one_worker_trains_in_this_process():
    train, _ = _data()
    rule = dc.rules.Monotonic(0, "increasing")
    a = dc.fit(_net(), rule, train=train, seeds=[5], workers=4, max_epochs=2)
    b = dc.fit(_net(), rule, train=train, seeds=[5], max_epochs=2)
    _same(a.model, b.model)


def test_default_workers_is_one_on_gpu_and_under_torchrun(monkeypatch):
    monkeypatch.delenv("WORLD_SIZE", raising=False)
    assert default_workers("cpu") >= 1
    assert default_workers("cuda") == 1
    monkeypatch.setenv("WORLD_SIZE", "2")
    assert default_workers("cpu") == 1


def test_no_workers_is_an_error():
    with pytest.raises(ValueError, match="workers must be >= 1"):
        run_jobs(seed_parts, [([1], 1)], workers=0)


def test_a_workers_warnings_and_notes_are_given_here_once_through_filters_and_logging(caplog):
    with warnings.catch_warnings(record=True) as seen, caplog.at_level(logging.INFO, "deepctrl"):
        warnings.simplefilter("always")
        warnings.filterwarnings("ignore", message="warned b")
        assert run_jobs(warn_and_note, [("a",), ("a",), ("b",)], workers=2) == ["a", "a", "b"]
    assert [(w.category, str(w.message)) for w in seen] == [(RuntimeWarning, "warned a")]
    assert [r.getMessage() for r in caplog.records] == ["noted a", "noted b"]


def test_workers_draw_no_bars_when_standard_error_is_no_terminal(monkeypatch):
    class Terminal:
        def isatty(self) -> bool:
            return True

    assert run_jobs(bar_line, [(0,), (1,)], workers=2) == [None, None]  # pytest captures it
    monkeypatch.setattr("sys.stderr", Terminal())
    assert set(run_jobs(bar_line, [(0,), (1,)], workers=2)) <= {0, 1}  # a line each
