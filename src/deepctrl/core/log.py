"""Informational lines for the user ("which path trains this model", "where rho came
from"), through the ``deepctrl`` logger.

When the program has configured no logging, the lines go to stderr; configure the
``deepctrl`` logger (or the root logger) to redirect or silence them, e.g.
``logging.getLogger("deepctrl").setLevel(logging.WARNING)``. Under ``torchrun`` only rank 0
speaks.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
from collections.abc import Iterator

logger = logging.getLogger("deepctrl")
_collected: list[str] | None = None
"""The lines said in a worker process while it runs a job, for the parent to say."""


@contextlib.contextmanager
def collected() -> Iterator[list[str]]:
    """Keep the lines :func:`info` says in the block, in order, instead of saying them.

    >>> with collected() as lines:
    ...     info("rho measured")
    >>> lines
    ['rho measured']
    """
    global _collected
    before, _collected = _collected, []
    try:
        yield _collected
    finally:
        _collected = before


def is_worker() -> bool:
    """True in a data-parallel process other than rank 0 (started by ``torchrun``): such a
    process neither prints nor writes files, since rank 0 holds the same results."""
    return int(os.environ.get("RANK", "0")) > 0


def info(message: str) -> None:
    """Tell the user ``message`` once, on one line: through the ``deepctrl`` logger when the
    program has configured logging (a handler on it or an ancestor, or a level on it), else
    on stderr above any progress bar. Nothing is installed, so logging configured later is
    obeyed by the next line."""
    if is_worker():
        return
    if _collected is not None:
        _collected.append(message)
        return
    if logger.hasHandlers() or logger.level != logging.NOTSET:
        logger.info(message)
        return
    from tqdm import tqdm

    line = f"deepctrl: {message}"
    if getattr(tqdm, "_instances", True):  # a bar on screen: write above it
        tqdm.write(line, file=sys.stderr)
    else:  # tqdm.write would fix the multiprocessing start method (its lock)
        print(line, file=sys.stderr)
