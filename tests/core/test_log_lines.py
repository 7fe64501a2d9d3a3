"""The library's information lines go above a progress bar, not into it."""

from __future__ import annotations

import io
import logging

from tqdm import tqdm

from deepctrl.core import log


def test_an_info_line_during_a_progress_bar_gets_a_line_of_its_own(monkeypatch):
    stream = io.StringIO()
    bar = tqdm(total=3, file=stream, ascii=True)
    bar.update(1)
    monkeypatch.setattr(log.logger, "handlers", [])
    monkeypatch.setattr(log.logger, "level", logging.NOTSET)
    monkeypatch.setattr(logging.getLogger(), "handlers", [])  # no logging configured
    monkeypatch.setattr("sys.stderr", stream)  # the handler writes where stderr is
    log.info("compile: the training step is compiled")
    bar.update(1)
    bar.close()
    text = stream.getvalue()
    # the bar's line is wiped (a carriage return after spaces), the message gets its own
    # line, and the bar is drawn again below it
    before, line, after = text.partition("deepctrl: compile: the training step is compiled\n")
    assert line and before.endswith("\r") and before.rstrip("\r").endswith(" ")
    assert "2/3" in after
