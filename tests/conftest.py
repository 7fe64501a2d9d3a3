"""Shared test settings: deterministic, single-threaded torch for stable timings."""

import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

torch.set_num_threads(1)
sys.path.insert(0, str(Path(__file__).parent))  # tests import the shared helpers.py


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for torchrun)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def single_and_ddp(tmp_path: Path, free_port: int) -> Callable[..., tuple[Path, Path]]:
    """Run a worker script alone, then as two gloo ranks; return the two files it wrote.
    Extra arguments go to the worker after the output file, whose name ends in ``suffix``."""

    def run(worker: Path, *args: str, suffix: str = ".safetensors") -> tuple[Path, Path]:
        single, multi = tmp_path / f"single{suffix}", tmp_path / f"ddp{suffix}"
        subprocess.run([sys.executable, str(worker), str(single), *args], check=True, timeout=300)
        ddp = subprocess.run(
            [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--nproc_per_node",
                "2",
                "--master_addr",
                "127.0.0.1",
                "--master_port",
                str(free_port),
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
