"""PNG figures written atomically; matplotlib on its non-interactive backend.

>>> plt = pyplot()
>>> fig, ax = plt.subplots()
>>> _ = ax.plot([0, 1], [1, 0])
>>> import tempfile, pathlib
>>> save_figure(fig, pathlib.Path(tempfile.mkdtemp()) / "line.png").stat().st_size > 0
True
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any

from deepctrl.io.file_format import write_atomic


def pyplot() -> Any:
    """matplotlib.pyplot on the non-interactive Agg backend, with a clear error if absent."""
    try:
        import matplotlib
    except ImportError:
        raise ValueError("figures need matplotlib: pip install 'deepctrl[tabular]'") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as PNG atomically and close it."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    pyplot().close(fig)
    return write_atomic(path, buf.getvalue())
