"""Result files: strict JSON (NaN and infinity as null), text and markdown tables, each
written atomically.

>>> import json, tempfile, pathlib
>>> path = write_json(pathlib.Path(tempfile.mkdtemp()) / "r.json", {"x": float("nan")})
>>> json.loads(path.read_text())
{'x': None}
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deepctrl.io.file_format import write_atomic


def _clean(obj: Any) -> Any:
    """NaN and infinity become null so that results.json is strict JSON."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_clean(v) for v in obj]
    return obj


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Write ``obj`` as indented strict JSON, atomically."""
    return write_atomic(path, (json.dumps(_clean(obj), indent=2) + "\n").encode())


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` atomically."""
    return write_atomic(path, text.encode())


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A GitHub markdown table; floats get 4 significant digits, and a ``|`` in a cell is
    escaped so that it does not end the cell.

    >>> print(markdown_table(["a", "b"], [[1, 0.123456], ["x|y", 2]]))
    | a | b |
    |---|---|
    | 1 | 0.1235 |
    | x\\|y | 2 |
    """

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return "n/a" if not math.isfinite(v) else f"{v:.4g}"
        return str(v).replace("|", "\\|")

    lines = ["| " + " | ".join(fmt(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(fmt(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)
