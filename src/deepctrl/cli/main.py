"""The ``deepctrl`` command line: argparse front end, no logic of its own. Each command's
arguments are declared in ``reproduce_arguments``, ``training_arguments`` and
``model_file_arguments``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any, NoReturn

from deepctrl._version import __version__
from deepctrl.cli.exit_codes import INTERRUPTED, TERMINATED
from deepctrl.cli.model_file_arguments import add_export, add_predict, add_sweep
from deepctrl.cli.reproduce_arguments import add_reproduce
from deepctrl.cli.table_layout import nfc
from deepctrl.cli.training_arguments import add_fit, add_test_rule
from deepctrl.core.log import is_worker


class _Parser(argparse.ArgumentParser):
    """argparse with usage errors on one line (the usage itself is one ``--help`` away);
    ``commands`` are the subcommands' parsers by name."""

    commands: dict[str, argparse.ArgumentParser]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})  # --monot is no option

    def error(self, message: str) -> NoReturn:
        needs = re.fullmatch(r"argument (--[\w-]+): expected one argument", message)
        if needs:
            message += f" (a value starting with '-' is written {needs[1]}=VALUE)"
        self.exit(2, f"{self.prog}: error: {message} (see '{self.prog} --help')\n")


def build_parser() -> _Parser:
    parser = _Parser(
        prog="deepctrl",
        description="Teach neural networks rules; choose the rule strength at inference.",
        epilog="'deepctrl COMMAND --help' shows a command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"deepctrl {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_reproduce(subparsers)
    add_fit(subparsers)
    add_sweep(subparsers)
    add_predict(subparsers)
    add_export(subparsers)
    add_test_rule(subparsers)
    parser.commands = dict(subparsers.choices)
    return parser


EXTRAS = {
    "pandas": "tabular",
    "sklearn": "tabular",
    "scipy": "tabular",
    "matplotlib": "tabular",
    "narwhals": "tabular",
    "onnx": "onnx",
    "onnxscript": "onnx",
    "onnxruntime": "onnx",
}
"""Libraries outside the base install, and the extra that brings each."""


COLUMN_OPTIONS = (
    "target",
    "monotonic",
    "categorical",
    "id_columns",
    "weight_column",
    "alpha_column",
    "group",
)
"""The options that name columns (``--monotonic`` with its direction)."""


def _composed_names(args: argparse.Namespace) -> None:
    """The column names ``args`` give, in Unicode's composed form (NFC), as the command line
    reads a file's names: an accent typed in a shell matches the same accent a file writes
    as a separate mark (as macOS may)."""
    for option in COLUMN_OPTIONS:
        value = getattr(args, option, None)
        if isinstance(value, str):
            setattr(args, option, nfc(value))
        elif isinstance(value, list):
            setattr(args, option, [nfc(v) for v in value])


PATH_OPTIONS = ("data", "model", "out", "rules", "check", "csv", "m5_dir")
"""The arguments that name files or folders: ``~`` in them is the home folder, also when
the shell left it (quoted, or after ``--out=``)."""


def _home_paths(args: argparse.Namespace) -> None:
    """``~`` expanded in the path arguments of ``args``."""
    for option in PATH_OPTIONS:
        value = getattr(args, option, None)
        if isinstance(value, str) and value.startswith("~"):
            setattr(args, option, os.path.expanduser(value))


class Terminated(BaseException):
    """SIGTERM (``kill``, ``timeout``) as an exception, so that worker processes are stopped
    and nothing is left half done, as after Ctrl-C."""


def _raise_terminated(signum: int, frame: Any) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; bad input gives one line on stderr and exit code 2.

    Under ``torchrun`` only rank 0 prints: the other ranks' output, notes and warnings
    would repeat it line for line. Their errors still show.
    """
    if sys.stderr is None:  # stderr closed (2>&-): notes must not fall onto stdout's data
        sys.stderr = open(os.devnull, "w")  # noqa: SIM115 (open for the process's life)
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the command's own parser says it, pointing to the command's help
        command = parser.commands.get(args.command, parser)
        command = getattr(command, "commands", {}).get(getattr(args, "experiment", None), command)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    handler = getattr(args, "handler", None)
    if handler is None:  # no command: usage, and a failure for a script that meant one
        parser.print_help(sys.stderr)
        return 2
    _composed_names(args)
    _home_paths(args)
    if getattr(args, "progress", False) and not (sys.stderr and sys.stderr.isatty()):
        args.progress = False  # a log file or a pipe gets no bars (no carriage returns)
    main_thread = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _raise_terminated) if main_thread else None
    try:
        return _run(args, handler)
    finally:
        if main_thread:
            signal.signal(signal.SIGTERM, before)


def _run(args: argparse.Namespace, handler: Any) -> int:
    """The command of ``args``, its errors and interruptions as one line and an exit code."""
    err = sys.stderr
    quiet = is_worker()
    with (
        open(os.devnull, "w") as devnull,
        contextlib.redirect_stdout(devnull if quiet else sys.stdout),
        contextlib.redirect_stderr(devnull if quiet else sys.stderr),
    ):
        try:
            return int(handler(args) or 0)
        except ModuleNotFoundError as exc:
            if exc.name not in EXTRAS:
                raise
            extra = {"reproduce": "paper", "export": "tabular,onnx"}.get(
                args.command, EXTRAS[exc.name]
            )
            print(
                f"deepctrl: error: 'deepctrl {args.command}' needs {exc.name}: "
                f"pip install 'deepctrl[{extra}]'",
                file=err,
            )
            return 2
        except (ValueError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
            print(f"deepctrl: error: {exc}", file=err)
            return 2
        except BrokenPipeError:  # a reader that stopped early (| head): quiet, as other tools
            if sys.__stdout__ is not None:  # no second error when Python flushes at exit
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.__stdout__.fileno())
            return 141
        except KeyboardInterrupt:
            print("deepctrl: interrupted", file=err)
            return INTERRUPTED
        except Terminated:
            print("deepctrl: terminated", file=err)
            return TERMINATED


if __name__ == "__main__":
    sys.exit(main())
