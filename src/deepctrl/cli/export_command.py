"""``deepctrl export``: a table model file as one ONNX file that onnxruntime serves alone."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pandas as pd

from deepctrl.cli.one_line_errors import one_line_errors
from deepctrl.cli.option_checks import check_output_path
from deepctrl.cli.scored_table import model_and_frame, model_rows
from deepctrl.cli.table_as_written import note_missing_spellings
from deepctrl.cli.table_reading import PARQUET_SUFFIXES, text_columns


def _note_missing_spellings(est: Any, check: str, X: pd.DataFrame) -> None:
    """A note for each text column of ``check`` whose text such as "None" the table reads
    as missing, which the ONNX file, sent that text, takes for an unseen category."""
    from deepctrl.tabular.column_kinds import CATEGORICAL

    text = [c.name for c in est.encoder_.columns if c.kind == CATEGORICAL]
    note_missing_spellings(
        check,
        X,
        text,
        '; sent as written, the ONNX file takes them for an unseen category: send "" for them',
    )


def _note_respelled_categories(est: Any, check: str, frame: pd.DataFrame) -> None:
    """A note for each category column of the CSV file ``check`` (read as ``frame``) whose
    text the command line reads as a training category though the text differs from it
    (``$20`` or ``20.0`` for the category ``20``): the ONNX file matches the exact text, so
    a server that sends the cells as written gets an unseen category."""
    from deepctrl.tabular.cell_values import category_key
    from deepctrl.tabular.column_kinds import CATEGORICAL

    columns = [c for c in est.encoder_.columns if c.kind == CATEGORICAL and c.name in frame]
    if Path(check).suffix.lower() in PARQUET_SUFFIXES or not columns:
        return
    text = text_columns(check, frame, [c.name for c in columns])
    for column in columns:
        known = {t for texts in column.spellings() for t in texts if t is not None}
        written = text[column.name].set_axis(frame.index).str.strip()
        read = frame[column.name].map(category_key)
        respelled = (written != "") & ~written.isin(known) & read.isin(known)
        if respelled.any():
            first = respelled.to_numpy().argmax()
            print(
                f"note: {check}: column {column.name!r} has {int(respelled.sum())} row(s) "
                f"whose text is not the category's ({written.iloc[first]!r} is the category "
                f"{read.iloc[first]!r}); sent as written, the ONNX file takes them for an "
                "unseen category: send the category's text",
                file=sys.stderr,
            )


@one_line_errors
def export_command(model: str, out: str, check: str | None = None) -> int:
    """Write the ONNX form of the table model in ``model`` to ``out``; with ``check`` (a
    table), run it in onnxruntime on those rows first (alphas 0 to 1, one per row; one row
    at 0 and at 1) and refuse to write unless it gives the model's predictions to 1e-4."""
    out_path = check_output_path(out, model, *([] if check is None else [check]))
    if out_path.suffix.lower() != ".onnx":
        raise ValueError(f"--out {out}: export writes an ONNX file; give a name ending in .onnx")
    if check is not None:
        est, frame, columns, _ = model_and_frame(model, check, drop=False, with_target=False)
        X = model_rows(est, frame, columns)
        _note_missing_spellings(est, check, frame[columns])
        _note_respelled_categories(est, check, frame)
    else:
        from deepctrl.tabular.estimators import load_any

        est, X = load_any(model), None
    path = est.to_onnx(out_path, X)
    from deepctrl.tabular.onnx_inputs import input_type_name

    inputs = ", ".join(f"{c.name} ({input_type_name(c)})" for c in est.encoder_.columns)
    outputs = "label, probabilities" if hasattr(est, "classes_") else "prediction"
    print(f"wrote {path} ({path.stat().st_size / 1024:.0f} KiB)")
    print(f"inputs: {inputs}, alpha (float32, one per row)")
    print(f"outputs: {outputs}; default alpha {est.alpha_:g} (in the file's metadata)")
    if X is not None:
        print(
            f"checked: on the {len(X)} row{'s' * (len(X) != 1)} of {check} the file gives "
            "the model's "
            "predictions to 1e-4"
        )
    return 0
