"""Shared test settings: deterministic, single-threaded torch for stable timings."""

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).parent))  # tests import the shared helpers.py


@pytest.fixture
def single_and_ddp(tmp_path: Path) -> Callable[..., tuple[Path, Path]]:
    """Run a worker script alone, then as two gloo ranks; return the two files it wrote.
    Extra arguments go to the worker after the output file, whose name ends in ``suffix``.

    torchrun runs ``--standalone``: it binds a free port itself, so two tests that start
    ranks at once (pytest -n 2) cannot be handed the same port between a check and a bind.
    """

    def run(worker: Path, *args: str, suffix: str = ".safetensors") -> tuple[Path, Path]:
        single, multi = tmp_path / f"single{suffix}", tmp_path / f"ddp{suffix}"
        subprocess.run([sys.executable, str(worker), str(single), *args], check=True, timeout=300)
        ddp = subprocess.run(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc_per_node",
                "2",
                str(worker),
                str(multi),
                *args,
            ],
            timeout=300,
            capture_output=True,
            text=True,
        )
        assert ddp.returncode == 0, ddp.stderr[-3000:]
        return single, multi

    return run
