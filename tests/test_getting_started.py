"""The getting-started page's examples run as written, in order."""

import re
from pathlib import Path

import numpy as np
import pytest

from deepctrl.cli.main import main

PAGE = Path(__file__).resolve().parents[1] / "docs" / "getting-started.md"


@pytest.mark.slow
def test_the_getting_started_examples_run(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    text = PAGE.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 2
    namespace: dict = {}
    for i, block in enumerate(blocks):
        exec(compile(block, f"getting-started.md block {i + 1}", "exec"), namespace)
    assert namespace["table"]["verification_ratio"][0] == 1.0  # the data follow the rule
    model = namespace["model"]
    assert model.judged_rows_[0] == model.judged_rows_[1]  # a monotonic rule judges every row
    capsys.readouterr()
    commands = re.findall(r"^\$ deepctrl (.*)$", text, re.M)
    assert len(commands) == 2
    for command in commands:
        assert (
            main(
                [*command.split(), "--no-progress"]
                if command.startswith("fit")
                else command.split()
            )
            == 0
        )
    predictions = np.loadtxt(tmp_path / "predictions.csv", delimiter=",", skiprows=1)
    assert predictions.shape == (1000,)
