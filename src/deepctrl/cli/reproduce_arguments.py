"""``deepctrl reproduce``: the arguments of each paper experiment, and the run of one
(the extras it needs and its output folder checked before any training).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from deepctrl.cli.command_help import with_examples

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

PAPER_LIBRARIES = ("pandas", "sklearn", "scipy", "matplotlib")
"""What ``deepctrl reproduce`` needs (the ``paper`` extra)."""


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def add_reproduce(subparsers: Any) -> None:
    rep = subparsers.add_parser(
        "reproduce",
        help="reproduce a paper experiment",
        description="Reproduce an experiment of the DeepCTRL paper.",
        **with_examples("reproduce"),
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
