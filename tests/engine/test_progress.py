"""What `dc.fit`'s progress bar shows: the best validation loss once there is one, and a
compilation that does not count in the rate."""

from __future__ import annotations

import pytest
import torch

import deepctrl as dc


class RecordingBar:
    def __init__(self, total: int, desc: str, enabled: bool) -> None:
        self.calls: list[tuple] = []
        RecordingBar.last = self

    def update(self, n: int = 1) -> None:
        self.calls.append(("update", n))

    def set_postfix(self, **kwargs) -> None:
        self.calls.append(("postfix", kwargs))

    def set_postfix_str(self, text: str) -> None:
        self.calls.append(("postfix_str", text))

    def reset(self) -> None:
        self.calls.append(("reset",))

    def close(self) -> None:
        self.calls.append(("close",))


@pytest.fixture
def bar(monkeypatch):
    monkeypatch.setattr("deepctrl.engine.trainer.progress_bar", RecordingBar)
    return RecordingBar


def _data(n):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 3, generator=g, dtype=torch.float64)
    return X, X.sum(1, keepdim=True)


def _net():
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()


def test_best_is_shown_only_when_there_is_a_validation_loss(bar):
    rule = dc.rules.Monotonic(0, "increasing")
    dc.fit(_net(), rule, train=_data(64), max_epochs=2, progress=True)
    postfixes = [c[1] for c in bar.last.calls if c[0] == "postfix"]
    assert postfixes == [{"seeds": 1}, {"seeds": 1}]
    dc.fit(_net(), rule, train=_data(64), val=_data(32), max_epochs=2, progress=True)
    postfixes = [c[1] for c in bar.last.calls if c[0] == "postfix"]
    assert len(postfixes) == 2 and all(float(p["best"]) < float("inf") for p in postfixes)


def test_a_compiled_run_says_so_and_restarts_the_clock_after_the_first_epoch(bar):
    # a Python branch on a value: the compilation is tried on the second batch and given up
    rule = dc.rules.Penalty(lambda x, y: y[:, 0] if bool((y > 0).all()) else y[:, 0] - 1)
    dc.fit(
        _net(),
        rule,
        dc.methods.DeepCTRL(rho=1.0),
        train=_data(200),
        max_epochs=2,
        compile=True,
        progress=True,
    )
    kinds = [c[0] for c in bar.last.calls]
    assert bar.last.calls[0] == ("postfix_str", "compiling the training step")
    assert kinds[1:4] == ["reset", "update", "postfix"] and kinds.count("reset") == 1


def _lines(text: str) -> list[str]:
    """What a terminal keeps of ``text``: each line as its last carriage return leaves it."""
    return [line.split("\r")[-1].rstrip() for line in text.split("\n")]


def test_a_stage_shows_its_line_and_lets_notes_pass_above_it(monkeypatch):
    import io
    import sys

    from deepctrl.engine.progress import stage

    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    with stage("reading sales.csv", enabled=True):
        print("note: 3 rows have no price", file=sys.stderr)
        sys.stderr.write("warning: a wide")
        sys.stderr.write(" column\nand a line left open")
    assert sys.stderr is err  # given back
    written = err.getvalue()
    assert "reading sales.csv..." in written
    kept = _lines(written)
    assert "note: 3 rows have no price" in kept  # a line of its own, not after the stage's
    assert "warning: a wide column" in kept and kept[-2:] == ["and a line left open", ""]
    assert not any("reading" in line and "note" in line for line in kept)
    with stage("reading sales.csv", enabled=False):
        print("plain", file=sys.stderr)
    assert err.getvalue() == written + "plain\n"


def test_an_interrupted_fit_takes_its_bar_off_the_screen(bar):
    class Interrupt(dc.Callback):
        def on_epoch_end(self, end):
            if end.epoch == 2:
                raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        dc.fit(
            _net(),
            dc.rules.Monotonic(0, "increasing"),
            train=_data(64),
            max_epochs=5,
            progress=True,
            callbacks=[Interrupt()],
        )
    assert bar.last.calls[-1] == ("close",)
