"""The network of a table estimator, sized from the table: data and rule encoders
inputs-h-h-latent and a decision block 2 latent-h-outputs.

A category with at least :data:`LOOKUP_WIDTH` values (a one-hot block that wide) enters
the encoders' first layers as a lookup of one weight column per row
(:class:`~deepctrl.core.layers.OneHotLinear`), which computes what the product over the
block computes, for less: on a 20,000-row table with a 1,915-value column a fit took a
third less CPU time at the same test error (``benchmarks/table_speed.py --levels 3000``).

>>> network_spec(10, 1, "identity", None, None)
{'inputs': 10, 'hidden': 64, 'latent': 16, 'outputs': 1, 'head': 'identity'}
>>> network_spec(37, 1, "identity", None, None, max_hidden=64)["hidden"]
64
>>> [network_spec(10, k, "log_softmax", None, None, max_hidden=32)["latent"] for k in (3, 20, 100)]
[8, 16, 32]
>>> network_spec(70, 1, "identity", None, None, one_hot=[(2, 70)])["one_hot"]
[[2, 70]]
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from deepctrl.core.layers import MLP, OneHotLinear, mlp
from deepctrl.core.model import DeepCTRL

LOOKUP_WIDTH = 64
"""The fewest values of a category whose one-hot block the first layers look up."""


def network_spec(
    n_in: int,
    n_out: int,
    head: str,
    hidden: int | None,
    latent: int | None,
    max_hidden: int = 128,
    one_hot: Sequence[tuple[int, int]] = (),
) -> dict[str, Any]:
    """Layer sizes: hidden = 4 x inputs rounded up to a power of two within [32,
    ``max_hidden``], latent = hidden / 4 (at least 8, and with many outputs, such as
    classes, at least half their number rounded up to a power of two, up to hidden), unless
    given; ``one_hot`` are the (start, stop) input columns of the categories the first
    layers look up.

    A latent of 8 for 100 classes had held a 50,000-row classifier at a test log loss of
    2.32 and 2.24 (two generated tables); a latent of 32 gives 2.23 and 2.17 in about the
    same time (multinomial logistic regression, the true model there: 2.16 and 2.12;
    ``benchmarks/many_classes.py --seed 0|1 [--param latent_size=8]``)."""
    h = int(hidden or np.clip(2 ** math.ceil(math.log2(4 * n_in)), 32, max_hidden))
    z = int(latent or max(8, h // 4, min(h, 2 ** math.ceil(math.log2(n_out)) // 2)))
    spec = {"inputs": n_in, "hidden": h, "latent": z, "outputs": n_out, "head": head}
    return {**spec, "one_hot": [[a, b] for a, b in one_hot]} if one_hot else spec


def _encoder(n_in: int, h: int, z: int, one_hot: list[list[int]]) -> MLP:
    """inputs-h-h-latent, its first layer an :class:`OneHotLinear` over ``one_hot`` with
    the weights a plain first layer would start from."""
    encoder = mlp(n_in, h, h, z)
    if one_hot:
        first = encoder[0]
        assert isinstance(first, nn.Linear)  # mlp starts with a linear layer
        encoder[0] = OneHotLinear.replacing(first, tuple((a, b) for a, b in one_hot))
    return encoder


def build_network(spec: dict[str, Any], empty: bool = False) -> DeepCTRL:
    """Data and rule encoders inputs-h-h-latent, decision block 2 latent-h-outputs, with a
    log-softmax head for several classes (a binary classifier outputs the logit), in
    float32 whatever default dtype the program has set. Its initial weights are drawn from
    a fork of PyTorch's generator, which stays as it was (training replaces them); with
    ``empty`` its weights are allocated and not drawn, for a file's weights to fill, so that
    loading changes no state other threads share (the generator, the default dtype)."""
    if empty:
        return network_shapes(spec).to_empty(device="cpu").float()
    with torch.random.fork_rng(devices=[]):
        return _network(spec).float()


def network_shapes(spec: dict[str, Any]) -> DeepCTRL:
    """The network of ``spec`` on PyTorch's meta device: its parameters' names and shapes,
    with nothing allocated and no random number drawn."""
    with torch.device("meta"):
        return _network(spec)


def _network(spec: dict[str, Any]) -> DeepCTRL:
    """The network of ``spec`` (see :func:`build_network`) in the default dtype."""
    n_in, h, z, n_out, head = (spec[k] for k in ("inputs", "hidden", "latent", "outputs", "head"))
    if head not in ("identity", "log_softmax"):
        raise ValueError(f"unknown output head {head!r}")
    one_hot = spec.get("one_hot", [])
    decision: nn.Module = mlp(2 * z, h, n_out)
    if head == "log_softmax":
        decision = nn.Sequential(decision, nn.LogSoftmax(dim=-1))
    return DeepCTRL(_encoder(n_in, h, z, one_hot), _encoder(n_in, h, z, one_hot), decision)
