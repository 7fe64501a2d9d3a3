"""Where a warning points: at the user's own line, however deep in deepctrl it was raised
(`predict` reaches the encoder through more calls than `sweep`, and `fit` reaches the
trainer through more than `deepctrl.fit`)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

_HERE = Path(__file__).parent.parent
_PACKAGE = tuple({str(_HERE) + os.sep, str(_HERE.resolve()) + os.sep})
"""The package's folder as imported (frames name their files so, also through a symbolic
link) and as resolved."""


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
