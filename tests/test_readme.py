"""The README's core API examples run as written."""

import re
from pathlib import Path

import pytest

import deepctrl as dc

README = Path(__file__).resolve().parents[1] / "README.md"


def python_block(after: str) -> str:
    text = README.read_text()
    section = text[text.index(after) :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_core_api_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(python_block("## The core API in 20 lines"), "README.md", "exec"), namespace)
    table, alpha = namespace["table"], namespace["alpha"]
    assert table["verification_ratio"][-1] >= 0.95 and alpha in table["alpha"]
    assert (tmp_path / "model.safetensors").is_file()
    assert "chosen alpha" in capsys.readouterr().out
    assert len(python_block("## The core API in 20 lines").strip().splitlines()) <= 20


@pytest.mark.slow
def test_own_training_loop_example_runs(tmp_path, monkeypatch, capsys):
    """The Objective block continues the first one (same X, y and rule)."""
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(python_block("## The core API in 20 lines"), "README.md", "exec"), namespace)
    exec(compile(python_block("### Your own training loop"), "README.md", "exec"), namespace)
    assert namespace["objective"].rho > 0
    X, y, model, rule = (namespace[k] for k in ("X", "y", "model", "rule"))
    table = dc.sweep(model, rule, X[1750:], y[1750:], alphas=[0.0, 1.0])
    assert table["verification_ratio"][1] >= 0.95
    assert table["mae"][0] < 0.3
    assert "verification_ratio" in capsys.readouterr().out
