"""dc.fit's callbacks: what they see at every epoch agrees with the fit's own record, and a
callback can stop training."""

from __future__ import annotations

import math
import warnings

import pytest
import torch

import deepctrl as dc
from deepctrl.engine.options import scheduled_lr


def data(n: int = 96, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] * 2 + 0.1 * torch.randn(n, 1, generator=g)


def small() -> dc.DeepCTRL:
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


class Recorder(dc.Callback):
    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []
        self.ends: list[dc.EpochEnd] = []

    def on_epoch_start(self, epoch: int) -> None:
        self.events.append(("start", epoch))

    def on_epoch_end(self, end: dc.EpochEnd) -> None:
        self.events.append(("end", end.epoch))
        self.ends.append(end)


def test_every_epoch_end_matches_the_fits_history():
    X, y = data()
    recorder = Recorder()
    result = dc.fit(
        small(),
        dc.rules.Monotonic(0, "increasing"),
        train=(X[:64], y[:64]),
        val=(X[64:], y[64:]),
        max_epochs=6,
        patience=50,
        val_every=2,
        seeds=[3, 5],
        lr=1e-2,
        lr_schedule="cosine",
        batch_size=16,
        callbacks=[recorder],
    )
    assert recorder.events == [(kind, e) for e in range(1, 7) for kind in ("start", "end")]
    for end in recorder.ends:
        assert end.seeds == [3, 5] and end.train_seconds > 0
        assert end.lr == pytest.approx(scheduled_lr("cosine", 1e-2, end.epoch, 6))
        for j, history in enumerate(result.history):
            assert end.train_loss[j] == history["train_loss"][end.epoch - 1]
        if end.epoch % 2:
            assert end.val_loss is None
        else:
            k = result.history[0]["val_epoch"].index(end.epoch)
            assert end.val_loss == [h["val_loss"][k] for h in result.history]


def test_a_callback_stops_training_and_the_best_weights_stay():
    X, y = data()
    seen: list[int] = []

    def stop_at_three(end: dc.EpochEnd) -> bool:
        seen.append(end.epoch)
        return end.epoch == 3

    result = dc.fit(
        small(),
        dc.rules.Monotonic(0, "increasing"),
        train=(X[:64], y[:64]),
        val=(X[64:], y[64:]),
        max_epochs=20,
        patience=50,
        seeds=[0, 1],
        callbacks=[stop_at_three],
    )
    assert seen == [1, 2, 3] and result.epochs == [3, 3]
    for h, best in zip(result.history, result.val_loss, strict=True):
        assert best == min(h["val_loss"])


def test_a_stopped_seed_leaves_the_list_and_bad_callbacks_are_refused():
    X, y = data()
    ends: list[dc.EpochEnd] = []
    # patience 1 with a learning rate this large: some seed stops before the last epoch
    result = dc.fit(
        small(),
        dc.rules.Monotonic(0, "increasing"),
        train=(X[:64], y[:64]),
        val=(X[64:], y[64:]),
        max_epochs=15,
        patience=1,
        lr=0.05,
        seeds=[0, 1, 2, 3],
        callbacks=[ends.append],
    )
    for end in ends:
        assert end.seeds == [
            s for s, e in zip([0, 1, 2, 3], result.epochs, strict=True) if e >= end.epoch
        ]
    assert min(result.epochs) < 15 and len(ends[-1].seeds) < 4  # one seed did stop
    with pytest.raises(ValueError, match="a callback is a deepctrl.Callback or a function"):
        dc.fit(
            small(),
            dc.rules.Monotonic(0, "increasing"),
            train=(X, y),
            max_epochs=1,
            callbacks=["log"],
        )


def test_the_documented_callback_example_runs(capsys):
    import re
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "core-api.md").read_text()
    section = page[page.index("### Callbacks") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    namespace: dict = {}
    exec(compile(block, "core-api.md", "exec"), namespace)
    assert namespace["result"].epochs == [5, 5]
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "2", "3", "4", "5"]


def test_a_callback_sees_the_methods_state_after_every_epoch():
    from deepctrl.core.method_state import SeedState
    from deepctrl.engine.callbacks import per_copy_values

    X, y = data()
    rule = dc.rules.Monotonic(0, "increasing")
    seen = Recorder()
    result = dc.fit(
        small(),
        rule,
        dc.methods.LagrangianDual(dual_lr=1.0),
        train=(X, y),
        max_epochs=3,
        seeds=[0, 1],
        callbacks=[seen],
        progress=False,
    )
    states = [end.method_state["multipliers"] for end in seen.ends]
    assert [len(s) for s in states] == [2, 2, 2] and all(len(m) == 1 for m in states[0])
    final = result.state["multipliers"].tolist()
    assert states[-1] == final  # the state the fit returns, value for value
    fixed = Recorder()
    dc.fit(
        small(),
        rule,
        dc.methods.DeepCTRL(rho=0.25),
        train=(X, y),
        max_epochs=2,
        seeds=[0, 1],
        callbacks=[fixed],
        progress=False,
    )
    assert [end.method_state for end in fixed.ends] == [{"rho": [0.25, 0.25]}] * 2
    stacked = SeedState(3, parts=[SeedState(2), SeedState(1)])
    stacked.parts[0].add("rho", torch.tensor([0.5, 2.0], dtype=torch.float64))
    stacked.parts[1].add("multipliers", torch.tensor([[1.5, 0.0]]))
    assert per_copy_values(stacked) == {
        "rho": [0.5, 2.0, None],
        "multipliers": [None, None, [1.5, 0.0]],
    }


