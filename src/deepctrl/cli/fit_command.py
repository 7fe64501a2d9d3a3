"""``deepctrl fit``: train a table model on a table and write it to a file."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from deepctrl.cli.column_checks import (
    check_count_target,
    check_table_rules,
    check_weight_column,
    check_whole_classes,
    feature_columns,
    id_frame,
    infer_task,
    no_column,
    outputs_as_labels,
)
from deepctrl.cli.one_line_errors import one_line_errors
from deepctrl.cli.option_checks import (
    check_device,
    check_loss_options,
    check_output_path,
    check_rule_class,
    check_rule_class_has_rules,
    epochs_option,
    number,
    rho_option,
    set_loss_options,
    table_rules,
)
from deepctrl.cli.rules_file import read_rules_file
from deepctrl.cli.table_as_written import note_missing_spellings
from deepctrl.cli.table_cleaning import clean_columns, row_lines
from deepctrl.cli.table_output import check_model_name
from deepctrl.cli.table_reading import read_table_dots
from deepctrl.engine.progress import stage
from deepctrl.tabular.column_kinds import NUMERIC
from deepctrl.tabular.table_messages import shown


@one_line_errors
def fit_command(
    data: str,
    target: str,
    out: str,
    task: str | None = None,
    monotonic: Sequence[str] = (),
    rules: str | None = None,
    rule_class: str | None = None,
    class_weight: str | None = None,
    val_fraction: float | str | None = None,
    cross_fit: bool = False,
    validate_last: bool = False,
    seed: int | str = 0,
    id_columns: Sequence[str] = (),
    drop_missing: bool = False,
    max_epochs: int | str = "auto",
    recipe: str = "auto",
    progress: bool = True,
    device: str = "cpu",
    categorical: Sequence[str] = (),
    loss: str | None = None,
    weight_column: str | None = None,
    rho: str = "auto",
) -> int:
    """``deepctrl fit``: train a table model and write it to ``out``; the ``categorical``
    columns are read as categories whatever their values look like; ``loss`` ("mse", "mae"
    or "poisson") trains a regressor, ``weight_column`` holds each row's sample weight (not a
    feature); ``validate_last`` holds out the file's last rows instead of random ones;
    ``rho`` is the method's balance of the losses ("auto", "paper", "epoch" or a number)."""
    out_path = check_output_path(out, data, *([] if rules is None else [rules]))
    check_model_name(out_path)
    check_device(device)
    if cross_fit and val_fraction is not None:
        raise ValueError(
            "--val-fraction and --cross-fit exclude each other: cross-fitting holds out "
            "one fold per network"
        )
    if cross_fit and validate_last:
        raise ValueError(
            "--validate-last and --cross-fit exclude each other: cross-fitting validates "
            "on every row, one fold per network"
        )
    val_fraction = 0.2 if val_fraction is None else val_fraction
    val_fraction = number(val_fraction, "--val-fraction", float, 0, 1)
    if validate_last and val_fraction == 0:
        raise ValueError("--validate-last needs validation rows: --val-fraction 0 holds none out")
    seed = number(seed, "--seed", int, 0, 2**31)
    max_epochs = epochs_option(max_epochs)
    rho_value = rho_option(rho)
    check_rule_class_has_rules(rule_class, monotonic)
    file_specs = read_rules_file(rules) if rules is not None else []
    table_rules(monotonic, rule_class, file_specs)  # the rules' own mistakes, before the table
    path = Path(data)
    with stage(f"reading {path.name}", progress):
        frame, dots = read_table_dots(data)
    rule_list = table_rules(monotonic, rule_class, file_specs, list(frame.columns))
    if target not in frame.columns:
        raise ValueError(no_column(path, "target", target, list(frame.columns)))
    ids = id_frame(frame, id_columns, data).columns
    if target in ids:
        raise ValueError(f"the target {target!r} cannot be an id column")
    weights = [] if weight_column is None else [weight_column]
    if weight_column is not None and weight_column not in frame.columns:
        raise ValueError(no_column(path, "weight", weight_column, list(frame.columns)))
    if weight_column in (target, *ids):
        raise ValueError(f"--weight-column {weight_column!r} is the target or an id column")
    all_features = [c for c in frame.columns if c not in (target, *weights) and c not in ids]
    with stage(f"checking {len(frame):,} rows", progress):
        roles = dict.fromkeys(ids, "an --id-column")  # why a column is not a feature
        if weight_column is not None:
            roles[weight_column] = "the --weight-column"
        features, left_out = feature_columns(
            frame, all_features, categorical, path, roles | {target: "the target"}
        )
        if not features:
            raise ValueError(
                f"{path} has no feature columns besides the target {target!r}"
                + (" and the id columns" if len(ids) else "")
            )
        _note_missing_spellings(frame, features, path)
        frame = clean_columns(
            frame,
            [*features, target, *weights],
            path,
            drop_missing,
            targets=[target],
            categorical=categorical,
            weights=weights,
        )
    if weight_column is not None:
        check_weight_column(frame[weight_column], path)
    if len(frame) == 1:
        raise ValueError(f"{path} has 1 data row: nothing to learn")
    if frame[target].nunique() == 1:
        raise ValueError(
            f"target column {target!r} is constant ({shown(frame[target].iloc[0])}): there is "
            "nothing to learn"
        )
    task, note = infer_task(frame[target], task, loss)
    check_rule_class(task, rule_class, inferred=note is not None)
    if task == "classification":
        rule_list = outputs_as_labels(rule_list, frame[target])
    check_loss_options(task, class_weight, loss)
    check_count_target(frame[target], path, loss)
    check_whole_classes(frame[target], task)
    for spec in monotonic:
        if spec.rpartition("=")[0].strip() == target:
            raise ValueError(f"--monotonic {spec}: {target!r} is the target; name a feature")
    from deepctrl.tabular.classifier import DeepCTRLClassifier
    from deepctrl.tabular.regressor import DeepCTRLRegressor
    from deepctrl.tabular.rule_checks import RowValueError

    kind = DeepCTRLClassifier if task == "classification" else DeepCTRLRegressor
    est = kind(
        rules=rule_list or None,
        validation_fraction=val_fraction,
        validation="cross_fit" if cross_fit else "last" if validate_last else "holdout",
        random_state=seed,
        max_epochs=max_epochs,
        recipe=recipe,
        verbose=progress,
        device=device,
        rho=rho_value,
    )
    set_loss_options(est, class_weight, loss)
    not_features = {**roles, **left_out}
    with stage("checking the rules", progress):
        check_table_rules(rule_list, frame[features], frame[target], task, not_features)
    if note:
        print(note, file=sys.stderr)
    if not cross_fit:
        note_no_validation(len(frame), val_fraction, max_epochs)
    from deepctrl.tabular.onnx_graph import onnx_name_clashes

    for name in onnx_name_clashes(features, task == "classification"):
        why = (
            "an ONNX input cannot have"
            if not name
            else "the ONNX file uses for its own input or output"
        )
        print(
            f"note: column {name!r} has a name {why}, "
            "so deepctrl export will refuse this model: rename the column to export it",
            file=sys.stderr,
        )
    sample_weight = None if weight_column is None else frame[weight_column].to_numpy(float)
    try:
        est.fit(frame[features], frame[target], sample_weight=sample_weight)
    except RowValueError as exc:  # a row named by its line, as an editor shows it
        raise ValueError(exc.at(row_lines(np.array([frame.index[exc.row]]), path))) from None
    numeric = {c.name for c in est.encoder_.columns if c.kind == NUMERIC}
    est.encoder_.dots = {name: how for name, how in dots.items() if name in numeric}
    est.save(out_path)
    print(est.summary())
    if weight_column is not None:
        print(f"rows weighted by column {weight_column!r} (losses, errors and alpha choice)")
    print(f"model written to {out_path}")
    return 0


def note_no_validation(rows: int, val_fraction: float, max_epochs: int | str) -> None:
    """A note when ``val_fraction`` of ``rows`` holds out fewer than 2 rows (the estimator
    then validates on none): nothing stops training early, so every epoch runs."""
    if round(val_fraction * rows) >= 2:
        return
    runs = "every epoch of the recipe" if max_epochs == "auto" else f"all {max_epochs} epochs"
    print(
        f"note: no validation rows (--val-fraction {val_fraction:g} of {rows} rows holds out "
        f"fewer than 2), so nothing stops training early: {runs} run",
        file=sys.stderr,
    )


def _note_missing_spellings(frame: pd.DataFrame, features: list[str], path: Path) -> None:
    """A note for each text feature with cells such as "NA" or "None", which the table
    reads as missing, like empty ones: a value of that name (a region "NA") is lost."""
    text = [
        c
        for c in features
        if not pd.api.types.is_numeric_dtype(frame[c].dtype) and bool(frame[c].isna().any())
    ]
    note_missing_spellings(
        path,
        frame,
        text,
        " like empty cells (as pandas reads NA, N/A, n/a, NULL, null, None, NaN, nan, <NA>, "
        "#N/A and a few more); if it is a value of its own, spell it otherwise in the file",
    )
