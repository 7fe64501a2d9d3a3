"""The help the subcommands' parsers share: the example command lines shown under each
``--help``, and the help of the options several commands take.
"""

from __future__ import annotations

import argparse
from typing import Any

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


def with_examples(command: str) -> dict[str, Any]:
    """The ``epilog`` and ``formatter_class`` of a subcommand's parser."""
    lines = "\n".join(f"  {line}" for line in EXAMPLES[command])
    return {"epilog": f"examples:\n{lines}", "formatter_class": _KeepExamples}


ID_HELP = "a column that identifies rows and is never a feature (repeatable)"
DROP_HELP = (
    "drop rows with missing values, text in number columns or values that are not dates in "
    "date columns (by default missing values are imputed and the others are errors)"
)
