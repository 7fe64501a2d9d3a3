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

import torch
import torch.distributed as tdist

from deepctrl.core.world import World


def join_world(device: torch.device) -> World:
    """Join the process group torchrun describes (WORLD_SIZE > 1), else a world of one."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return World()
    if not tdist.is_initialized():
        tdist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
        atexit.register(_leave_process_group)
    return World.current()


def _leave_process_group() -> None:
    """Wait for every rank, then close the group we opened.

    Left open, gloo's threads are torn down by the C++ runtime at interpreter exit, which
    aborts the process ("terminate called without an active exception") when another rank
    is still busy, e.g. writing results.
    """
    if tdist.is_initialized():
        tdist.barrier()
        tdist.destroy_process_group()
