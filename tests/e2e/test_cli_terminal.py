"""``deepctrl fit`` on a terminal: what it is doing shows on one line while it reads,
checks, encodes, trains and chooses alpha, and leaves the lines it prints intact."""

from __future__ import annotations

import fcntl
import os
import pty
import shutil
import struct
import termios
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

STAGES = [
    "reading sales.csv...",
    "checking 300 rows...",
    "checking the rules...",
    "reading the table...",
    "encoding the table...",
    "choosing alpha on the validation rows...",
]


def _on_a_terminal(args: list[str], cwd: Path, timeout: float = 300) -> tuple[int, str]:
    """Run ``args`` with a terminal of 120 columns as its output; its exit code and what
    it wrote."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: the command, its output the terminal
        os.chdir(cwd)
        os.environ["OMP_NUM_THREADS"] = "1"
        os.execv(args[0], args)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), out.decode(errors="replace")


def _pieces(text: str) -> list[str]:
    """Every piece the terminal was given between carriage returns and line ends."""
    return [p.strip() for p in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


@pytest.fixture()
def sales(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    price = rng.uniform(1, 9, 300).round(2)
    table = pd.DataFrame({"price": price, "sales": 10 - price + rng.normal(size=300).round(2)})
    table.to_csv(tmp_path / "sales.csv", index=False)
    return tmp_path


def test_fit_shows_each_stage_then_leaves_its_summary_intact(sales):
    exe = shutil.which("deepctrl")
    assert exe is not None
    args = ["sales.csv", "--target", "sales", "--monotonic", "price=decreasing"]
    code, text = _on_a_terminal(
        [exe, "fit", *args, "--max-epochs", "2", "--out", "m.deepctrl"], sales
    )
    assert code == 0, text
    pieces = _pieces(text)
    found = [pieces.index(stage) for stage in STAGES]
    assert found == sorted(found)  # shown in the order the work is done
    assert any(p.startswith("DeepCTRLRegressor:") and "2/2" in p for p in pieces)
    summary = [line.strip() for line in text.replace("\r\n", "\n").split("\n")]
    assert "model written to m.deepctrl" in [line.split("\r")[-1] for line in summary]
    for line in summary:  # a printed line never shares its line with a stage
        kept = line.split("\r")[-1]
        assert not any(kept.startswith(s) and kept != s for s in STAGES), line
    code, quiet = _on_a_terminal(
        [exe, "fit", *args, "--max-epochs", "2", "--out", "q.deepctrl", "--no-progress"], sales
    )
    assert code == 0 and not any(stage in quiet for stage in STAGES)
