"""Checks of the commands' options, made before the table is read: numbers within their
range, ``--rho``, ``--max-epochs``, ``--out`` and the device; the options that go together
(``--rule-class``, ``--class-weight``, ``--loss``); the rules of ``--monotonic`` and of the
rules file, built.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from deepctrl.cli.rules_file import build_rules, monotonic_spec
from deepctrl.cli.table_output import STDOUT

_Number = TypeVar("_Number", int, float)


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


def check_loss_options(task: str, class_weight: str | None, loss: str | None) -> None:
    """``--class-weight`` is for classes, ``--loss`` for numbers."""
    if task == "regression" and class_weight is not None:
        raise ValueError("--class-weight is for classification; the task is regression")
    if task == "classification" and loss is not None:
        raise ValueError("--loss is for regression; a classifier trains on the log loss")


def set_loss_options(est: Any, class_weight: str | None, loss: str | None) -> None:
    """Give the estimator ``--class-weight`` and ``--loss`` when set."""
    if class_weight is not None:
        est.set_params(class_weight=class_weight)
    if loss is not None:
        est.set_params(loss=loss)


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
        why = "read-only file system" if _read_only(folder) else "permission denied"
        raise ValueError(f"{option}: cannot write into folder {folder} ({why})")


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


MAX_EPOCHS = 100_000
"""The largest ``--max-epochs``: a fit without validation rows runs every epoch."""


def epochs_option(max_epochs: int | str) -> int | str:
    """``--max-epochs``: "auto" or an integer from 1 to :data:`MAX_EPOCHS`."""
    if max_epochs == "auto":
        return "auto"
    return number(max_epochs, "--max-epochs", int, 1, MAX_EPOCHS + 1)


def _read_only(folder: Path) -> bool:
    """Whether ``folder`` is on a file system mounted read-only."""
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows)
        return False
