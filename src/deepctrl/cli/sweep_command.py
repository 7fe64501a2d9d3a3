"""``deepctrl sweep``: a model's verification ratio and error at every alpha of a grid,
then the alpha a verification goal picks without labels, next to the one of lowest error.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.alpha_options import parse_alphas, verification_goal
from deepctrl.cli.column_checks import check_count_target, check_weight_column, id_frame, no_column
from deepctrl.cli.one_line_errors import one_line_errors
from deepctrl.cli.scored_table import model_and_frame, model_rows
from deepctrl.cli.table_output import open_stdout
from deepctrl.core.ratio_text import ratio_text


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
    goal = verification_goal(min_verification)
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
    open_stdout("sweep writes its table there; redirect it to a file (> table.txt)")
    if as_json:
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
            f"{ratio_text(table.at[i, 'verification_ratio'], goal)})"
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
            f"(highest {ratio_text(best, goal)} at alpha {alpha:g})"
        )
    else:
        lines.append(
            f"label-free: no alpha in the grid reaches verification {goal:g} "
            "(the rules judge none of these rows)"
        )
    return lines