def test_a_stop_between_validations_validates_the_epoch_it_stops_at():
    X, y = data()
    result = dc.fit(
        small(),
        dc.rules.Monotonic(0, "increasing"),
        train=(X[:64], y[:64]),
        val=(X[64:], y[64:]),
        max_epochs=50,
        val_every=5,
        lr=0.02,
        callbacks=lambda end: end.epoch == 4,  # one callback, given alone
    )
    assert result.epochs == [4] and result.best_epochs == [4]
    assert result.history[0]["val_epoch"] == [4]
    with torch.no_grad():
        mae = (result.model(X[64:], alpha=0.0) - y[64:]).abs().mean()
    assert float(mae) == pytest.approx(result.val_loss[0], rel=1e-6)


def test_only_true_stops_training_and_another_value_is_warned_about_once():
    X, y = data()
    written: list[str] = []

    def log(end: dc.EpochEnd) -> int:  # returns what it wrote, as file.write does
        written.append(f"{end.epoch}\n")
        return len(written[-1])

    with pytest.warns(UserWarning, match="a callback returned int 2, not True, False or None") as w:
        result = dc.fit(
            small(), None, dc.methods.TaskOnly(), train=(X, y), max_epochs=3, callbacks=[log]
        )
    assert result.epochs == [3] and len(w) == 1
    with pytest.raises(ValueError, match="callbacks must be a list of deepctrl.Callback"):
        dc.fit(small(), None, dc.methods.TaskOnly(), train=(X, y), max_epochs=1, callbacks=5)


def test_a_count_of_folds_is_one_clear_error():
    X, y = data()
    for fit in (dc.fit, lambda *a, **k: dc.fit_methods(a[0], a[1], [a[2]], **k)):
        with pytest.raises(ValueError, match="folds takes one array of row indices per seed"):
            fit(small(), None, dc.methods.TaskOnly(), train=(X, y), max_epochs=1, folds=5)


def test_a_seed_whose_training_goes_nan_after_a_finite_validation_is_warned_about():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(300, 3, generator=g)
    y = torch.poisson(torch.exp(2 * X[:, :1]), generator=g)
    with pytest.warns(
        RuntimeWarning,
        match=r"the training loss went NaN or infinite \(seed 0 "
        r"at epoch 2, seed 1 at epoch 2\); those models keep the weights of "
        r"their best validation epoch \(seed 0: epoch 1, seed 1: "
        r"epoch 1\)",
    ):
        result = dc.fit(
            dc.DeepCTRL(dc.mlp(3, 16), dc.mlp(3, 16), dc.mlp(32, 1)),
            dc.rules.Monotonic(0, "increasing"),
            dc.methods.TaskOnly(),
            train=(X[:200], y[:200]),
            val=(X[200:], y[200:]),
            task_loss="poisson",
            lr=0.6,
            batch_size=16,
            max_epochs=30,
            patience=5,
            seeds=[0, 1],
        )
    assert result.best_epochs == [1, 1]


def test_a_validation_loss_of_minus_infinity_is_never_the_best():
    torch.manual_seed(0)
    X = torch.randn(400, 3)
    y = -X[:, :1] + 0.1 * torch.randn(400, 1)

    def underflowing(y_hat: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        loss = (y_hat - target).abs()[:, 0]
        return torch.where(y_hat[:, 0] > 1.5, torch.full_like(loss, -float("inf")), loss)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        result = dc.fit(
            dc.DeepCTRL(dc.mlp(3, 16, 8), dc.mlp(3, 16, 8), dc.mlp(16, 8, 1)),
            dc.rules.Monotonic(0, "decreasing"),
            dc.methods.TaskOnly(),
            train=(X[:300], y[:300]),
            val=(X[300:], y[300:]),
            task_loss=underflowing,
            max_epochs=6,
            lr=0.01,
        )
    val = result.history[0]["val_loss"]
    assert float("-inf") in val  # the loss did underflow on the validation rows
    finite = [v for v in val if math.isfinite(v)]
    assert result.val_loss == [min(finite)]
    assert result.best_epochs == [result.history[0]["val_epoch"][val.index(min(finite))]]
