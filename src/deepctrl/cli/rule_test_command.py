"""``deepctrl test-rule``: is a candidate rule right for each group of a table?

The table, the group column and the rules are checked before PyTorch loads; then
:func:`deepctrl.rule_test` trains and judges every group, and the files of
:func:`deepctrl.write_rule_test` are written to the output folder.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deepctrl.cli.column_checks import (
    check_count_target,
    check_table_rules,
    check_whole_classes,
    feature_columns,
    id_frame,
    infer_task,
    no_column,
)
from deepctrl.cli.one_line_errors import one_line_errors
from deepctrl.cli.option_checks import (
    check_device,
    check_loss_options,
    check_rule_class,
    check_rule_class_has_rules,
    check_writable,
    epochs_option,
    number,
    set_loss_options,
    table_rules,
)
from deepctrl.cli.rules_file import read_rules_file
from deepctrl.cli.table_cleaning import clean_columns, read_targets
from deepctrl.cli.table_reading import read_table
from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.table_messages import shown


def _out_folder(out: str) -> Path:
    """``--out`` as a folder that exists and is writable, or can be made."""
    if not out:
        raise ValueError("--out is empty; give a folder")
    if out == "-":
        raise ValueError("--out - (standard output) is for deepctrl predict; give a folder")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {folder} is a file; give a folder")
    above = next((p for p in (folder, *folder.parents) if p.exists()), None)
    if above is not None and not above.is_dir():
        raise ValueError(f"--out {folder}: {above} is a file, so the folder cannot be made")
    if above is not None:
        check_writable(above, f"--out {folder}")
    return folder


def _print_summary(result: Any) -> None:
    rows = [*result.groups.items(), ("all", result.all)]
    width = max(len("group"), *(len(str(k)) for k, _ in rows))
    print(
        f"{'group':<{width}}  {'rows':>6}  {'verdict':<12}  {'best alpha':>10}  "
        f"{'verif. a=0':>10}  reason"
    )
    for name, seg in rows:
        s = seg.statistics
        best = f"{s['best_alpha']:g}" if s else "-"
        v0 = f"{s['verification_alpha0']:.2f}" if s else "-"
        print(
            f"{name:<{width}}  {seg.rows:>6}  {seg.verdict:<12}  {best:>10}  {v0:>10}  {seg.reason}"
        )


@one_line_errors
def rule_test_command(
    data: str,
    target: str,
    group: str | None,
    out: str,
    monotonic: Sequence[str] = (),
    rules: str | None = None,
    seeds: int | str = 5,
    min_rows: int | str = 50,
    task: str | None = None,
    max_epochs: int | str = "auto",
    drop_missing: bool = False,
    progress: bool = True,
    device: str = "cpu",
    id_columns: Sequence[str] = (),
    rule_class: str | None = None,
    categorical: Sequence[str] = (),
    class_weight: str | None = None,
    loss: str | None = None,
) -> int:
    """Test the rules on every value of ``group`` (and all rows); write the files to ``out``;
    the ``categorical`` columns are read as categories whatever their values look like;
    ``class_weight`` ("balanced") and ``loss`` ("mse", "mae" or "poisson") train each fold's
    model as in ``deepctrl fit`` (the loss is also the error the verdicts compare)."""
    folder = _out_folder(out)
    check_device(device)
    folds = number(seeds, "--seeds", int, 2, 101)
    min_rows = number(min_rows, "--min-rows", int, 2 * folds)
    max_epochs = epochs_option(max_epochs)
    check_rule_class_has_rules(rule_class, monotonic)
    file_specs = read_rules_file(rules) if rules is not None else []
    if not monotonic and not file_specs:
        raise ValueError("give the rule to test: --monotonic COL=DIRECTION or --rules FILE")
    path = Path(data)
    frame = read_table(data)
    for option, name in (("target", target), ("group", group)):
        if name is not None and name not in frame.columns:
            raise ValueError(no_column(path, option, name, list(frame.columns)))
    if group == target:
        raise ValueError(f"the group column cannot be the target {target!r}")
    for spec in monotonic:
        if group is not None and spec.rpartition("=")[0].strip() == group:
            raise ValueError(
                f"--monotonic {spec}: {group!r} is the --group column; a rule names a feature"
            )
    if group is not None and group in categorical:
        raise ValueError(
            f"--categorical {group}: {group!r} is the --group column, whose values are "
            "labels kept as written (codes such as 007 keep their zeros)"
        )
    if group is not None:  # group labels as written: codes keep their leading zeros,
        frame = read_targets(frame, path, [group], codes=True)  # also beside 2.5
    ids = set(id_frame(frame, id_columns, data).columns)
    all_features = [c for c in frame.columns if c not in (target, group) and c not in ids]
    roles = dict.fromkeys(ids, "an --id-column") | {target: "the target"}
    features, left_out = feature_columns(frame, all_features, categorical, path, roles)
    if not features:
        raise ValueError(f"{path} has no feature columns besides the target and the group")
    frame = clean_columns(
        frame, [*features, target], path, drop_missing, targets=[target], categorical=categorical
    )
    # a group of spaces only is missing too, as the groups are read
    missing = frame[group].map(is_missing_text).astype(bool) if group is not None else None
    if missing is not None and drop_missing and missing.any():
        print(f"dropped {int(missing.sum())} rows with a missing group", file=sys.stderr)
        frame = frame[~missing]
    elif missing is not None and missing.any():
        raise ValueError(
            f"group column {group!r} has {int(missing.sum())} missing values; "
            "give them a group of their own (such as 'unknown') or drop those rows "
            "(--drop-missing)"
        )
    task, note = infer_task(frame[target], task, loss)
    check_whole_classes(frame[target], task)
    check_rule_class(task, rule_class, inferred=note is not None)
    check_loss_options(task, class_weight, loss)
    check_count_target(frame[target], path, loss)
    if task == "classification" and monotonic and rule_class is None:
        from deepctrl.tabular.model_outputs import Outputs

        classes = sorted(frame[target].unique().tolist())
        default = classes[Outputs.classification(classes).find(None)]  # the rule's class
        rule_class = str(default)
        note = (note + "\n" if note else "") + (
            f"note: the --monotonic rules constrain P({shown(default)}), the "
            + ("second of 2 classes" if len(classes) == 2 else f"first of {len(classes)} classes")
            + " in sorted order; --rule-class LABEL chooses the class"
        )
    rule_list = table_rules(monotonic, rule_class, file_specs, list(frame.columns))
    not_features = dict.fromkeys(ids, "an --id-column")
    not_features.update(left_out)
    if group is not None:
        not_features[group] = "the --group column"
    check_table_rules(rule_list, frame[features], frame[target], task, not_features)
    if note:
        print(note, file=sys.stderr)
    from deepctrl.tabular.classifier import DeepCTRLClassifier
    from deepctrl.tabular.regressor import DeepCTRLRegressor
    from deepctrl.tabular.rule_test import rule_test
    from deepctrl.tabular.rule_test_report import write_rule_test

    kind = DeepCTRLClassifier if task == "classification" else DeepCTRLRegressor
    est = kind(rules=rule_list, n_seeds=1, max_epochs=max_epochs, device=device)
    set_loss_options(est, class_weight, loss)
    result = rule_test(
        est,
        frame[features],
        frame[target],
        None if group is None else frame[group],
        folds=folds,
        min_rows=min_rows,
        progress=progress,
    )
    files = write_rule_test(result, folder)
    _print_summary(result)
    print(
        "the verdicts judge the data, not cause and effect: a confounded history (prices "
        "raised on busy days) can contradict a right rule; report.md says what to do with "
        "each verdict"
    )
    if task == "classification":
        print(
            "on classes the verdicts are weaker evidence (their reliability was measured on "
            "regression): read consistent as not contradicted; report.md says why"
        )
    print("wrote " + ", ".join(str(f) for f in files))
    return 0
