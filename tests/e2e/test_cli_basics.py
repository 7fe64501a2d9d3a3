"""The installed ``deepctrl`` command's help, version and usage errors, and what it imports
before it knows the input is good."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

import deepctrl as dc


def test_version_and_help(cli):
    done = cli("--version")
    assert done.returncode == 0 and done.stdout.strip() == f"deepctrl {dc.__version__}"
    for args in (["--help"], []):
        done = cli(*args)
        assert done.returncode == 0, done.stderr
        for command in ("reproduce", "fit", "sweep", "predict"):
            assert command in done.stdout
    done = cli("reproduce", "--help")
    assert done.returncode == 0
    assert all(name in done.stdout for name in ("pendulum", "pendulum-ablations", "retail",
                                                 "cardio", "cardio-perturbation"))


@pytest.mark.parametrize(("args", "message"), [
    (["bogus"], r"deepctrl: error: argument COMMAND: invalid choice: 'bogus'"),
    (["fit"], r"deepctrl fit: error: the following arguments are required: DATA, --target"),
    (["reproduce", "pendulum", "--seeds", "0"],
     r"deepctrl reproduce pendulum: error: argument --seeds: expected a positive integer, "
     r"got '0'"),
])
def test_usage_errors_are_one_line(cli, args, message):
    done = cli(*args)
    assert done.returncode == 2 and done.stdout == ""
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and re.match(message, lines[0]), lines
    assert lines[0].endswith("--help')")


def test_package_and_argument_checks_load_neither_torch_nor_sklearn():
    code = ("import json, sys, deepctrl, deepctrl.cli, deepctrl.commands, deepctrl.file_format\n"
            "heavy = lambda: [m for m in ('torch', 'sklearn', 'scipy') if m in sys.modules]\n"
            "before = heavy()\n"
            "deepctrl.DeepCTRL\n"
            "print(json.dumps([before, heavy()]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    before, after = json.loads(done.stdout)
    assert before == [] and "torch" in after  # torch loads when a public name is first used


def test_every_public_name_resolves():
    assert sorted(dc.__all__) == sorted(set(dc.__all__))
    for name in dc.__all__:
        assert getattr(dc, name) is not None, name
        assert name in dir(dc)
    assert dc.Monotonic is dc.rules.Monotonic
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = dc.Nope
