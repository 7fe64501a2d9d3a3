"""A model file and the table it scores (sweep, predict, export): the model file's header
and the table, read and checked as the model's training file was, before PyTorch loads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from deepctrl.cli.column_checks import spaced
from deepctrl.cli.table_cleaning import clean_columns
from deepctrl.cli.table_layout import nfc
from deepctrl.cli.table_reading import read_table
from deepctrl.io.file_format import table_model_columns
from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.table_messages import listed


def model_and_frame(
    model: str, data: str, drop: bool, with_target: bool
) -> tuple[Any, pd.DataFrame, list[str], list[str]]:
    """The table model in ``model``; the rows of ``data`` with the columns it reads (and its
    targets, when ``with_target`` and present), checked for missing values and for text among
    numbers or dates; those columns; the targets found. The model file's header and the
    table are checked before PyTorch loads."""
    try:
        needed, targets, categorical, dates, ranges, dots, categories = table_model_columns(model)
    except OSError as exc:
        raise ValueError(f"cannot read model file {model}: {exc.strerror or exc}") from None
    path = Path(data)
    # the command line reads a file's names composed (nfc); a model fitted in Python may
    # spell them otherwise, which they keep here
    spelled = {nfc(name): name for name in [*needed, *targets] if nfc(name) != name}
    frame = read_table(
        data,
        {nfc(k): v for k, v in ranges.items()},
        {nfc(k): v for k, v in dots.items()},
        {nfc(k): v for k, v in categories.items()},
    ).rename(columns=spelled)
    missing = [c for c in needed if c not in frame.columns]
    if missing:
        raise ValueError(
            f"{path} lacks column(s) the model needs: {listed([repr(c) for c in missing])}"
            + spaced(missing, list(frame.columns))
        )
    targets = targets if with_target and all(t in frame.columns for t in targets) else []
    if any(frame[t].map(is_missing_text).all() for t in targets):
        targets = []  # an empty target column (a file to be scored) is as good as none
    frame = clean_columns(
        frame,
        [*needed, *targets],
        path,
        drop,
        hint=with_target,
        targets=targets,
        categorical=categorical,
        dates=dates,
    )
    from deepctrl.tabular.estimators import load_any

    return load_any(model), frame, needed, targets


def model_rows(est: Any, frame: pd.DataFrame, columns: list[str]) -> Any:
    """The model's input columns of ``frame``; for a model fitted on an array (its columns
    named x0, x1, ...), their values, read by position as it was fitted (a frame would
    draw scikit-learn's warning that the model was fitted without names)."""
    rows = frame[columns]
    return rows if hasattr(est, "feature_names_in_") else rows.to_numpy()
