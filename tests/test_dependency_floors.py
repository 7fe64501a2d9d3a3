"""`.ci/floors.txt`, the versions CI installs to test the package's lowest dependencies,
pins each floor that pyproject.toml declares: a floor raised in one file and not in the
other fails here."""

from __future__ import annotations

import re
from pathlib import Path

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
EXTRAS = ("tabular", "parquet", "onnx")
"""The extras whose floors CI tests (the others hold tools: tests, docs, benchmarks)."""


def _release(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def _declared() -> dict[str, str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    requirements = list(project["dependencies"])
    for extra in EXTRAS:
        requirements += project["optional-dependencies"][extra]
    floors = {}
    for requirement in requirements:
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([\d.]+)(;.*)?", requirement.strip())
        if found and found[1] != "torch" and not found[3]:  # torch's floor has its own stage
            floors[found[1].lower()] = found[2]
    return floors


def _pinned() -> dict[str, str]:
    lines = (ROOT / ".ci" / "floors.txt").read_text().splitlines()
    pins = [line.split("==") for line in lines if line.strip() and not line.startswith("#")]
    return {name.strip().lower(): version.strip() for name, version in pins}


def test_every_declared_floor_is_pinned_at_its_lowest_release():
    declared, pinned = _declared(), _pinned()
    assert set(pinned) == set(declared)
    for name, floor in declared.items():
        low, pin = _release(floor), _release(pinned[name])
        assert pin >= low and pin[: len(low)] == low, (name, floor, pinned[name])
