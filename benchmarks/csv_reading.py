"""How long ``read_table`` (what the ``deepctrl`` command reads a CSV file with) takes,
against a plain ``pandas.read_csv`` of the same file.

Generated files of ``--rows`` rows and 10 columns each, in a temporary folder:

- ``plain_comma``: numbers with decimal points, whole numbers, two text columns;
- ``dressed_comma``: the same kinds, with prices written with a currency sign and thousands
  separators ("$1,234.50", "2,500 €"), whole numbers with thousands separators
  ("1,234,567"), a percent column ("12.5%") and the typographic minus sign ("\u22123.25");
- ``plain_semicolon``: a semicolon file of numbers with decimal points;
- ``comma_decimals``: a semicolon file of numbers with decimal commas ("3,25"), thousands
  separated by dots ("1.234,5") and a percent column ("12,5%").

    python benchmarks/csv_reading.py [--rows 200000] [--repeats 3]
    PYTHONPATH=/path/to/checkout/src python benchmarks/csv_reading.py   # another checkout

Prints JSON: per file, its size, the median seconds of ``read_table`` (the notes it writes
are silenced) and of ``pandas.read_csv`` with the file's separator, and their ratio.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from deepctrl.cli.table_reading import read_table

CITIES = ["Berlin", "Bonn", "Hamburg", "Köln", "München", "Leipzig", "Dresden", "Essen"]


def grouped(values: np.ndarray, group: str, mark: str, decimals: int) -> list[str]:
    """``values`` written with thousands separated by ``group`` and ``mark`` before the
    decimals."""
    return [
        f"{v:,.{decimals}f}".replace(",", "\0").replace(".", mark).replace("\0", group)
        for v in values
    ]


def tables(rows: int, seed: int) -> dict[str, tuple[str, pd.DataFrame]]:
    """The benchmark's tables, by name: (separator, the table to write)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(rows, 5)).round(4)
    count = rng.integers(0, 5000, size=rows)
    price = rng.uniform(1, 20_000, size=rows).round(2)
    big = rng.integers(0, 5_000_000, size=rows)
    rate = rng.uniform(0, 100, size=rows).round(1)
    city = rng.choice(CITIES, size=rows)
    member = rng.choice(["yes", "no"], size=rows)
    plain = pd.DataFrame({f"x{i}": x[:, i] for i in range(5)})
    plain["count"] = count
    plain["price"] = price
    plain["rate"] = rate
    plain["city"] = city
    plain["member"] = member
    dressed = pd.DataFrame({f"x{i}": x[:, i] for i in range(3)})
    dressed["change"] = [f"\u2212{-v}" if v < 0 else str(v) for v in x[:, 4]]
    dressed["count"] = count
    dressed["price"] = ["$" + v for v in grouped(price, ",", ".", 2)]
    dressed["cost"] = [v + " €" for v in grouped(price / 3, ",", ".", 2)]
    dressed["amount"] = grouped(big, ",", ".", 0)
    dressed["rate"] = [f"{v}%" for v in rate]
    dressed["city"] = city
    decimal = pd.DataFrame({f"x{i}": [str(v).replace(".", ",") for v in x[:, i]] for i in range(5)})
    decimal["count"] = count
    decimal["price"] = grouped(price, ".", ",", 2)
    decimal["rate"] = [f"{v}%".replace(".", ",") for v in rate]
    decimal["city"] = city
    decimal["member"] = member
    return {
        "plain_comma": (",", plain),
        "dressed_comma": (",", dressed),
        "plain_semicolon": (";", plain),
        "comma_decimals": (";", decimal),
    }


def median_seconds(call: Callable[[], Any], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    results = {}
    for name, (sep, frame) in tables(args.rows, args.seed).items():
        path = folder / f"{name}.csv"
        frame.to_csv(path, sep=sep, index=False)
        with contextlib.redirect_stderr(io.StringIO()):
            ours = median_seconds(lambda path=path: read_table(path), args.repeats)
        pandas = median_seconds(lambda path=path, sep=sep: pd.read_csv(path, sep=sep), args.repeats)
        results[name] = {
            "megabytes": round(path.stat().st_size / 1e6, 1),
            "read_table_seconds": round(ours, 3),
            "pandas_seconds": round(pandas, 3),
            "ratio": round(ours / pandas, 2),
        }
    print(
        json.dumps(
            {
                "benchmark": "csv_reading",
                "rows": args.rows,
                "columns": 10,
                "repeats": args.repeats,
                "files": results,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
