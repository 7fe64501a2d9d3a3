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
