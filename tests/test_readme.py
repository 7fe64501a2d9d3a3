"""The README's core API example runs as written."""

import re
from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def python_block(after: str) -> str:
    text = README.read_text()
    section = text[text.index(after):]
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
