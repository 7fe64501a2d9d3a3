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


def test_logging_configured_after_a_line_is_obeyed_by_the_next(monkeypatch, capsys):
    """No handler or level is left behind: a program that sets up logging after deepctrl
    spoke (to a file, at WARNING) gets no INFO line in it and none on stderr."""
    monkeypatch.setattr(log.logger, "handlers", [])
    monkeypatch.setattr(log.logger, "level", logging.NOTSET)
    root = logging.getLogger()
    monkeypatch.setattr(root, "handlers", [])
    log.info("rho measured on the first batch")
    assert capsys.readouterr().err == "deepctrl: rho measured on the first batch\n"
    assert log.logger.handlers == [] and log.logger.level == logging.NOTSET
    stream = io.StringIO()
    root.addHandler(logging.StreamHandler(stream))  # the program's own, at WARNING
    log.info("rho measured on the first batch")
    assert capsys.readouterr().err == "" and stream.getvalue() == ""
    log.logger.setLevel(logging.INFO)  # and asked for deepctrl's lines: they go there
    log.info("the training step is compiled")
    assert stream.getvalue() == "the training step is compiled\n"
