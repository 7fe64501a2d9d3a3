"""The arguments of ``deepctrl fit`` and ``deepctrl test-rule``, which train on a table
(its columns, rules and loss given alike), and the calls of their commands.
"""

from __future__ import annotations

import argparse
from typing import Any

from deepctrl.cli.command_help import DROP_HELP, ID_HELP, with_examples


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


def add_fit(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "fit",
        help="train a model on a CSV or Parquet table",
        description="Train DeepCTRL on a table; the rule strength is chosen later.",
        **with_examples("fit"),
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


def add_test_rule(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "test-rule",
        help="is a candidate rule right for each group of a table?",
        description="Train DeepCTRL on every group of a table (and on all rows), sweep the "
        "rule strength on held-out folds and judge the rule per group: "
        "consistent, contradicted or inconclusive.",
        **with_examples("test-rule"),
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
