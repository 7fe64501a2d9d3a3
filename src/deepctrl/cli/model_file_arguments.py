"""The arguments of ``deepctrl sweep``, ``deepctrl predict`` and ``deepctrl export``,
which take a model file from ``deepctrl fit``, and the calls of their commands.
"""

from __future__ import annotations

import argparse
from typing import Any

from deepctrl.cli.command_help import DROP_HELP, ID_HELP, with_examples


def add_sweep(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "sweep",
        help="verification ratio and error of a model at every alpha",
        description="Evaluate a model over the rule strength alpha on a table.",
        **with_examples("sweep"),
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


def add_predict(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "predict",
        help="predict every row of a table at a rule strength",
        description="Write predictions, in the input's row order, to a CSV or Parquet "
        "file, or to standard output.",
        **with_examples("predict"),
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


def add_export(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "export",
        help="write a table model as one ONNX file (served by onnxruntime alone)",
        description="Write a model file from 'deepctrl fit' as ONNX: the table's columns by "
        "name and 'alpha' (one per row) in; the predictions out, with the "
        "preprocessing inside. Needs the onnx extra.",
        **with_examples("export"),
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
