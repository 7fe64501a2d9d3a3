"""What ``deepctrl fit``, ``deepctrl sweep`` and ``deepctrl predict`` do; main.py only parses.

Every problem with the user's input raises ValueError with one line naming it (file, column,
row counts, line numbers), which the command line prints without a traceback. The options,
the table, the rules and the model file's header are checked before PyTorch and
scikit-learn are imported, so mistakes in the input are reported within about a second.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import math
import os
import re
import shlex
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pandas as pd
from tqdm import tqdm

from deepctrl.cli.rules_file import build_rules, monotonic_spec, read_rules_file
from deepctrl.cli.table_numbers import numbers_or_nan
from deepctrl.cli.table_output import (
    STDOUT,
    check_model_name,
    check_table_name,
    open_stdout,
    write_table,
)
from deepctrl.cli.tables import (
    as_categories,
    clean_columns,
    left_out_columns,
    nfc,
    note_missing_spellings,
    read_table,
    read_table_dots,
    read_targets,
    row_lines,
    text_columns,
    weight_text,
    zero_padded_columns,
)
from deepctrl.engine.progress import stage
from deepctrl.io.file_format import table_model_columns
from deepctrl.tabular.alpha_choice import CHOICES, check_alpha
from deepctrl.tabular.cell_values import is_missing_text
from deepctrl.tabular.column_kinds import NUMERIC
from deepctrl.tabular.number_text import NUMBER_LIKE
from deepctrl.tabular.table_messages import listed, rows_have, shown

F = TypeVar("F", bound=Callable[..., int])
_Number = TypeVar("_Number", int, float)


def one_line_errors(command: F) -> F:
    """Run ``command`` printing each warning once, as a single line, when it is raised (so
    a warning about the table comes before the training it concerns), and turning problems
    into one-line ValueErrors."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        with one_line_warnings():
            try:
                return command(*args, **kwargs)
            except BrokenPipeError:  # the reader stopped: no error (the caller exits quietly)
                raise
            except (ValueError, OSError) as exc:
                raise ValueError(_one_line(exc)) from None
            except (MemoryError, RuntimeError) as exc:
                # numpy's MemoryError; torch's RuntimeError (OutOfMemoryError on a GPU)
                if not (isinstance(exc, MemoryError) or _out_of_memory(exc)):
                    raise
                raise ValueError(
                    f"out of memory ({_one_line(exc)}): a text column with many values takes "
                    "one input per value on every row; leave such a column out "
                    "(--id-column COL) or use fewer rows"
                ) from None

    return run  # type: ignore[return-value]


def _one_line(exc: Exception) -> str:
    """``exc`` as one line; a file error as the file and why, without its errno.

    >>> _one_line(PermissionError(13, "Permission denied", "m.deepctrl"))
    'm.deepctrl: Permission denied'
    """
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__


