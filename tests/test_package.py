"""The package's public names, imported on first use: ``import deepctrl`` and the command
line's input checks do not load PyTorch or scikit-learn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import deepctrl as dc


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
