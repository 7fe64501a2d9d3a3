"""The e2e tests run the INSTALLED ``deepctrl`` command, as a user does."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="session")
def cli() -> Run:
    """``cli(*args, cwd=None, env=None, timeout=900)`` runs ``deepctrl *args`` single-threaded
    and returns the finished process (text stdout and stderr)."""
    exe = shutil.which("deepctrl")
    if exe is None:
        pytest.fail("the deepctrl command is not installed (pip install -e .)")

    def run(
        *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 900
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [exe, *args],
            capture_output=True,
            text=True,
            cwd=cwd,
            env={**os.environ, "OMP_NUM_THREADS": "1", **(env or {})},
            timeout=timeout,
            check=False,
        )

    return run
