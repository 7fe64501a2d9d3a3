"""The ``deepctrl`` command line: argparse front end, no logic of its own."""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import os
import re
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from deepctrl._version import __version__
from deepctrl.cli.table_layout import nfc
from deepctrl.core.log import is_worker

# experiment name -> (module in deepctrl.paper.experiments, function, help)
EXPERIMENTS: dict[str, tuple[str, str, str]] = {
    "pendulum": ("pendulum", "reproduce", "double pendulum, energy rule (paper Sec. 4.1)"),
    "pendulum-ablations": (
        "ablations",
        "reproduce",
        "prior, merge, rho and t-SNE ablations (paper Sec. 5, App. A.3, A.5)",
    ),
    "retail": ("retail", "reproduce", "sales forecasting, price rule (paper Sec. 4.2)"),
    "cardio": ("cardio", "reproduce", "cardiovascular risk, blood-pressure rule (Sec. 4.3)"),
    "cardio-perturbation": (
        "cardio",
        "reproduce_perturbation",
        "perturbation-scale study on cardio (App. A.2)",
    ),
}


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


EXAMPLES = {
    "reproduce": [
        "deepctrl reproduce pendulum",
        "deepctrl reproduce retail --quick --out runs/retail",
    ],
    "fit": [
        "deepctrl fit sales.csv --target sales --monotonic price=decreasing --out sales.deepctrl",
        "deepctrl fit visits.csv --target late --rules rules.toml --out visits.deepctrl",
    ],
    "sweep": [
        "deepctrl sweep sales.deepctrl sales_test.csv",
        "deepctrl sweep sales.deepctrl new.csv --alphas 0,0.5,1 --json",
    ],
    "predict": [
        "deepctrl predict sales.deepctrl new.csv --out predictions.csv",
        "deepctrl predict sales.deepctrl new.csv --alpha 1 --id-column shop --out -",
        "deepctrl predict sales.deepctrl new.csv --min-verification 0.95 --out p.parquet",
    ],
    "export": ["deepctrl export sales.deepctrl --out sales.onnx --check sales_test.csv"],
    "test-rule": [
        "deepctrl test-rule shops.csv --target sales --monotonic price=decreasing --group region",
    ],
}
"""Example command lines shown under each subcommand's ``--help`` (each one parses)."""


class _KeepExamples(argparse.HelpFormatter):
    """Help that wraps the description and keeps the examples' lines as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


def _with_examples(command: str) -> dict[str, Any]:
    """The ``epilog`` and ``formatter_class`` of a subcommand's parser."""
    lines = "\n".join(f"  {line}" for line in EXAMPLES[command])
    return {"epilog": f"examples:\n{lines}", "formatter_class": _KeepExamples}


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _add_reproduce(subparsers: Any) -> None:
    rep = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper experiment",
        description="Reproduce an experiment of the DeepCTRL paper.",
        **_with_examples("reproduce"),
    )
    exps = rep.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    rep.commands = exps.choices  # an experiment's own parser names its own --help
    for name, (module, func, help_text) in EXPERIMENTS.items():
        p = exps.add_parser(name, help=help_text, description=help_text)
        p.add_argument(
            "--seeds",
            type=_positive_int,
            default=None,
            help="number of seeds (default 10, as in the paper; --quick trains at most 2)",
        )
        p.add_argument(
            "--quick",
            action="store_true",
            help="smoke run: fewer seeds and epochs, labelled as such",
        )
        p.add_argument(
            "--out", default=f"results/{name}", help=f"output folder (default results/{name})"
        )
        p.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
        p.add_argument(
            "--no-progress", dest="progress", action="store_false", help="hide progress bars"
        )
        if name.startswith("pendulum"):
            p.add_argument(
                "--preset",
                choices=("paper", "authors"),
                default="paper",
                help="paper: 10 Hz pairs (default); authors: 5 ms pairs",
            )
            p.add_argument(
                "--workers",
                type=_positive_int,
                default=None,
                help="processes training side by side, each a share of the seeds "
                "(default: one per CPU core; 1 on a GPU or under torchrun)",
            )
        if name in ("retail", "cardio"):
            default = "authors" if name == "retail" else "paper"
            p.add_argument(
                "--preset",
                choices=("paper", "authors"),
                default=default,
                help=(
                    "authors: batches of 128 in order, rho 1, the stored study (default); "
                    "paper: batches of 32 shuffled, rho auto"
                    if name == "retail"
                    else "paper: DeepCTRL with rho auto beside the authors' fixed values "
                    "(default); authors: DeepCTRL with their rho 1"
                ),
            )
        if name == "pendulum":
            p.add_argument(
                "--report-only",
                action="store_true",
                help="no training: write report.md and the alpha figures of the run in "
                "--out again from its results.json",
            )
        if name in ("pendulum", "retail", "cardio"):
            p.add_argument(
                "--save-models",
                action="store_true",
                help="also write every trained network to OUT/models/<method>/"
                "seed<S>.safetensors (retail: OUT/models/<group>_<method>/...; dc.load "
                "reads them)",
            )
        if name == "retail":
            p.add_argument(
                "--m5-dir",
                default=None,
                help="folder with the Kaggle M5 files (default: synthetic market)",
            )
            p.add_argument(
                "--recompute-price-features",
                action="store_true",
                dest="recompute_price_features",
                help="when the rule perturbs the price, recompute the features "
                "derived from it (default: leave them, as the authors did)",
            )
        if name.startswith("cardio"):
            p.add_argument(
                "--csv", default=None, help="Kaggle cardio_train.csv (default: synthetic cohort)"
            )
        p.set_defaults(handler=_run_experiment, target=(module, func))


