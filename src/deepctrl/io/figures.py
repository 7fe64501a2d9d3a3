"""PNG figures drawn off-screen and written atomically. They are made without pyplot, so
a notebook's backend and its open figures are left as they were.

>>> fig, ax = subplots()
>>> _ = ax.plot([0, 1], [1, 0])
>>> import tempfile, pathlib
>>> save_figure(fig, pathlib.Path(tempfile.mkdtemp()) / "line.png").stat().st_size > 0
True
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Any, Literal

from deepctrl.io.file_format import write_atomic


def subplots(
    *args: Any,
    figsize: tuple[float, float] | None = None,
    layout: Literal["constrained", "compressed", "tight"] | None = None,
    **kwargs: Any,
) -> Any:
    """A figure of ``figsize`` inches with its ``layout`` engine, and its axes
    (``Figure.subplots``' arguments), with a clear error if matplotlib is absent."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ValueError("figures need matplotlib: pip install 'deepctrl[tabular]'") from None
    fig = Figure(figsize=figsize, layout=layout)
    return fig, fig.subplots(*args, **kwargs)


def save_figure(fig: Any, path: str | os.PathLike[str]) -> Path:
    """Save ``fig`` as PNG atomically."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, bbox_inches="tight")
    return write_atomic(path, buf.getvalue())
