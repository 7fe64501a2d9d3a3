"""The network of a table estimator, sized from the table: data and rule encoders
inputs-h-h-latent and a decision block 2 latent-h-outputs.

>>> network_spec(10, 1, "identity", None, None)
{'inputs': 10, 'hidden': 64, 'latent': 16, 'outputs': 1, 'head': 'identity'}
>>> network_spec(37, 1, "identity", None, None, max_hidden=64)["hidden"]
64
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from torch import nn

from deepctrl.core.layers import mlp
from deepctrl.core.model import DeepCTRL


def network_spec(
    n_in: int, n_out: int, head: str, hidden: int | None, latent: int | None, max_hidden: int = 128
) -> dict[str, Any]:
    """Layer sizes: hidden = 4 x inputs rounded up to a power of two within [32,
    ``max_hidden``], latent = hidden / 4 (at least 8), unless given."""
    h = int(hidden or np.clip(2 ** math.ceil(math.log2(4 * n_in)), 32, max_hidden))
    z = int(latent or max(8, h // 4))
    return {"inputs": n_in, "hidden": h, "latent": z, "outputs": n_out, "head": head}


def build_network(spec: dict[str, Any]) -> DeepCTRL:
    """Data and rule encoders inputs-h-h-latent, decision block 2 latent-h-outputs, with a
    log-softmax head for several classes (a binary classifier outputs the logit)."""
    n_in, h, z, n_out, head = (spec[k] for k in ("inputs", "hidden", "latent", "outputs", "head"))
    if head not in ("identity", "log_softmax"):
        raise ValueError(f"unknown output head {head!r}")
    decision: nn.Module = mlp(2 * z, h, n_out)
    if head == "log_softmax":
        decision = nn.Sequential(decision, nn.LogSoftmax(dim=-1))
    return DeepCTRL(mlp(n_in, h, h, z), mlp(n_in, h, h, z), decision)
