"""How far two runs of an experiment (two results.json files, e.g. from two machines or two
versions of the code) are apart.

    python benchmarks/compare_results.py docs/results/pendulum/paper/results.json \\
        docs/results/pendulum/paper-other-cpu/results.json
    python benchmarks/compare_results.py --exact before/results.json after/results.json

Pendulum runs and their ablation studies: the absolute differences of every method's mean
test MAE at every alpha, also in units of the first run's seed-to-seed standard deviation,
and each run's checked claims (an ablation study checks none). ``--exact`` (any
experiment): every number of the two files compared one by one, timings left out;
"identical" when none differs. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np


def mae_differences(first: dict, second: dict) -> tuple[np.ndarray, np.ndarray]:
    """Absolute differences of the mean test MAE curves, and the same over the first run's
    standard deviation, for the methods both runs have."""
    diffs, in_std = [], []
    for name in first["methods"].keys() & second["methods"].keys():
        a = first["methods"][name]["test"]["mae"]
        b = second["methods"][name]["test"]["mae"]
        diff = np.abs(np.asarray(a["mean"], float) - np.asarray(b["mean"], float))
        diffs.append(diff)
        in_std.append(diff / np.asarray(a["std"], float))
    return np.concatenate(diffs), np.concatenate(in_std)


TIMING_KEYS = ("seconds", "wall", "timing", "cpu", "rss", "memory")


def leaves(obj: object, path: str = "") -> dict[str, object]:
    """Every number, text and null of a JSON document by its path; timing entries left out."""
    if isinstance(obj, dict):
        out: dict[str, object] = {}
        for key, value in obj.items():
            if not any(word in key.lower() for word in TIMING_KEYS):
                out.update(leaves(value, f"{path}/{key}"))
        return out
    if isinstance(obj, list):
        out = {}
        for i, value in enumerate(obj):
            out.update(leaves(value, f"{path}/{i}"))
        return out
    return {path: obj}


def exact_comparison(first: dict, second: dict) -> dict[str, object]:
    """How many values of the two documents differ, the largest numeric difference, and the
    first few paths that differ."""
    a, b = leaves(first), leaves(second)
    differing = sorted(k for k in a.keys() | b.keys() if a.get(k, "missing") != b.get(k, "missing"))
    numeric = [
        abs(a[k] - b[k])
        for k in differing  # type: ignore[operator]
        if isinstance(a.get(k), int | float) and isinstance(b.get(k), int | float)
    ]
    return {
        "values": len(a),
        "differing": len(differing),
        "identical": not differing,
        "max_abs_difference": max(numeric, default=0.0),
        "first_differing": differing[:5],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    parser.add_argument(
        "--exact",
        action="store_true",
        help="compare every value (any experiment), timings left out",
    )
    args = parser.parse_args()
    first, second = (json.loads(p.read_text()) for p in (args.first, args.second))
    if args.exact:
        print(
            json.dumps(
                {"benchmark": "compare_results", **exact_comparison(first, second)}, indent=1
            )
        )
        return
    diffs, in_std = mae_differences(first, second)
    checks = {  # an ablation study's results check no claim
        str(p): [
            {k: c[k] for k in ("claim", "value", "bound", "holds")} for c in run.get("checks", [])
        ]
        for p, run in ((args.first, first), (args.second, second))
    }
    print(
        json.dumps(
            {
                "benchmark": "compare_results",
                "mean_test_mae_abs_difference": {
                    "median": round(float(np.median(diffs)), 6),
                    "max": round(float(diffs.max()), 6),
                    "max_in_seed_std_of_first": round(float(in_std.max()), 3),
                },
                "wall_seconds": [first.get("wall_seconds"), second.get("wall_seconds")],
                "checks": checks,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