def _out_of_memory(exc: RuntimeError) -> bool:
    """Whether torch ran out of memory: ``OutOfMemoryError`` on a GPU, a RuntimeError
    saying it cannot allocate on a CPU.

    >>> _out_of_memory(RuntimeError("[enforce fail] DefaultCPUAllocator: can't allocate memory"))
    True
    """
    return type(exc).__name__ == "OutOfMemoryError" or "can't allocate memory" in str(exc)


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Within the block, each warning prints once, when raised, as one line
    ``deepctrl: warning: ...`` above any progress bar (no file name, no source line); one
    that differs from an earlier one only in its numbers (the same warning for another fold
    of a rule test, say) is not printed again."""
    shown_before: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        key = re.sub(r"\d[\d.,]*", "#", text)
        if issubclass(category, DeprecationWarning) or key in shown_before:
            return
        shown_before.add(key)
        tqdm.write(f"deepctrl: warning: {text}", file=sys.stderr)  # above a progress bar

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        yield


def check_rule_class_has_rules(rule_class: str | None, monotonic: Sequence[str]) -> None:
    """``--rule-class`` names the class of ``--monotonic`` rules, so it needs one."""
    if rule_class is not None and not monotonic:
        raise ValueError(
            "--rule-class names the class of the --monotonic rules; give one (a rule in a "
            'rules file names its class with output = "LABEL")'
        )


def check_rule_class(task: str, rule_class: str | None, inferred: bool) -> None:
    """``--rule-class`` needs classification; an ``inferred`` regression says how to ask
    for classification instead."""
    if task != "regression" or rule_class is None:
        return
    if inferred:
        raise ValueError(
            "--rule-class is for classification, and the task was taken to be regression "
            "(the target holds many numbers); --task classification makes it classification"
        )
    raise ValueError("--rule-class is for classification; the task is regression")


def infer_task(
    series: pd.Series, task: str | None, loss: str | None = None
) -> tuple[str, str | None]:
    """The task, given or inferred from the target (with a note saying so): classification
    for text or at most 10 distinct integer values, else regression; numbers of few values
    are a regression too when a regression ``loss`` is given (counts, for the Poisson
    loss)."""
    numeric = pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(
        series.dtype
    )
    if task == "regression" and not numeric:
        raise ValueError(
            f"target column {series.name!r} is not numeric, so it cannot be a regression target"
        )
    if task is not None:
        return task, None
    if not numeric:
        chosen = "classification"
        _check_class_count(series)
    else:
        values = series.to_numpy(dtype=np.float64)
        integral = bool(np.all(values == np.round(values)))
        chosen = "classification" if integral and len(np.unique(values)) <= 10 else "regression"
        if chosen == "classification" and loss is not None:
            return "regression", (
                f"task: regression (--loss {loss} is a regression loss; set --task to choose)"
            )
    return chosen, f"task: {chosen} (from target column {series.name!r}; set --task to choose)"


def check_whole_classes(series: pd.Series, task: str) -> None:
    """A classification target of numbers holds whole numbers; else an error counting the
    others.

    >>> check_whole_classes(pd.Series([0.5, 1.0, 2.25], name="sales"),
    ...                     "classification")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: target column 'sales' holds 2 non-integer numbers; classes must be labels ...
    """
    if task != "classification" or not pd.api.types.is_float_dtype(series.dtype):
        return
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    fractional = int(np.sum(values != np.round(values)) - np.isnan(values).sum())
    if fractional:
        raise ValueError(
            f"target column {series.name!r} holds {fractional} non-integer numbers; classes "
            "must be labels or whole numbers (drop --task classification for a regression)"
        )


def _check_class_count(series: pd.Series) -> None:
    """A text target with more distinct values than classes can be (more than 50, and
    more than half of its rows) is an error, saying whether they look like numbers in a form
    the table is not read in (spaces between thousands, a decimal comma in a comma file).

    >>> _check_class_count(pd.Series([f"{i} 000 €" for i in range(100)],
    ...                              name="price"))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: target column 'price' has 100 distinct values in 100 rows, too many to be ...
    """
    present = series.dropna().astype(str)
    distinct = present.nunique()
    if distinct <= max(50, len(present) // 2):
        return
    number_like = present.map(lambda v: bool(NUMBER_LIKE.fullmatch(v))).mean() >= 0.9
    raise ValueError(
        f"target column {series.name!r} has {distinct} distinct values in {len(present)} rows, "
        "too many to be classes"
        + (
            f": they look like numbers written in a form not read as numbers "
            f"({present.iloc[0]!r}); write them as plain numbers (1234.5) for a regression, or"
            if number_like
            else ";"
        )
        + " give --task classification to train on them as classes"
    )


def no_column(path: Path | str, what: str, name: str, columns: Sequence[str]) -> str:
    """The message for a ``what`` column ``name`` that ``path`` lacks: its columns, and one
    that is ``name`` but for spaces around it.

    >>> message = no_column("t.csv", "target", "sales", ["price ", " sales"])
    >>> message.split("; ")  # doctest: +NORMALIZE_WHITESPACE
    ["t.csv has no target column 'sales' (columns: 'price ', ' sales')",
     "column ' sales' has spaces around its name"]
    """
    return (
        f"{path} has no {what} column {name!r} (columns: {listed([repr(c) for c in columns])})"
        + spaced([name], columns)
    )


def spaced(names: Sequence[str], columns: Sequence[str]) -> str:
    """A hint for the first of ``names`` that one of ``columns`` is but for spaces around
    it, else "".

    >>> spaced(["sales"], ["price ", "sales "]), spaced(["x"], ["price "])
    ("; column 'sales ' has spaces around its name", '')
    >>> spaced([" sales "], ["sales"])
    "; the name ' sales ' has spaces around it, where the file writes 'sales'"
    """
    for name in names:
        for column in columns:
            if column != name and column.strip() == name.strip():
                if column == column.strip():  # the spaces are in the name looked for
                    return (
                        f"; the name {name!r} has spaces around it, where the file writes "
                        f"{column!r}"
                    )
                return f"; column {column!r} has spaces around its name"
    return ""


def table_rules(
    monotonic: Sequence[str],
    rule_class: str | None,
    file_specs: Sequence[Any],
    columns: Sequence[str] = (),
) -> list[Any]:
    """The rules of ``--monotonic`` (see :func:`deepctrl.cli.rules_file.monotonic_spec`,
    which the table's ``columns`` are passed to) and of the rules file, built."""
    specs = [monotonic_spec(m, rule_class, columns) for m in monotonic]
    return build_rules([*specs, *file_specs])


def outputs_as_labels(rules: list[Any], target: pd.Series) -> list[Any]:
    """``rules`` with each class named as text (``--rule-class 5``, ``output = "5"``) named
    as the target column holds it (5), as a rule written in Python for the same table names
    it; other rules as given.

    >>> from deepctrl.core.rules import Monotonic
    >>> outputs_as_labels([Monotonic("x", "increasing", output="5")], pd.Series([1, 5]))
    [Monotonic(feature='x', direction='increasing', output=5)]
    """
    from deepctrl.core.rules import AllOf

    labels = {str(v): v for v in target.dropna().unique() if not isinstance(v, str)}

    def relabelled(rule: Any) -> Any:
        if isinstance(rule, AllOf):
            return AllOf.as_stored([relabelled(r) for r in rule.leaves()], rule.weights)
        output = getattr(rule, "output", None)
        if not isinstance(output, str) or output not in labels:
            return rule
        out = copy.copy(rule)
        out.output = labels[output].item() if hasattr(labels[output], "item") else labels[output]
        return out

    return [relabelled(rule) for rule in rules]


def check_loss_options(task: str, class_weight: str | None, loss: str | None) -> None:
    """``--class-weight`` is for classes, ``--loss`` for numbers."""
    if task == "regression" and class_weight is not None:
        raise ValueError("--class-weight is for classification; the task is regression")
    if task == "classification" and loss is not None:
        raise ValueError("--loss is for regression; a classifier trains on the log loss")


def check_count_target(series: pd.Series, path: Path, loss: str | None) -> None:
    """``--loss poisson`` needs a target >= 0: an error naming the first line (CSV) or row
    (Parquet) with a negative value."""
    if loss != "poisson":
        return
    values = series.to_numpy(dtype=np.float64, na_value=np.nan)
    negative = np.flatnonzero(values < 0)
    if len(negative):
        where = row_lines(np.array([series.index[negative[0]]]), path)
        raise ValueError(
            f"{path}: target column {series.name!r} has a negative value in {len(negative)} of "
            f"{len(values)} rows ({where}: {values[negative[0]]:g}); --loss poisson needs "
            "counts or other values >= 0"
        )


def set_loss_options(est: Any, class_weight: str | None, loss: str | None) -> None:
    """Give the estimator ``--class-weight`` and ``--loss`` when set."""
    if class_weight is not None:
        est.set_params(class_weight=class_weight)
    if loss is not None:
        est.set_params(loss=loss)


def check_table_rules(
    rules: list[Any],
    features: pd.DataFrame,
    target: pd.Series,
    task: str,
    not_features: dict[str, str] | None = None,
) -> None:
    """The rules' mistakes (columns, classes, contradictions) before anything is printed or
    trained; ``not_features`` says why a column of the file is not a feature ("the
    target"), for a rule that names it."""
    from deepctrl.tabular.model_outputs import Outputs
    from deepctrl.tabular.rule_checks import check_rules
    from deepctrl.tabular.rule_leaves import leaves_and_weights
    from deepctrl.tabular.table_rules import describe

    why = {str(target.name): "the target", **(not_features or {})}
    for leaf in leaves_and_weights(rules)[0]:
        name = getattr(leaf, "feature", None)
        if isinstance(name, str) and name in why and name not in features.columns:
            raise ValueError(
                f"rule {describe(leaf, where=True, key='column')}: {name!r} is {why[name]}, "
                "not a feature"
            )

    outputs = (
        Outputs.classification(sorted(target.unique().tolist()), recoded_hint=False)
        if task == "classification"
        else Outputs.regression([str(target.name)])
    )
    check_rules(rules, features, outputs)


def check_output_path(out: str | Path, *inputs: str | Path) -> Path:
    """``--out`` as a path whose folder exists, and that is none of the command's
    ``inputs`` (writing would replace them)."""
    if str(out) == STDOUT:
        raise ValueError(
            "--out - (standard output) is for deepctrl predict; this command writes a file: "
            "give its name"
        )
    if not str(out):
        raise ValueError("--out is empty; give a file name")
    out = Path(out)
    parent = out.parent if str(out.parent) else Path(".")
    if out.absolute().parts[1:2] in (("dev",), ("proc",)):
        raise ValueError(f"--out {out} is a device, not a file; give a file name")
    if out.is_dir():
        raise ValueError(f"--out {out} is a folder; give a file name")
    if not parent.is_dir():
        raise ValueError(f"--out {out}: folder {parent} does not exist")
    check_writable(parent, f"--out {out}")
    if out.exists() and not os.access(out, os.W_OK):
        raise ValueError(f"--out {out} is read-only; give another name or make it writable")
    for given in map(Path, inputs):
        if out.exists() and given.exists() and out.samefile(given):
            raise ValueError(f"--out {out} is the input file {given}; writing would replace it")
    return out


def check_writable(folder: Path, option: str) -> None:
    """A file can be made in ``folder`` (checked before any work), or a one-line error."""
    if not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"{option}: cannot write into folder {folder} (permission denied)")


