"""Where this process stands among data-parallel ranks, and the sums they share.

:class:`World` is the one answer for the core (``dc.Objective``) and the engine
(``dc.fit``): its rank and size, its share of a batch's rows, and sums over the ranks. A
single process is a world of one, where every sum is the value itself.

>>> w = World(rank=1, size=2)
>>> w.shard(0, 10), w.is_main
((5, 10), False)
"""

from __future__ import annotations

import torch.distributed as tdist
from torch import Tensor


class World:
    """This process's place among ``size`` ranks (a single process is a world of one)."""

    def __init__(self, rank: int = 0, size: int = 1) -> None:
        self.rank, self.size = rank, size

    @classmethod
    def current(cls) -> World:
        """The process group this process is in, if any (``torchrun`` with the group joined
        by ``dc.fit`` or by your own code), else a world of one."""
        if tdist.is_available() and tdist.is_initialized():
            return cls(tdist.get_rank(), tdist.get_world_size())
        return cls()

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
