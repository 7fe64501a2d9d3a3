"""The ``--param NAME=VALUE`` option the table benchmarks share: an estimator parameter set
on top of the defaults, repeatable."""

from __future__ import annotations

import argparse
from typing import Any


def parse_param(text: str) -> tuple[str, Any]:
    """``NAME=VALUE`` with VALUE read as an int, else a float, else text.

    >>> parse_param("hidden_size=128"), parse_param("rho=0.3"), parse_param("rho=epoch")
    (('hidden_size', 128), ('rho', 0.3), ('rho', 'epoch'))
    """
    name, _, value = text.partition("=")
    for kind in (int, float):
        try:
            return name, kind(value)
        except ValueError:
            pass
    return name, value


def add_param_option(parser: argparse.ArgumentParser, example: str) -> None:
    """Add ``--param`` to ``parser``; read the values with :func:`params_of`."""
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help=f"an estimator parameter instead of its default, e.g. {example} (repeatable)",
    )


def params_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``--param`` values as keyword arguments.

    >>> parser = argparse.ArgumentParser()
    >>> add_param_option(parser, "hidden_size=64")
    >>> params_of(parser.parse_args(["--param", "max_epochs=20", "--param", "learning_rate=0.014"]))
    {'max_epochs': 20, 'learning_rate': 0.014}
    """
    return dict(parse_param(p) for p in args.param)
