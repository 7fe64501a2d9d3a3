"""Progress bars that cost nothing when switched off."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Any, TextIO

_position: int | None = 0
"""The terminal line of this process's bars; None in a worker process that draws none."""


def set_bar_position(position: int | None) -> None:
    """Draw this process's bars on terminal line ``position`` (one line per worker
    process), or none at all (None: a worker whose parent writes to no terminal)."""
    global _position
    _position = position


class _Silent:
    def update(self, n: int = 1) -> None:
        return None

    def set_postfix(self, **kwargs: Any) -> None:
        return None

    def set_postfix_str(self, text: str) -> None:
        return None

    def reset(self) -> None:
        return None

    def close(self) -> None:
        return None


def progress_bar(
    total: int, desc: str, enabled: bool, unit: str = "it", leave: bool = False
) -> Any:
    """A tqdm bar over ``total`` steps counted in ``unit``, or a silent stand-in when
    ``enabled`` is False (no tqdm object at all: even a disabled one takes tqdm's
    multiprocessing lock, which fixes the process's start method)."""
    if not enabled or _position is None:
        return _Silent()
    from tqdm.auto import tqdm

    return tqdm(
        total=total, desc=desc, unit=unit, leave=leave, dynamic_ncols=True, position=_position
    )


class _AboveTheLine:
    """Standard error while a stage shows: each whole line written goes above the stage's
    line (a line is held until its end is written, or until the stage ends)."""

    def __init__(self, target: TextIO) -> None:
        self.target = target
        self.pending = ""

    def write(self, text: str) -> int:
        from tqdm.auto import tqdm

        whole, _, self.pending = (self.pending + text).rpartition("\n")
        if whole:
            tqdm.write(whole, file=self.target)
        return len(text)

    def flush(self) -> None:
        self.target.flush()

    def close_line(self) -> None:
        """Write a line left without its end."""
        if self.pending:
            self.target.write(self.pending + "\n")
            self.pending = ""

    def isatty(self) -> bool:
        return self.target.isatty()


@contextlib.contextmanager
def stage(desc: str, enabled: bool) -> Iterator[None]:
    """While the block runs, ``desc...`` on the progress bars' line of standard error, then
    cleared; what the block writes to standard error (notes, warnings) goes above it.
    Nothing when not ``enabled``.

    >>> with stage("reading sales.csv", enabled=False):
    ...     pass
    """
    if not enabled or _position is None:
        yield
        return
    from tqdm.auto import tqdm

    target = sys.stderr
    line = tqdm(
        total=0, desc=desc, bar_format="{desc}...", leave=False, position=_position, file=target
    )
    above = _AboveTheLine(target)
    try:
        with contextlib.redirect_stderr(above):
            yield
    finally:
        line.close()
        above.close_line()
