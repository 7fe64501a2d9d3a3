"""How long the installed ``deepctrl`` command takes before it does any work: ``--help``, a
usage error, a missing data file, a pickle passed as a model, and ``import deepctrl``
against ``import torch`` and ``import sklearn`` alone (each a fresh process).

    python benchmarks/cli_startup.py [--repeats 5]

Prints one JSON object with the median seconds of each.
"""

from __future__ import annotations

import argparse
import json
import pickle
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def median_seconds(command: list[str], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return round(statistics.median(times), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    exe = shutil.which("deepctrl")
    if exe is None:
        sys.exit("the deepctrl command is not installed (pip install -e .)")
    folder = Path(tempfile.mkdtemp())
    evil = folder / "model.deepctrl"
    evil.write_bytes(pickle.dumps({"not": "a model"}))
    (folder / "data.csv").write_text("x,y\n1,2\n")
    cases = {
        "deepctrl --help": [exe, "--help"],
        "usage error (deepctrl fit)": [exe, "fit"],
        "missing data file": [exe, "fit", str(folder / "nowhere.csv"), "--target", "y",
                              "--out", str(folder / "m")],
        "pickle as model": [exe, "predict", str(evil), str(folder / "data.csv"),
                            "--out", str(folder / "p.csv")],
        "python -c 'import deepctrl'": [sys.executable, "-c", "import deepctrl"],
        "python -c 'import torch'": [sys.executable, "-c", "import torch"],
        "python -c 'import sklearn.base'": [sys.executable, "-c", "import sklearn.base"],
    }
    seconds = {name: median_seconds(cmd, args.repeats) for name, cmd in cases.items()}
    print(json.dumps({"benchmark": "cli_startup", "repeats": args.repeats,
                      "median_seconds": seconds}, indent=2))


if __name__ == "__main__":
    main()