def check_device(device: str) -> None:
    """An unknown or absent device fails now, before the table is read."""
    if device == "cpu":
        return
    from deepctrl.core.data import resolve_device

    resolve_device(device)


def number(
    value: Any, option: str, kind: type[_Number], low: float, high: float = math.inf
) -> _Number:
    """``value`` (text or number) as ``kind`` within [low, high), or a one-line error."""
    try:
        number = kind(value)
        if not low <= number < high:
            raise ValueError
    except (TypeError, ValueError):
        span = _span(kind, low, high)
        raise ValueError(
            f"{option} must be {'an integer' if kind is int else 'a number'} {span}, got {value!r}"
        ) from None
    return number


RHO_WORDS = ("auto", "paper", "epoch")
"""The ways ``--rho`` measures rho (as the estimators' ``rho``)."""


def rho_option(value: str) -> float | str:
    """``--rho``: one of :data:`RHO_WORDS`, or a number above 0.

    >>> rho_option("auto"), rho_option("0.3")
    ('auto', 0.3)
    """
    if value in RHO_WORDS:
        return value
    try:
        rho = float(value)
    except ValueError:
        rho = math.nan
    if not (math.isfinite(rho) and rho > 0):
        raise ValueError(f"--rho must be auto, paper, epoch or a number above 0, got {value!r}")
    return rho


