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
import sys
import time
from collections.abc import Sequence
from typing import Any

import torch
import torch.distributed as tdist

from deepctrl.core.inputs import batch_len, tensors
from deepctrl.core.sources import is_loader
from deepctrl.core.world import World
from deepctrl.engine.options import LR_SCHEDULES, Options


def join_world(device: torch.device) -> World:
    """Join the process group torchrun describes (WORLD_SIZE > 1), else a world of one."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return World()
    if not tdist.is_initialized():
        tdist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
        atexit.register(_leave_process_group)
    return World.current()


def _data_print(data: Any) -> list[float]:
    """Rows, a checksum (the sum of every value, NaN counted as 0) and an order print (each
    row's sum weighted by its position) of tensor data; zeros for none or a loader."""
    if data is None or is_loader(data):
        return [0.0, 0.0, 0.0]
    x, y = data[0], data[1]
    n = batch_len(x)
    per_row = torch.stack(
        [torch.nan_to_num(t.double()).reshape(n, -1).sum(dim=1) for t in [*tensors(x), y]]
    ).sum(dim=0)
    position = torch.arange(1, n + 1, dtype=torch.float64, device=per_row.device) / n
    return [float(n), float(per_row.sum()), float((per_row * position).sum())]


def _sharded_loader(data: Any) -> bool:
    sampler = getattr(data, "sampler", None)
    return isinstance(sampler, torch.utils.data.DistributedSampler)


def check_ranks_agree(
    world: World,
    seeds: Sequence[int],
    options: Options,
    train: Any,
    val: Any,
    device: torch.device,
) -> None:
    """Raise on every rank when the ranks were given different seeds (or seeds in another
    order), options, or data (or rows in another order).

    Each rank adds its values and their squares over the ranks: the values are equal on
    every rank exactly when size * sum(v^2) = (sum v)^2, which every rank computes alike,
    so all ranks raise together (none is left waiting in a collective). DataLoaders are not
    compared (their batches are drawn as training goes); one with a DistributedSampler is
    refused, since deepctrl shards every batch itself.

    Raises:
        ValueError: Naming what differs between the ranks.
    """
    if world.size <= 1:
        return
    for name, data in (("train", train), ("val", val)):
        if _sharded_loader(data):
            raise ValueError(
                f"{name} is a DataLoader with a DistributedSampler: deepctrl gives each rank "
                "its share of every batch itself, so every rank passes the same DataLoader "
                "without one (a seeded generator keeps their shuffles alike)"
            )
    order = [float(k + 1) for k in range(len(seeds))]
    named: list[tuple[str, float]] = [
        ("seeds", float(len(seeds))),
        ("seeds", float(sum(seeds))),
        ("seeds", float(sum(s * s for s in seeds))),
        ("seeds", float(sum(s * k for s, k in zip(seeds, order, strict=True)))),
    ]
    for option in ("batch_size", "lr", "max_epochs", "patience", "val_every", "chunk_batches"):
        named.append((option, float(getattr(options, option))))
    for option in ("shuffle", "exact_sums", "compile", "reinit"):
        named.append((option, float(bool(getattr(options, option)))))
    named.append(("lr_schedule", float(LR_SCHEDULES.index(options.lr_schedule))))
    named.append(("input_noise", float(options.input_noise)))
    for label, data in (("training", train), ("validation", val)):
        rows, values, ordered = _data_print(data)
        named += [
            (f"{label} rows", rows),
            (f"{label} data", values),
            (f"{label} rows' order", ordered),
        ]
    v = torch.tensor([value for _, value in named], dtype=torch.float64, device=device)
    sums, squares = world.all_reduce_sum(v), world.all_reduce_sum(v * v)
    spread = (world.size * squares - sums * sums).abs()
    differ = spread > 1e-9 * (sums * sums + 1.0)
    if bool(differ.any()):
        what = sorted({named[i][0] for i in range(len(named)) if bool(differ[i])})
        raise ValueError(
            f"the ranks were given different {', '.join(what)}: under torchrun every rank "
            "passes the same seeds, options and whole data set (deepctrl gives each rank its "
            "share of every batch); do not shard the data yourself"
        )
    if options.batch_size < world.size:
        raise ValueError(
            f"batch_size {options.batch_size} is below the {world.size} ranks: under torchrun "
            "every rank takes a share of every batch, so a batch needs a row per rank"
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
    if not tdist.is_initialized():
        return
    if _failing():
        # another rank may wait in a collective this one never joins: no barrier, and no
        # close (which can wait on gloo's threads); the process ends with its error, and
        # torchrun then stops the other ranks
        return
    tdist.barrier()
    time.sleep(GLOO_SETTLE_SECONDS)
    tdist.destroy_process_group()


def _failing() -> bool:
    """Whether the interpreter is ending on an exception nobody caught (Python keeps it in
    ``sys.last_value`` for the exit)."""
    return getattr(sys, "last_value", None) is not None