def _output_folder(out: str) -> None:
    """``--out`` of a reproduction, checked before any training (and not made yet, so a
    run that fails leaves nothing): not a file, and under a folder that can be written."""
    if out == "-":
        raise ValueError("--out - (standard output) is for deepctrl predict; give a folder")
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"--out {out} is a file; give a folder")
    existing = next(p for p in (folder, *folder.absolute().parents) if p.exists())
    if not existing.is_dir():
        raise ValueError(f"--out {out}: {existing} is a file, not a folder")
    try:  # a folder made and removed at once: what will be written can be
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".deepctrl-probe-"))
    except OSError as exc:
        raise ValueError(f"--out {out}: cannot write in {existing} ({exc.strerror})") from None


def _run_experiment(args: argparse.Namespace) -> int:
    for name in PAPER_LIBRARIES:  # before hours of training, not at the figures
        if importlib.util.find_spec(name) is None:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    _output_folder(args.out)
    if vars(args).pop("report_only", False):
        from deepctrl.paper.experiments.pendulum import rewrite_report

        rewrite_report(args.out)
        return 0
    if args.seeds is None:
        args.seeds = 10
    elif args.quick and args.seeds > 2:
        print(f"note: --quick trains 2 seeds, not {args.seeds}", file=sys.stderr)
    module, func = args.target
    run = getattr(importlib.import_module(f"deepctrl.paper.experiments.{module}"), func)
    options = {
        k: v
        for k, v in vars(args).items()
        if k not in ("handler", "target", "command", "experiment")
    }
    from deepctrl.cli.one_line_errors import one_line_warnings

    with one_line_warnings():
        run(**options)
    return 0


ID_HELP = "a column that identifies rows and is never a feature (repeatable)"
DROP_HELP = (
    "drop rows with missing values, text in number columns or values that are not dates in "
    "date columns (by default missing values are imputed and the others are errors)"
)


