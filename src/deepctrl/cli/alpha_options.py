"""The options that say at which alpha sweep and predict run: ``--alphas`` (a grid),
``--alpha`` (one), ``--alpha-column`` (one per row) and ``--min-verification`` (the goal
that picks one without labels).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.column_checks import no_column
from deepctrl.cli.table_cleaning import row_lines
from deepctrl.tabular.alpha_choice import CHOICES, check_alpha
from deepctrl.tabular.table_messages import rows_have, shown


def verification_goal(value: Any) -> float:
    """``--min-verification`` (text or number) as a float in (0, 1], or a one-line error."""
    try:
        goal = float(value)
        if not 0 < goal <= 1:
            raise ValueError
    except (TypeError, ValueError):
        raise ValueError(
            f"--min-verification must be a number greater than 0 and at most 1, got {value!r}"
        ) from None
    return goal


MAX_ALPHA = 2.0
"""The largest alpha the commands take. Training draws alphas from 0 to 1; above 1 the rule's
direction is extrapolated, and beyond 2 further than the whole range training saw, where
predictions grow without bound (and overflow to infinity)."""
_BEYOND = (
    f"at most {MAX_ALPHA:g} (training drew alphas from 0 to 1; beyond {MAX_ALPHA:g} the rule's "
    "direction is extrapolated further than the whole training range)"
)


def parse_alphas(text: str) -> list[float]:
    """``start:stop:step`` (stop included) or a comma-separated list of numbers."""
    try:
        if ":" in text:
            start, stop, step = (float(p) for p in text.split(":"))
            if not step > 0 or stop < start or (stop - start) / step > 10_000:
                raise ValueError
            n = math.floor((stop - start) / step + 1e-9)
            values = [round(start + i * step, 10) for i in range(n + 1)]
        else:
            values = [float(p) for p in text.split(",")]
    except ValueError:
        raise ValueError(
            f"--alphas must be START:STOP:STEP (e.g. 0:1:0.1) or numbers separated "
            f"by commas, got {text!r}"
        ) from None
    if not values or not all(math.isfinite(v) for v in values):
        raise ValueError(f"--alphas must hold finite numbers, got {text!r}")
    if max(values) > MAX_ALPHA:
        raise ValueError(
            f"--alphas {text}: alpha {max(values):g} is too large; alpha must be {_BEYOND}"
        )
    return values


def alpha_option(alpha: str) -> float | str:
    """``--alpha``: 'auto', 'min_error' or a number >= 0 (above 1 with a note that it
    extrapolates beyond training)."""
    try:
        number: float | None = float(alpha)
    except ValueError:
        number = None
    if number is not None and not math.isfinite(number):  # 1e400 reads as inf: say what was typed
        raise ValueError(f"--alpha must be a finite number, 'auto' or 'min_error', got {alpha}")
    value = check_alpha(alpha if alpha in CHOICES or number is None else number, "--alpha")
    if isinstance(value, str):
        return value
    if value > MAX_ALPHA:
        raise ValueError(f"--alpha {alpha}: alpha must be {_BEYOND}")
    if value > 1:
        print(
            f"note: alpha {value:g} is above 1: the rule's direction is extrapolated beyond "
            "training (alphas were drawn from 0 to 1)",
            file=sys.stderr,
        )
    return value


def row_alphas(frame: pd.DataFrame, column: str, path: str) -> np.ndarray:
    """``--alpha-column``: one rule strength per row, numbers >= 0 (a note above 1)."""
    if column not in frame.columns:
        raise ValueError(no_column(path, "alpha", column, list(frame.columns)))
    values = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        first = frame[column].iloc[bad[0]]
        what = "none" if pd.isna(first) else f"none, such as {shown(first)}"
        raise ValueError(
            f"{path}: alpha column {column!r} needs a finite number on every row: "
            f"{rows_have(len(bad))} {what} ({row_lines(bad, Path(path))})"
        )
    if (values < 0).any():
        row = int(np.flatnonzero(values < 0)[0])
        raise ValueError(
            f"{path}: alpha column {column!r} must be >= 0: {_line(row, path)} has {values[row]:g}"
        )
    if (values > MAX_ALPHA).any():
        row = int(np.flatnonzero(values > MAX_ALPHA)[0])
        raise ValueError(
            f"{path}: alpha column {column!r}: {_line(row, path)} has {values[row]:g}; alpha must "
            f"be {_BEYOND}"
        )
    if (values > 1).any():
        print(
            f"note: {rows_have(int((values > 1).sum()))} alpha above 1: the rule's direction "
            "is extrapolated beyond training (alphas were drawn from 0 to 1)",
            file=sys.stderr,
        )
    return values


def _line(row: int, path: str) -> str:
    """'line 5' of data row ``row`` of a CSV file as an editor numbers it, 'row 4' of a
    Parquet file."""
    return row_lines(np.array([row]), Path(path))
