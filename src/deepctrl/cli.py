"""The ``deepctrl`` command line: argparse front end, no logic of its own."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import Any

from deepctrl._version import __version__

# experiment name -> (module in deepctrl.experiments, function, help)
EXPERIMENTS: dict[str, tuple[str, str, str]] = {
    "pendulum": ("pendulum", "reproduce", "double pendulum, energy rule (paper Sec. 4.1)"),
    "pendulum-ablations": ("ablations", "reproduce",
                           "prior, merge, rho and t-SNE ablations (paper Sec. 5, App. A.3, A.5)"),
    "retail": ("retail", "reproduce", "sales forecasting, price rule (paper Sec. 4.2)"),
    "cardio": ("cardio", "reproduce", "cardiovascular risk, blood-pressure rule (Sec. 4.3)"),
    "cardio-perturbation": ("cardio", "reproduce_perturbation",
                            "perturbation-scale study on cardio (App. A.2)"),
}


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _add_reproduce(subparsers: Any) -> None:
    rep = subparsers.add_parser("reproduce", help="reproduce a paper experiment",
                                description="Reproduce an experiment of the DeepCTRL paper.")
    exps = rep.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)
    for name, (module, func, help_text) in EXPERIMENTS.items():
        p = exps.add_parser(name, help=help_text, description=help_text)
        p.add_argument("--seeds", type=_positive_int, default=10,
                       help="number of seeds (default 10, as in the paper)")
        p.add_argument("--quick", action="store_true",
                       help="smoke run: fewer seeds and epochs, labelled as such")
        p.add_argument("--out", default=f"results/{name}", help="output folder")
        p.add_argument("--device", default="cpu", help="torch device, e.g. cpu or cuda")
        p.add_argument("--no-progress", dest="progress", action="store_false",
                       help="hide progress bars")
        if name.startswith("pendulum"):
            p.add_argument("--preset", choices=("paper", "authors"), default="paper",
                           help="paper: 10 Hz pairs (default); authors: 5 ms pairs")
        if name == "retail":
            p.add_argument("--m5-dir", default=None,
                           help="folder with the Kaggle M5 files (default: synthetic market)")
        if name.startswith("cardio"):
            p.add_argument("--csv", default=None,
                           help="Kaggle cardio_train.csv (default: synthetic cohort)")
        p.set_defaults(handler=_run_experiment, target=(module, func))


def _run_experiment(args: argparse.Namespace) -> int:
    module, func = args.target
    run = getattr(importlib.import_module(f"deepctrl.experiments.{module}"), func)
    options = {k: v for k, v in vars(args).items()
               if k not in ("handler", "target", "command", "experiment")}
    run(**options)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="deepctrl",
        description="Teach neural networks rules; choose the rule strength at inference.",
    )
    parser.add_argument("--version", action="version", version=f"deepctrl {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_reproduce(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; bad input gives one line on stderr and exit code 2."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 0
    try:
        return int(handler(args) or 0)
    except (ValueError, FileNotFoundError, PermissionError, IsADirectoryError) as exc:
        print(f"deepctrl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("deepctrl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
