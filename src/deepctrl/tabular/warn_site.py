"""Where a warning about the user's data points: at the user's own line, however deep in
deepctrl it was raised (`predict` reaches the encoder through more calls than `sweep`)."""

from __future__ import annotations

import sys
from pathlib import Path

_PACKAGE = str(Path(__file__).resolve().parent.parent)


def outside_stacklevel() -> int:
    """The `stacklevel` for `warnings.warn`, called from the function that warns, that names
    the first caller outside the deepctrl package.

    >>> outside_stacklevel() >= 1
    True
    """
    level, frame = 1, sys._getframe(1)
    while frame.f_back is not None and frame.f_code.co_filename.startswith(_PACKAGE):
        frame, level = frame.f_back, level + 1
    return level