class _Once(argparse.Action):
    """An option given at most once (a second ``--target`` would replace the first)."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: Any,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest, None) is not None:
            parser.error(
                f"{option_string} is given twice; the command line fits one target column "
                "(several targets: the Python estimators, with a y of several columns)"
            )
        setattr(namespace, self.dest, values)


def _add_table_and_rules(p: argparse.ArgumentParser, rule: str) -> None:
    """DATA, --target, --task, --monotonic and --rules, as fit and test-rule take them."""
    p.add_argument(
        "data",
        metavar="DATA",
        help="CSV (plain or .gz, .bz2, .xz, .zip) or Parquet file, one row per sample",
    )
    p.add_argument("--target", required=True, metavar="COL", action=_Once, help="column to predict")
    p.add_argument(
        "--task",
        choices=("regression", "classification"),
        default=None,
        help="default: classification for text or few integer values",
    )
    p.add_argument(
        "--monotonic",
        action="append",
        default=[],
        metavar="COL=DIRECTION",
        help=f"{rule}: the prediction is increasing or decreasing in COL (repeatable)",
    )
    p.add_argument(
        "--rules",
        metavar="RULES.toml",
        default=None,
        help="rules file (monotonic, threshold, penalty rules)",
    )
    p.add_argument(
        "--categorical",
        action="append",
        default=[],
        metavar="COL",
        help="read this column as categories even if its values look like numbers (repeatable)",
    )


def _add_loss_options(p: argparse.ArgumentParser, chooses: str) -> None:
    """--class-weight and --loss; ``chooses`` is what else the loss decides."""
    p.add_argument(
        "--class-weight",
        choices=["balanced"],
        default=None,
        help="classification: weigh each class by the inverse of its frequency, so a rare "
        "class is predicted (default: every row weighs the same)",
    )
    p.add_argument(
        "--loss",
        choices=["mse", "mae", "poisson"],
        default=None,
        help=f"regression: the training loss, which also {chooses} (default mse; mae "
        "for targets with outliers; poisson for counts and other targets >= 0 whose spread "
        "grows with their level); a loss makes an unset --task regression",
    )


def _add_fit(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fit",
        help="train a model on a CSV or Parquet table",
        description="Train DeepCTRL on a table; the rule strength is chosen later.",
        **_with_examples("fit"),
    )
    _add_table_and_rules(p, "rule")
    p.add_argument(
        "--val-fraction",
        default=None,
        metavar="F",
        help="share of rows for early stopping and choosing alpha (default 0.2)",
    )
    p.add_argument(
        "--cross-fit",
        action="store_true",
        help="each network holds out its own fold of the rows instead, and alpha is "
        "chosen out of fold (helps small tables)",
    )
    p.add_argument(
        "--validate-last",
        action="store_true",
        help="hold out the file's last rows (the --val-fraction share) instead of random "
        "ones: for rows in time order, stop training and choose alpha on the latest",
    )
    p.add_argument("--seed", default="0", metavar="S", help="random seed (default 0)")
    p.add_argument(
        "--max-epochs",
        default="auto",
        metavar="N",
        help="training epochs (default auto: 500 below 10,000 training rows, else about "
        "2000 optimizer steps in 5 to 200 epochs; early stopping may end sooner)",
    )
    p.add_argument(
        "--recipe",
        choices=["auto", "long", "step_budget"],
        default="auto",
        help="how training runs: long (below 10,000 training rows: up to 500 epochs, five "
        "networks), step_budget (from 10,000: about 2000 optimizer steps, three "
        "networks, about ten times faster near the switch) or auto (by the rows; default)",
    )
    p.add_argument(
        "--rule-class",
        default=None,
        metavar="LABEL",
        help="classification: the class whose probability the --monotonic rules "
        "constrain (default: the second class in sorted order of two, the "
        "first of more)",
    )
    _add_loss_options(p, "chooses alpha")
    p.add_argument(
        "--weight-column",
        default=None,
        metavar="COL",
        help="a column of non-negative sample weights (not a feature): each row's losses "
        "and errors count that many times",
    )
    p.add_argument(
        "--rho",
        default="auto",
        metavar="RHO",
        help="the task loss's weight against the rule's: auto (default, measured at the "
        "start), paper, epoch (measured again every epoch) or a number",
    )
    p.add_argument(
        "--id-column", dest="id_columns", action="append", default=[], metavar="COL", help=ID_HELP
    )
    p.add_argument("--drop-missing", action="store_true", help=DROP_HELP)
    p.add_argument(
        "--device",
        default="cpu",
        help="where training runs: cpu (default), cuda, cuda:N or mps; the model "
        "file is the same either way",
    )
    p.add_argument(
        "--no-progress", dest="progress", action="store_false", help="hide the progress bar"
    )
    p.add_argument("--out", required=True, metavar="MODEL", help="model file to write")
    p.set_defaults(handler=_run_fit)


def _run_fit(args: argparse.Namespace) -> int:
    from deepctrl.cli.fit_command import fit_command

    return fit_command(
        args.data,
        args.target,
        args.out,
        task=args.task,
        monotonic=args.monotonic,
        rules=args.rules,
        rule_class=args.rule_class,
        class_weight=args.class_weight,
        val_fraction=args.val_fraction,
        cross_fit=args.cross_fit,
        validate_last=args.validate_last,
        seed=args.seed,
        id_columns=args.id_columns,
        drop_missing=args.drop_missing,
        max_epochs=args.max_epochs,
        recipe=args.recipe,
        progress=args.progress,
        device=args.device,
        categorical=args.categorical,
        loss=args.loss,
        weight_column=args.weight_column,
        rho=args.rho,
    )


def _add_sweep(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="verification ratio and error of a model at every alpha",
        description="Evaluate a model over the rule strength alpha on a table.",
        **_with_examples("sweep"),
    )
    p.add_argument("model", metavar="MODEL", help="model file written by 'deepctrl fit'")
    p.add_argument("data", metavar="DATA", help="CSV (plain or compressed) or Parquet file")
    p.add_argument(
        "--alphas",
        default="0:1:0.1",
        help="START:STOP:STEP or a comma list (default 0:1:0.1: 0, 0.1, ..., 1)",
    )
    p.add_argument("--json", dest="as_json", action="store_true", help="print JSON rows")
    p.add_argument(
        "--id-column", dest="id_columns", action="append", default=[], metavar="COL", help=ID_HELP
    )
    p.add_argument("--drop-missing", action="store_true", help=DROP_HELP)
    p.add_argument(
        "--min-verification",
        default="0.95",
        metavar="G",
        help="after the table, the smallest alpha whose verification ratio reaches "
        "G (chosen without labels), next to the lowest-error alpha "
        "(default 0.95)",
    )
    p.add_argument(
        "--weight-column",
        default=None,
        metavar="COL",
        help="a column of non-negative weights for the rows' errors (as fit --weight-column)",
    )
    p.set_defaults(handler=_run_sweep)


def _run_sweep(args: argparse.Namespace) -> int:
    from deepctrl.cli.sweep_command import sweep_command

    return sweep_command(
        args.model,
        args.data,
        alphas=args.alphas,
        as_json=args.as_json,
        drop_missing=args.drop_missing,
        min_verification=args.min_verification,
        id_columns=args.id_columns,
        weight_column=args.weight_column,
    )


def _add_predict(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "predict",
        help="predict every row of a table at a rule strength",
        description="Write predictions, in the input's row order, to a CSV or Parquet "
        "file, or to standard output.",
        **_with_examples("predict"),
    )
    p.add_argument("model", metavar="MODEL", help="model file written by 'deepctrl fit'")
    p.add_argument("data", metavar="DATA", help="CSV (plain or compressed) or Parquet file")
    choice = p.add_mutually_exclusive_group()
    choice.add_argument(
        "--alpha",
        default="auto",
        help="rule strength from 0 (the data) to 1 (the rule; above 1 "
        "extrapolates), 'auto' for the model's default (the default), 'min_error' for "
        "its lowest-error alpha",
    )
    choice.add_argument(
        "--min-verification",
        default=None,
        metavar="G",
        help="choose alpha on these rows, without their target: the smallest "
        "alpha (0 to 1.5) whose verification ratio reaches G",
    )
    choice.add_argument(
        "--alpha-column",
        default=None,
        metavar="COL",
        help="one rule strength per row, read from column COL",
    )
    p.add_argument(
        "--id-column",
        dest="id_columns",
        action="append",
        default=[],
        metavar="COL",
        help="a column written first in the output, row for row (repeatable)",
    )
    p.add_argument(
        "--out",
        required=True,
        metavar="PRED.csv",
        help="file to write: CSV (.csv.gz, .bz2, .xz, .zip compress it), Parquet for "
        ".parquet or .pq, or - for CSV on standard output (.xlsx, .json, .tsv and other "
        "formats are refused)",
    )
    p.set_defaults(handler=_run_predict)


def _run_predict(args: argparse.Namespace) -> int:
    from deepctrl.cli.predict_command import predict_command

    return predict_command(
        args.model,
        args.data,
        args.out,
        alpha=args.alpha,
        min_verification=args.min_verification,
        alpha_column=args.alpha_column,
        id_columns=args.id_columns,
    )


def _add_export(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a table model as one ONNX file (served by onnxruntime alone)",
        description="Write a model file from 'deepctrl fit' as ONNX: the table's columns by "
        "name and 'alpha' (one per row) in; the predictions out, with the "
        "preprocessing inside. Needs the onnx extra.",
        **_with_examples("export"),
    )
    p.add_argument("model", metavar="MODEL", help="model file written by 'deepctrl fit'")
    p.add_argument("--out", required=True, metavar="MODEL.onnx", help="ONNX file to write")
    p.add_argument(
        "--check",
        default=None,
        metavar="DATA",
        help="a CSV (or Parquet) file whose rows the ONNX file must predict as "
        "the model does (to 1e-4) before it is written",
    )
    p.set_defaults(handler=_run_export)


def _run_export(args: argparse.Namespace) -> int:
    from deepctrl.cli.export_command import export_command

    return export_command(args.model, args.out, check=args.check)


def _add_test_rule(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "test-rule",
        help="is a candidate rule right for each group of a table?",
        description="Train DeepCTRL on every group of a table (and on all rows), sweep the "
        "rule strength on held-out folds and judge the rule per group: "
        "consistent, contradicted or inconclusive.",
        **_with_examples("test-rule"),
    )
    _add_table_and_rules(p, "rule to test")
    p.add_argument(
        "--group",
        default=None,
        metavar="COL",
        help="column whose values define the groups (default: all rows only)",
    )
    p.add_argument(
        "--seeds",
        default="5",
        metavar="N",
        help="folds per group, each trained with its own seed (default 5)",
    )
    p.add_argument(
        "--min-rows",
        default="50",
        metavar="N",
        help="groups with fewer rows are reported as inconclusive without training (default 50)",
    )
    p.add_argument(
        "--max-epochs",
        default="auto",
        metavar="N",
        help="training epochs per fold (default auto, as for deepctrl fit)",
    )
    p.add_argument(
        "--id-column", dest="id_columns", action="append", default=[], metavar="COL", help=ID_HELP
    )
    p.add_argument(
        "--rule-class",
        default=None,
        metavar="LABEL",
        help="classification: the class whose probability the --monotonic rules constrain "
        "(default: the second class in sorted order of two, the first of more)",
    )
    _add_loss_options(p, "is the error the verdicts compare")
    p.add_argument("--drop-missing", action="store_true", help=DROP_HELP)
    p.add_argument("--device", default="cpu", help="where training runs (default cpu)")
    p.add_argument(
        "--no-progress", dest="progress", action="store_false", help="hide the progress bar"
    )
    p.add_argument(
        "--out",
        default="rule_test",
        metavar="DIR",
        help="folder for rule_test.json, report.md and rule_test.png (default rule_test)",
    )
    p.set_defaults(handler=_run_test_rule)


def _run_test_rule(args: argparse.Namespace) -> int:
    from deepctrl.cli.rule_test_command import rule_test_command

    return rule_test_command(
        args.data,
        args.target,
        args.group,
        args.out,
        monotonic=args.monotonic,
        rules=args.rules,
        seeds=args.seeds,
        min_rows=args.min_rows,
        task=args.task,
        max_epochs=args.max_epochs,
        drop_missing=args.drop_missing,
        progress=args.progress,
        device=args.device,
        id_columns=args.id_columns,
        rule_class=args.rule_class,
        categorical=args.categorical,
        class_weight=args.class_weight,
        loss=args.loss,
    )


def build_parser() -> _Parser:
    parser = _Parser(
        prog="deepctrl",
        description="Teach neural networks rules; choose the rule strength at inference.",
        epilog="'deepctrl COMMAND --help' shows a command's options and examples.",
    )
    parser.add_argument("--version", action="version", version=f"deepctrl {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_reproduce(subparsers)
    _add_fit(subparsers)
    _add_sweep(subparsers)
    _add_predict(subparsers)
    _add_export(subparsers)
    _add_test_rule(subparsers)
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
PAPER_LIBRARIES = ("pandas", "sklearn", "scipy", "matplotlib")
"""What ``deepctrl reproduce`` needs (the ``paper`` extra)."""


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
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:  # the command's own parser says it, pointing to the command's help
        command = parser.commands.get(args.command, parser)
        command = getattr(command, "commands", {}).get(getattr(args, "experiment", None), command)
        command.error(f"unrecognized arguments: {' '.join(unknown)}")
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
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
            return 130
        except Terminated:
            print("deepctrl: terminated", file=err)
            return 143


if __name__ == "__main__":
    sys.exit(main())
