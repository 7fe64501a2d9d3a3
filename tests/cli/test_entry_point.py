"""The ``deepctrl`` entry point: Ctrl-C while the command line loads is one line and exit
code 130, and a second Ctrl-C while an interrupted run ends is ignored."""

from __future__ import annotations

import builtins
import signal

import pytest

from deepctrl.cli import entry


@pytest.fixture
def sigint_restored():
    before = signal.getsignal(signal.SIGINT)
    yield
    signal.signal(signal.SIGINT, before)


def test_ctrl_c_while_loading_is_one_line_and_130(monkeypatch, capsys, sigint_restored):
    real_import = builtins.__import__

    def interrupted(name, *args, **kwargs):
        if name == "deepctrl.cli.main":
            raise KeyboardInterrupt
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", interrupted)
    assert entry.main() == 130
    assert capsys.readouterr().err == "deepctrl: interrupted\n"
    assert signal.getsignal(signal.SIGINT) is not signal.SIG_IGN  # nothing was running


@pytest.mark.parametrize(("code", "ignored"), [(130, True), (143, True), (0, False), (2, False)])
def test_a_second_ctrl_c_is_ignored_only_after_an_interrupted_run(
    monkeypatch, sigint_restored, code, ignored
):
    monkeypatch.setattr("deepctrl.cli.main.main", lambda: code)
    assert entry.main() == code
    assert (signal.getsignal(signal.SIGINT) is signal.SIG_IGN) == ignored
