"""The public API as a strictly typed program sees it: `mypy --strict` accepts the documented
calls with the types they return at runtime, and flags a misspelt name."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("mypy")

SOURCE = Path(__file__).resolve().parents[1] / "src"

CLIENT = """
import numpy as np
import torch
import deepctrl as dc

X = torch.randn(32, 3)
rule = dc.Monotonic(0, "increasing")
result = dc.fit(dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)), rule, train=(X, X))
trained: dc.DeepCTRL = result.model
out: torch.Tensor = trained(X, 0.5)
rebuilt: dc.DeepCTRL = dc.load("m.safetensors")
into: dc.DeepCTRL = dc.load("m.safetensors", trained)
_, ok = dc.predict_sweep(trained, rule, X, np.linspace(0, 1, 3))
ratios: torch.Tensor = ok.nanmean(dim=1)
outputs: torch.Tensor = trained.forward_alphas(X, np.linspace(0, 1, 3))
est: dc.DeepCTRLRegressor = dc.DeepCTRLRegressor().fit(np.zeros((4, 1)), np.zeros(4))
tuned: dc.DeepCTRLRegressor = est.set_params(alpha=0.5)
loaded: dc.DeepCTRLRegressor = dc.DeepCTRLRegressor.load("m.deepctrl")
untyped: dc.FitResult = result


def stop(end: dc.EpochEnd) -> bool:
    return end.epoch >= 2


one_alone = dc.fit(trained, rule, train=(X, X), callbacks=stop)
"""


def _strict_errors(tmp_path: Path, code: str) -> list[str]:
    client = tmp_path / "client.py"
    client.write_text(textwrap.dedent(code))
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-error-summary",
            "--disable-error-code=import-untyped",
            f"--cache-dir={tmp_path / 'cache'}",
            str(client),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "MYPYPATH": str(SOURCE)},
        check=False,
    )
    return [line for line in run.stdout.splitlines() if line.startswith(f"{client.name}:")]


@pytest.mark.slow
def test_documented_calls_type_check_strictly_and_misspelt_names_do_not(tmp_path):
    assert _strict_errors(tmp_path, CLIENT) == []
    errors = _strict_errors(tmp_path, "import deepctrl as dc\nest = dc.DeepCTRLRegresor()\n")
    assert len(errors) == 1 and 'has no attribute "DeepCTRLRegresor"' in errors[0]


@pytest.mark.slow
def test_the_typed_rule_of_the_rules_page_type_checks_strictly(tmp_path):
    page = (SOURCE.parent / "docs" / "rules.md").read_text()
    (block,) = [b for b in re.findall(r"```python\n(.*?)```", page, re.S) if "Typed" in b]
    assert _strict_errors(tmp_path, block) == []


@pytest.mark.parametrize("name", ["DeepCTRLRegressor", "DeepCTRLClassifier", "DeepCTRL"])
def test_the_public_classes_annotations_resolve_at_runtime(name):
    import typing

    import deepctrl as dc

    assert typing.get_type_hints(getattr(dc, name))  # names, not only text for a checker
