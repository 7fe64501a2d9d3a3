"""Data-parallel training with ``torch.distributed`` when started by ``torchrun``.

Every rank holds the same stacked model and draws the same random numbers; each takes
its shard of every global batch, gradients are summed over ranks (the loss of each rank is
already divided by the GLOBAL batch size), so one step equals the single-process step.
This is what ``DistributedDataParallel`` does, written for stacked (vmapped) parameters,
which DDP's module wrapper cannot hold. The ranks' arithmetic is
:class:`deepctrl.core.world.World`.
"""

from __future__ import annotations

import atexit
import os
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as tdist

from deepctrl.core.inputs import batch_len, tensors
from deepctrl.core.sources import is_loader
from deepctrl.core.world import World


def join_world(device: torch.device) -> World:
    """Join the process group torchrun describes (WORLD_SIZE > 1), else a world of one."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return World()
    if not tdist.is_initialized():
        tdist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
        atexit.register(_leave_process_group)
    return World.current()


def _data_print(data: Any) -> list[float]:
    """Rows and a checksum (the sum of every value, NaN counted as 0) of tensor data;
    zeros for none or a loader."""
    if data is None or is_loader(data):
        return [0.0, 0.0]
    x, y = data[0], data[1]
    total = sum(torch.nan_to_num(t.double()).sum() for t in [*tensors(x), y])
    return [float(batch_len(x)), float(total)]


def check_ranks_agree(
    world: World, seeds: Sequence[int], batch_size: int, train: Any, val: Any
) -> None:
    """Raise on every rank when the ranks were given different seeds, batch sizes or data.

    Each rank adds its values and their squares over the ranks: the values are equal on
    every rank exactly when size * sum(v^2) = (sum v)^2, which every rank computes alike,
    so all ranks raise together (none is left waiting in a collective).

    Raises:
        ValueError: Naming what differs between the ranks.
    """
    if world.size <= 1:
        return
    names = ["seeds", "seeds", "seeds", "batch_size", "training rows", "training data"]
    names += ["validation rows", "validation data"]
    own = [float(len(seeds)), float(sum(seeds)), float(sum(s * s for s in seeds))]
    own += [float(batch_size), *_data_print(train), *_data_print(val)]
    v = torch.tensor(own, dtype=torch.float64)
    total, squares = world.all_reduce_sum(v), world.all_reduce_sum(v * v)
    spread = (world.size * squares - total * total).abs()
    differ = spread > 1e-9 * (total * total + 1.0)
    if bool(differ.any()):
        what = sorted({names[i] for i in range(len(names)) if bool(differ[i])})
        raise ValueError(
            f"the ranks were given different {', '.join(what)}: under torchrun every rank "
            "passes the same seeds, options and whole data set (deepctrl gives each rank its "
            "share of every batch); do not shard the data yourself"
        )


GLOO_SETTLE_SECONDS = 0.2
"""How long the process sleeps between the last barrier and closing the group."""


def _leave_process_group() -> None:
    """Wait for every rank, then close the group we opened.

    Left open, gloo's threads are torn down by the C++ runtime at interpreter exit, which
    aborts the process ("terminate called without an active exception") when another rank
    is still busy, e.g. writing results.

    Between the barrier and the close the process sleeps :data:`GLOO_SETTLE_SECONDS`. In
    PyTorch releases before mid-2025 (2.3.1 hangs here; later ones release the GIL there)
    closing a gloo group holds Python's lock while it joins the group's threads, and a
    thread still freeing the barrier's record of earlier all-reduces needs that lock to
    free their tensors: the two wait for each other forever. Sleeping lets the threads
    take the lock and finish first.
    """
    if tdist.is_initialized():
        tdist.barrier()
        time.sleep(GLOO_SETTLE_SECONDS)
        tdist.destroy_process_group()
