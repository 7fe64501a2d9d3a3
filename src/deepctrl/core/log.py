"""Informational lines for the user ("which path trains this model", "where rho came
from"), through the ``deepctrl`` logger.

When the program has configured no logging, the lines go to stderr; configure the
``deepctrl`` logger (or the root logger) to redirect or silence them, e.g.
``logging.getLogger("deepctrl").setLevel(logging.WARNING)``. Under ``torchrun`` only rank 0
speaks.
"""

from __future__ import annotations

import logging
import os

logger = logging.getLogger("deepctrl")


def is_worker() -> bool:
    """True in a data-parallel process other than rank 0 (started by ``torchrun``): such a
    process neither prints nor writes files, since rank 0 holds the same results."""
    return int(os.environ.get("RANK", "0")) > 0


class _AboveBars(logging.StreamHandler):
    """Writes each line above any progress bar on the terminal (``tqdm.write``), instead of
    into the middle of it."""

    def emit(self, record: logging.LogRecord) -> None:
        from tqdm import tqdm

        try:
            tqdm.write(self.format(record), file=self.stream)
        except Exception:  # as logging.StreamHandler does: a failed line must not stop training
            self.handleError(record)


def info(message: str) -> None:
    """Tell the user ``message`` once, on one line."""
    if is_worker():
        return
    if not logger.handlers and not logging.getLogger().handlers:
        handler = _AboveBars()
        handler.setFormatter(logging.Formatter("deepctrl: %(message)s"))
        logger.addHandler(handler)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)
    logger.info(message)
