"""How far two pendulum runs (two results.json files, e.g. from two machines) are apart:
the absolute differences of every method's mean test MAE at every alpha, also in units of
the first run's seed-to-seed standard deviation, and each run's issue-3 claims.

    python benchmarks/compare_results.py docs/results/pendulum/paper/results.json \\
        docs/results/pendulum/paper-other-cpu/results.json

Prints one JSON object.
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("first", type=Path)
    parser.add_argument("second", type=Path)
    args = parser.parse_args()
    first, second = (json.loads(p.read_text()) for p in (args.first, args.second))
    diffs, in_std = mae_differences(first, second)
    claims = {str(p): [{k: c[k] for k in ("claim", "value", "bound", "holds")}
                       for c in run["claims"]]
              for p, run in ((args.first, first), (args.second, second))}
    print(json.dumps({"benchmark": "compare_results",
                      "mean_test_mae_abs_difference": {
                          "median": round(float(np.median(diffs)), 6),
                          "max": round(float(diffs.max()), 6),
                          "max_in_seed_std_of_first": round(float(in_std.max()), 3)},
                      "wall_seconds": [first["wall_seconds"], second["wall_seconds"]],
                      "claims": claims}, indent=1))


if __name__ == "__main__":
    main()