def _span(kind: type, low: float, high: float) -> str:
    """The words for [low, high) of ``kind``.

    >>> _span(int, 0, 2**31), _span(float, 0, 1), _span(int, 1, math.inf)
    ('from 0 to 2147483647', 'from 0 to below 1', 'at least 1')
    """
    if high == math.inf:
        return f"at least {low}"
    return f"from {low} to {int(high) - 1}" if kind is int else f"from {low} to below {high}"


def _goal(value: Any) -> float:
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


def feature_columns(
    frame: pd.DataFrame,
    features: Sequence[str],
    categorical: Sequence[str],
    path: Path,
    roles: Mapping[str, str] | None = None,
) -> tuple[list[str], dict[str, str]]:
    """The ``features`` a model gets, and those left out with why (empty and identifier
    columns, with a note each; an identifier named by ``--categorical`` is kept); the
    ``categorical`` columns ``frame`` then holds as categories. ``roles`` names what the
    columns that are not features are (``{"y": "the target"}``), for the errors."""
    roles = roles or {}
    for name in categorical:
        if name in roles:
            raise ValueError(f"--categorical {name}: {name!r} is {roles[name]}, not a feature")
    # codes 01, 1, 001 stay apart: numeric-looking ones read as written, in one pass, before
    # the notes on the columns kept (three codes are not "one value in every row")
    numeric = [c for c in categorical if c in features and pd.api.types.is_numeric_dtype(frame[c])]
    read_targets(frame, path, numeric, codes=True)
    left_out = left_out_columns(frame, features, path, categorical)
    kept = [c for c in features if c not in left_out]
    numbers = [c for c in kept if c not in categorical]
    for name, value in zero_padded_columns(path, frame, numbers).items():
        print(
            f"note: column {name!r} holds whole numbers written with leading zeros (such as "
            f"{value}), read as numbers; if they are codes, give --categorical "
            f"{shlex.quote(name)}",
            file=sys.stderr,
        )
    for name in categorical:
        if name not in kept:
            why = f" ({left_out[name]})" if name in left_out else ""
            raise ValueError(f"--categorical {name}: {path} has no feature column {name!r}{why}")
    for name in categorical:
        frame[name] = as_categories(frame[name])
    return kept, left_out


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
    from deepctrl.tabular.estimators import DeepCTRLClassifier, DeepCTRLRegressor
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


