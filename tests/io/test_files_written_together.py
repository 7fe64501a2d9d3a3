"""Files written as a set (a report and its figure) replace their old versions together:
an interrupt leaves the whole last set, or the whole new one."""

from __future__ import annotations

import os
import signal

import pytest

from deepctrl.io import file_format
from deepctrl.io.file_format import write_atomic, written_together


def test_an_interrupt_during_the_renames_waits_until_every_file_is_in_place(tmp_path, monkeypatch):
    replace = os.replace

    def interrupted_replace(src, dst):
        if not list(tmp_path.glob("*.md")):  # the first rename: Ctrl-C arrives now
            os.kill(os.getpid(), signal.SIGINT)
        replace(src, dst)

    monkeypatch.setattr(file_format.os, "replace", interrupted_replace)
    with pytest.raises(KeyboardInterrupt), written_together():
        write_atomic(tmp_path / "report.md", b"new report")
        write_atomic(tmp_path / "figure.png", b"new figure")
    assert (tmp_path / "report.md").read_bytes() == b"new report"
    assert (tmp_path / "figure.png").read_bytes() == b"new figure"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["figure.png", "report.md"]


def test_a_block_inside_another_leaves_the_renames_to_the_outer_one(tmp_path):
    (tmp_path / "a.json").write_bytes(b"old")
    with pytest.raises(ValueError, match="the figure failed"), written_together():
        with written_together():
            write_atomic(tmp_path / "a.json", b"new")
        assert (tmp_path / "a.json").read_bytes() == b"old"
        raise ValueError("the figure failed")
    assert [p.name for p in tmp_path.iterdir()] == ["a.json"]
    assert (tmp_path / "a.json").read_bytes() == b"old"
