"""Data-parallel training with ``torch.distributed`` when started by ``torchrun``.

Every rank holds the same stacked model and draws the same random numbers; each takes
its shard of every global batch, gradients are summed over ranks (the loss of each rank is
already divided by the GLOBAL batch size), so one step equals the single-process step.
This is what ``DistributedDataParallel`` does, written for stacked (vmapped) parameters,
which DDP's module wrapper cannot hold.
"""

from __future__ import annotations

import atexit
import os

import torch
import torch.distributed as tdist
from torch import Tensor


class World:
    """This process's place among ``size`` ranks (a single process is a world of one)."""

    def __init__(self, rank: int = 0, size: int = 1) -> None:
        self.rank, self.size = rank, size

    @classmethod
    def from_env(cls, device: torch.device) -> World:
        """Join the process group torchrun describes (WORLD_SIZE > 1), else a world of one."""
        size = int(os.environ.get("WORLD_SIZE", "1"))
        if size <= 1:
            return cls()
        if not tdist.is_initialized():
            backend = "nccl" if device.type == "cuda" else "gloo"
            tdist.init_process_group(backend=backend)
            atexit.register(_leave_process_group)
        return cls(tdist.get_rank(), tdist.get_world_size())

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    def shard(self, start: int, stop: int) -> tuple[int, int]:
        """This rank's part [lo, hi) of the rows [start, stop)."""
        n = stop - start
        return start + n * self.rank // self.size, start + n * (self.rank + 1) // self.size

    def all_reduce_sum(self, t: Tensor) -> Tensor:
        if self.size > 1:
            t = t.clone()
            tdist.all_reduce(t, op=tdist.ReduceOp.SUM)
        return t

    def all_reduce_(self, flat: Tensor) -> None:
        """Sum a flat buffer (the gradients) over ranks, in place."""
        if self.size > 1:
            tdist.all_reduce(flat, op=tdist.ReduceOp.SUM)

    def broadcast_(self, flat: Tensor) -> None:
        """Give every rank rank 0's copy of a flat buffer (the initial weights), in place."""
        if self.size > 1:
            tdist.broadcast(flat, src=0)



def _leave_process_group() -> None:
    """Wait for every rank, then close the group we opened.

    Left open, gloo's threads are torn down by the C++ runtime at interpreter exit, which
    aborts the process ("terminate called without an active exception") when another rank
    is still busy, e.g. writing results.
    """
    if tdist.is_initialized():
        tdist.barrier()
        tdist.destroy_process_group()