MAX_EPOCHS = 100_000
"""The largest ``--max-epochs``: a fit without validation rows runs every epoch."""


def epochs_option(max_epochs: int | str) -> int | str:
    """``--max-epochs``: "auto" or an integer from 1 to :data:`MAX_EPOCHS`."""
    if max_epochs == "auto":
        return "auto"
    return number(max_epochs, "--max-epochs", int, 1, MAX_EPOCHS + 1)


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


def check_weight_column(weights: pd.Series, path: Path, drops: bool = True) -> None:
    """A weight column holds a number >= 0 on every row; else an error naming the first
    line (CSV) or row (Parquet) that does not (and, where ``--drop-missing`` ``drops``
    rows without a weight, saying so)."""
    name = str(weights.name)
    numeric = pd.api.types.is_numeric_dtype(weights) or pd.api.types.is_string_dtype(weights)
    if not numeric or pd.api.types.is_bool_dtype(weights):
        raise ValueError(f"--weight-column {name!r} must hold numbers")
    values = numbers_or_nan(weights).to_numpy()
    text = np.isnan(values) & weights.notna().to_numpy()
    if text.any():
        rows = np.flatnonzero(text)
        first = weights.iloc[rows[0]]
        lines = weights.index.to_numpy()[rows]
        raise ValueError(weight_text(path, name, lines, len(values), first, drops))
    for bad, what in (
        (np.isnan(values), "no weight"),
        (values < 0, "a negative weight"),
        (np.isinf(values), "an infinite weight"),
    ):
        if bad.any():
            first = int(np.flatnonzero(bad)[0])
            where = row_lines(np.array([weights.index[first]]), path)
            shown_value = "" if what == "no weight" else f": {values[first]:g}"
            raise ValueError(
                f"{path}: weight column {name!r} has {what} in {int(bad.sum())} of "
                f"{len(values)} rows ({where}{shown_value}); every row needs a weight >= 0"
                + (
                    " (--drop-missing drops the rows without one)"
                    if what == "no weight" and drops
                    else ""
                )
            )
    if not (values > 0).any():
        raise ValueError(
            f"{path}: weight column {name!r} is 0 on every row; give some rows a weight above 0"
        )


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


@one_line_errors
def sweep_command(
    model: str,
    data: str,
    alphas: str = "0:1:0.1",
    as_json: bool = False,
    drop_missing: bool = False,
    min_verification: float | str = 0.95,
    id_columns: Sequence[str] = (),
    weight_column: str | None = None,
) -> int:
    """``deepctrl sweep``: verification ratio and error at every alpha, then the alpha a
    verification goal picks without labels, next to the one with the lowest error. Id columns
    are checked to exist and play no part; ``weight_column`` weighs each row's error."""
    alpha_list = parse_alphas(alphas)
    goal = _goal(min_verification)
    est, frame, columns, targets = model_and_frame(model, data, drop_missing, with_target=True)
    clash = [c for c in id_frame(frame, id_columns, data).columns if c in columns]
    if clash:
        raise ValueError(f"id column {clash[0]!r} is one of the model's input columns")
    if not targets:
        names = [est.target_name_] if hasattr(est, "classes_") else list(est.output_names_)
        print(
            f"note: {data} has no target values (no target column "
            f"{', '.join(map(repr, names))}, or an empty one), so only verification ratios "
            "are shown",
            file=sys.stderr,
        )
    y = (frame[targets[0]] if len(targets) == 1 else frame[targets]) if targets else None
    from deepctrl.tabular.params import fitted_param

    loss = None if hasattr(est, "classes_") else fitted_param(est, "loss")
    for name in targets:  # a negative count named by its line, as fit names it
        check_count_target(frame[name], Path(data), loss)
    weights = _sweep_weights(frame, weight_column, columns, data, y is not None)
    table = est.sweep(model_rows(est, frame, columns), y, alpha_list, sample_weight=weights)
    if as_json:
        open_stdout()
        rows = [
            {
                k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                for k, v in row.items()
            }
            for row in table.to_dict(orient="records")
        ]
        print(json.dumps(rows, indent=1, allow_nan=False))
    else:
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    if est.rule_ is not None:
        from deepctrl.tabular.fit_summary import judged_line  # imports torch: not at start

        lines = _compare_choices(table, est.primary_metric, goal)
        count, rows = table.attrs["judged_rows"]
        judged = judged_line(est.rules, count, rows, f"rows of {data}", est.encoder_)
        for line in lines if judged is None else [*lines, judged]:
            print(line, file=sys.stderr if as_json else sys.stdout)
    return 0


