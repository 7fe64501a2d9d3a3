"""The installed ``deepctrl`` command's help, version and one-line usage errors."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

import deepctrl as dc


def test_version_and_help(cli):
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"deepctrl {dc.__version__}"
    done = subprocess.run(
        [sys.executable, "-m", "deepctrl", "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == f"deepctrl {dc.__version__}"
    done = cli("--help")
    assert done.returncode == 0, done.stderr
    bare = cli()  # no command: the same usage, as an error a script notices
    assert bare.returncode == 2 and bare.stdout == ""
    for command in ("reproduce", "fit", "sweep", "predict"):
        assert command in done.stdout and command in bare.stderr
    done = cli("reproduce", "--help")
    assert done.returncode == 0
    assert all(
        name in done.stdout
        for name in ("pendulum", "pendulum-ablations", "retail", "cardio", "cardio-perturbation")
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["bogus"], r"deepctrl: error: argument COMMAND: invalid choice: 'bogus'"),
        (["fit"], r"deepctrl fit: error: the following arguments are required: DATA, --target"),
        (
            ["reproduce", "pendulum", "--seeds", "0"],
            r"deepctrl reproduce pendulum: error: argument --seeds: expected a positive integer, "
            r"got '0'",
        ),
    ],
)
def test_usage_errors_are_one_line(cli, args, message):
    done = cli(*args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and re.match(message, lines[0]), lines
    assert lines[0].endswith("--help')")


def test_under_torchrun_every_line_is_printed_once(tmp_path):
    rows = ["price,kind,y"] + [
        f"{1 + i % 7},{'ab'[i % 2]},{-(i % 7) + 0.1 * (i % 3)}" for i in range(120)
    ]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            "--nproc_per_node",
            "2",
            "-m",
            "deepctrl.cli.main",
            "fit",
            "t.csv",
            "--target",
            "y",
            "--monotonic",
            "price=decreasing",
            "--max-epochs",
            "2",
            "--no-progress",
            "--out",
            "m.deepctrl",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    ours = [
        line
        for line in (done.stdout + done.stderr).splitlines()
        if not line.startswith(("W1", "*"))
    ]  # torchrun's own banner
    assert any(line.startswith("task: regression") for line in ours), ours
    assert any(line.startswith("model written to") for line in ours), ours
    assert len(ours) == len(set(ours)), ours
