"""How long a table takes to prepare before training: the command line's column checks
(``left_out_columns``), then fitting the table encoder and encoding every row, as
``deepctrl fit`` does (it fits the encoder twice: once to check the rules, once to train).

A generated table of ``--rows`` rows: 20 number columns, one text column of four values,
one of three date columns, chosen by ``--dates``:

- ``daily``: ISO dates (``2021-03-07``), 1,000 distinct days;
- ``hourly``: ISO times with a UTC offset (``2021-03-07T14:00+01:00``), about one distinct
  value per 36 rows;
- ``unique``: ISO times to the second, every row its own.

    python benchmarks/table_preparation.py [--rows 1000000] [--dates daily] [--repeats 3]
    PYTHONPATH=/path/to/checkout/src python benchmarks/table_preparation.py   # another checkout

Prints JSON: the median seconds of each step and their sum. The columns are text, as
``read_table`` gives them for a CSV file.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from deepctrl.cli.table_cleaning import left_out_columns
from deepctrl.tabular.encoding import TableEncoder


def table(rows: int, dates: str, seed: int = 0) -> pd.DataFrame:
    """The generated table (see the module's docstring)."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(rng.normal(size=(rows, 20)).round(4), columns=[f"x{i}" for i in range(20)])
    frame["shop"] = pd.Series(rng.choice(["north", "south", "east", "west"], rows), dtype="str")
    start = pd.Timestamp("2020-01-01")
    if dates == "daily":
        day = start + pd.to_timedelta(rng.integers(0, 1000, rows), unit="D")
        text = day.strftime("%Y-%m-%d")
    elif dates == "hourly":
        hour = start + pd.to_timedelta(rng.integers(0, max(rows // 36, 1), rows), unit="h")
        text = hour.strftime("%Y-%m-%dT%H:%M") + np.where(
            hour.month.isin(range(4, 11)), "+02:00", "+01:00"
        )
    else:
        second = start + pd.to_timedelta(rng.permutation(rows) * 7, unit="s")
        text = second.strftime("%Y-%m-%dT%H:%M:%S")
    frame["when"] = pd.Series(np.asarray(text), dtype="str")
    return frame


def median_seconds(step: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
            warnings.simplefilter("ignore")
            step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--dates", choices=["daily", "hourly", "unique"], default="daily")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    frame = table(args.rows, args.dates)
    columns = list(frame.columns)
    encoder = TableEncoder.fit(frame)
    steps = {
        "column_checks": lambda: left_out_columns(frame, columns, Path("table.csv")),
        "encoder_fit": lambda: TableEncoder.fit(frame),
        "encode_rows": lambda: encoder.transform(frame),
    }
    seconds = {name: median_seconds(step, args.repeats) for name, step in steps.items()}
    total = seconds["column_checks"] + 2 * seconds["encoder_fit"] + seconds["encode_rows"]
    print(
        json.dumps(
            {
                "rows": args.rows,
                "dates": args.dates,
                "repeats": args.repeats,
                "seconds": {k: round(v, 3) for k, v in seconds.items()},
                "as_in_deepctrl_fit": round(total, 3),
            },
            indent=2,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