def _sweep_weights(
    frame: pd.DataFrame, column: str | None, inputs: Sequence[str], data: str, labelled: bool
) -> np.ndarray | None:
    """``--weight-column`` of ``deepctrl sweep``: each row's weight for the errors."""
    if column is None:
        return None
    if column not in frame.columns:
        raise ValueError(no_column(Path(data), "weight", column, list(frame.columns)))
    if column in inputs:
        raise ValueError(f"--weight-column {column!r} is one of the model's input columns")
    if not labelled:
        raise ValueError(f"--weight-column weighs the errors, and {data} has no target values")
    check_weight_column(frame[column], Path(data), drops=False)
    print(f"errors weighted by column {column!r}", file=sys.stderr)
    return frame[column].to_numpy(float)


def _compare_choices(table: pd.DataFrame, metric: str, goal: float) -> list[str]:
    """The alpha with the lowest ``metric`` (when the table has it) and the smallest alpha
    whose verification ratio reaches ``goal``, one line each."""

    def at(i: Any) -> str:
        error = f"{metric} {table.at[i, metric]:.4g}, " if metric in table else ""
        return (
            f"alpha {table.at[i, 'alpha']:g} ({error}verification "
            f"{table.at[i, 'verification_ratio']:.3f})"
        )

    lines = []
    if metric in table and table[metric].notna().any():
        lines.append(f"lowest {metric}: {at(table[metric].idxmin())}")
    ratios = table["verification_ratio"]
    reached = table.index[ratios >= goal]
    if len(reached):
        first = min(reached, key=lambda i: table.at[i, "alpha"])
        lines.append(f"label-free (smallest alpha with verification >= {goal:g}): {at(first)}")
    elif ratios.notna().any():
        best = ratios.max()
        alpha = table.loc[ratios == best, "alpha"].min()
        lines.append(
            f"label-free: no alpha in the grid reaches verification {goal:g} "
            f"(highest {best:.3f} at alpha {alpha:g})"
        )
    else:
        lines.append(
            f"label-free: no alpha in the grid reaches verification {goal:g} "
            "(the rules judge none of these rows)"
        )
    return lines


def _alpha_option(alpha: str) -> float | str:
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


def _alpha_column(frame: pd.DataFrame, column: str, path: str) -> np.ndarray:
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
            f"{rows_have(len(bad))} {what} (line {bad[0] + 2})"
        )
    if (values < 0).any():
        row = int(np.flatnonzero(values < 0)[0])
        raise ValueError(
            f"{path}: alpha column {column!r} must be >= 0: line {row + 2} has {values[row]:g}"
        )
    if (values > MAX_ALPHA).any():
        row = int(np.flatnonzero(values > MAX_ALPHA)[0])
        raise ValueError(
            f"{path}: alpha column {column!r}: line {row + 2} has {values[row]:g}; alpha must "
            f"be {_BEYOND}"
        )
    if (values > 1).any():
        print(
            f"note: {rows_have(int((values > 1).sum()))} alpha above 1: the rule's direction "
            "is extrapolated beyond training (alphas were drawn from 0 to 1)",
            file=sys.stderr,
        )
    return values


def id_frame(frame: pd.DataFrame, id_columns: Sequence[str], path: str) -> pd.DataFrame:
    """The ``--id-column`` columns of ``frame``, checked to exist."""
    absent = [c for c in id_columns if c not in frame.columns]
    if absent:
        raise ValueError(no_column(path, "id", absent[0], list(frame.columns)))
    return frame[list(dict.fromkeys(id_columns))]


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
    value = _alpha_option(alpha)
    goal = None if min_verification is None else _goal(min_verification)
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
        chosen = _alpha_column(frame, alpha_column, data)
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
            f"chosen alpha {chosen:g}: verification ratio {ratio:.3f} on {on} (goal {goal:g})",
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
