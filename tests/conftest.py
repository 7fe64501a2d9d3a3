"""Shared test settings: deterministic, single-threaded torch for stable timings."""

import socket

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for torchrun)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
