"""How long the installed ``deepctrl`` command takes before it does any work: ``--help``, a
usage error, a missing data file, a pickle passed as a model, a table lacking a column the
model reads, and ``import deepctrl`` against ``import torch`` and ``import sklearn`` alone
(each a fresh process; the model is fitted once, first, with one epoch).

    python benchmarks/cli_startup.py [--repeats 5] [--via-module]

Prints one JSON object with the median seconds of each. ``--via-module`` runs
``python -m deepctrl`` instead of the installed command, to time another checkout:
``PYTHONPATH=/path/to/checkout/src python benchmarks/cli_startup.py --via-module``.
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


def median_seconds(command: list[str], exit_code: int, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != exit_code:
            sys.exit(
                f"{command} exited with {done.returncode}, expected {exit_code}: "
                f"{done.stderr.strip()}"
            )
    return round(statistics.median(times), 3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument(
        "--via-module",
        action="store_true",
        help="run python -m deepctrl instead of the installed command",
    )
    args = parser.parse_args()
    installed = shutil.which("deepctrl")
    if args.via_module:
        exe = [sys.executable, "-m", "deepctrl"]
    elif installed:
        exe = [installed]
    else:
        sys.exit("the deepctrl command is not installed (pip install -e .)")
    folder = Path(tempfile.mkdtemp())
    evil = folder / "model.deepctrl"
    evil.write_bytes(pickle.dumps({"not": "a model"}))
    (folder / "data.csv").write_text(
        "x,z,y\n" + "".join(f"{i},{i % 3},{2 * i}\n" for i in range(50))
    )
    (folder / "lacking.csv").write_text("x\n1\n")
    model = folder / "fitted.deepctrl"
    subprocess.run(
        [
            *exe,
            "fit",
            str(folder / "data.csv"),
            "--target",
            "y",
            "--max-epochs",
            "1",
            "--no-progress",
            "--out",
            str(model),
        ],
        capture_output=True,
        check=True,
    )
    cases = {  # name: (command, expected exit code)
        "deepctrl --help": ([*exe, "--help"], 0),
        "usage error (deepctrl fit)": ([*exe, "fit"], 2),
        "missing data file": (
            [*exe, "fit", str(folder / "nowhere.csv"), "--target", "y", "--out", str(folder / "m")],
            2,
        ),
        "pickle as model": (
            [*exe, "predict", str(evil), str(folder / "data.csv"), "--out", str(folder / "p.csv")],
            2,
        ),
        "table lacking a column": (
            [
                *exe,
                "predict",
                str(model),
                str(folder / "lacking.csv"),
                "--out",
                str(folder / "p.csv"),
            ],
            2,
        ),
        "python -c 'import deepctrl'": ([sys.executable, "-c", "import deepctrl"], 0),
        "python -c 'import torch'": ([sys.executable, "-c", "import torch"], 0),
        "python -c 'import sklearn.base'": ([sys.executable, "-c", "import sklearn.base"], 0),
    }
    seconds = {name: median_seconds(cmd, code, args.repeats) for name, (cmd, code) in cases.items()}
    print(
        json.dumps(
            {"benchmark": "cli_startup", "repeats": args.repeats, "median_seconds": seconds},
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
