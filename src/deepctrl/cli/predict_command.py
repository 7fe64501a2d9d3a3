"""``deepctrl predict``: a model's predictions for every row of a table, written to a
table file or to standard output.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.alpha_options import alpha_option, row_alphas, verification_goal
from deepctrl.cli.column_checks import id_frame
from deepctrl.cli.one_line_errors import one_line_errors
from deepctrl.cli.option_checks import check_output_path
from deepctrl.cli.scored_table import model_and_frame, model_rows
from deepctrl.cli.table_cleaning import row_lines
from deepctrl.cli.table_output import STDOUT, check_table_name, write_table
from deepctrl.cli.table_reading import text_columns
from deepctrl.core.ratio_text import ratio_text
from deepctrl.tabular.table_messages import rows_have


def _note_empty_rows(frame: pd.DataFrame, path: Path) -> None:
    """A note on the rows with no value in any column (separators only, as spreadsheets
    write formatted empty rows), which are predicted as rows of missing values are."""
    empty = np.flatnonzero(frame.isna().all(axis=1).to_numpy())
    if len(empty):
        print(
            f"note: {path}: {rows_have(len(empty))} no value in any column (the first on "
            f"{row_lines(empty, path)}), as spreadsheets write empty rows; each is predicted "
            "from the training means, as missing values are: delete those lines to leave "
            "them out",
            file=sys.stderr,
        )


@one_line_errors
def predict_command(
    model: str,
    data: str,
    out: str,
    alpha: str = "auto",
    min_verification: float | str | None = None,
    alpha_column: str | None = None,
    id_columns: Sequence[str] = (),
) -> int:
    """``deepctrl predict``: predictions for every row of ``data``, in order, to a table
    (:func:`deepctrl.cli.table_output.write_table`: CSV, compressed CSV, Parquet, or CSV to
    standard output for ``-``), the ``id_columns`` first; at one alpha, at one per row
    (``alpha_column``), or with ``min_verification`` at the smallest alpha whose
    verification ratio on these rows reaches it (no labels needed; nothing is written when
    no alpha does)."""
    to_stdout = out == STDOUT
    out_path = Path(out) if to_stdout else check_output_path(out, model, data)
    if not to_stdout:
        check_table_name(out)
    report = sys.stderr if to_stdout else sys.stdout  # keep standard output for the table
    value = alpha_option(alpha)
    goal = None if min_verification is None else verification_goal(min_verification)
    if sum((goal is not None, value != "auto", alpha_column is not None)) > 1:
        raise ValueError(
            "--alpha, --alpha-column and --min-verification exclude each other: give one"
        )
    est, frame, columns, _ = model_and_frame(model, data, drop=False, with_target=False)
    _note_empty_rows(frame, Path(data))
    ids = id_frame(frame, id_columns, data)  # a model input may be one too: a panel's keys
    named = (
        [est.target_name_, *(f"proba_{c}" for c in est.classes_)]
        if hasattr(est, "predict_proba")
        else est.output_names_
    )
    clash = [c for c in ids.columns if c in named]
    if clash:
        raise ValueError(f"id column {clash[0]!r} has the name of a column the predictions fill")
    ids = text_columns(data, ids, list(ids.columns))  # written back as read: 00123 stays
    if est.rule_ is None and (value != "auto" or alpha_column is not None):
        print("note: the model has no rules, so alpha has no effect", file=sys.stderr)
    X = model_rows(est, frame, columns)
    chosen: Any
    if alpha_column is not None:
        chosen = row_alphas(frame, alpha_column, data)
        if alpha_column in columns:
            print(
                f"note: alpha column {alpha_column!r} is also one of the model's inputs; "
                "its values are used as both",
                file=sys.stderr,
            )
        at = f"per-row alpha (column {alpha_column!r}, {chosen.min():g} to {chosen.max():g})"
    elif goal is not None:
        chosen, ratio = est.alpha_for_verification(X, goal)
        judged, rows = est.sweep(X, None, [chosen]).attrs["judged_rows"]
        on = f"{rows} rows" if judged == rows else f"the {judged} of {rows} rows the rules judge"
        print(
            f"chosen alpha {chosen:g}: verification ratio {ratio_text(ratio, goal)} on {on} "
            f"(goal {goal:g})",
            file=report,
        )
        at = f"alpha {chosen:g}"
    else:
        chosen = est.resolve_alpha(None if value == "auto" else value)
        at = f"alpha {chosen:g}"
    if hasattr(est, "predict_proba"):  # a classifier
        proba = est.predict_proba(X, chosen)
        result = pd.DataFrame({est.target_name_: est.classes_[proba.argmax(axis=1)]})
        for j, c in enumerate(est.classes_):
            result[f"proba_{c}"] = proba[:, j]
    else:
        pred = est.predict(X, chosen).reshape(len(X), -1)
        result = pd.DataFrame(pred, columns=est.output_names_)
    result = pd.concat([ids.reset_index(drop=True), result], axis=1)
    write_table(result, out)
    where = "standard output" if to_stdout else out_path
    rows = f"{len(result)} prediction" + ("s" if len(result) != 1 else "")
    print(f"wrote {rows} at {at} to {where}", file=report)
    return 0
