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
import hashlib
import os
import re
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
import torch.distributed as tdist
from torch import Tensor

from deepctrl.core.sources import is_loader
from deepctrl.core.world import World
from deepctrl.engine.options import Options


def join_world(device: torch.device) -> World:
    """Join the process group torchrun describes (WORLD_SIZE > 1), else a world of one."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return World()
    if not tdist.is_initialized():
        tdist.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
        atexit.register(_leave_process_group)
    return World.current()


def _print(value: Any) -> list[float]:
    """Four 16-bit pieces of a 64-bit BLAKE2 digest of ``value``: bytes as they are, a
    tensor by its dtype, shape and bytes, a list or tuple piece by piece, anything else by
    its repr (without memory addresses, which differ between processes). Pieces of 16 bits
    keep every sum and square over the ranks exact in float64, so equal digests compare
    equal to the last bit and unequal ones never do.

    >>> _print([1, 2]) == _print([1, 2]), _print(20240101) == _print(20240102)
    (True, False)
    """
    digest = hashlib.blake2b(digest_size=8)

    def feed(v: Any) -> None:
        if isinstance(v, torch.Tensor):
            t = v.detach().cpu().contiguous()
            digest.update(f"{t.dtype}{tuple(t.shape)}".encode())
            digest.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(v, np.ndarray):
            feed(torch.from_numpy(np.ascontiguousarray(v)))
        elif isinstance(v, dict):
            for key in sorted(v, key=str):
                digest.update(str(key).encode())
                feed(v[key])
        elif isinstance(v, list | tuple):
            digest.update(f"{type(v).__name__}{len(v)}".encode())
            for item in v:
                feed(item)
        else:
            digest.update(re.sub(r" at 0x[0-9a-fA-F]+", "", repr(v)).encode())

    feed(value)
    whole = int.from_bytes(digest.digest(), "little")
    return [float((whole >> shift) & 0xFFFF) for shift in (0, 16, 32, 48)]


def _task_loss_name(task_loss: Any) -> str:
    """A task loss by name: a string as it is, a function by its module and name."""
    if isinstance(task_loss, str):
        return task_loss
    return f"{getattr(task_loss, '__module__', '')}.{getattr(task_loss, '__qualname__', '?')}"


def _sharded_loader(data: Any) -> bool:
    sampler = getattr(data, "sampler", None)
    return isinstance(sampler, torch.utils.data.DistributedSampler)


OPTIONS_COMPARED = (
    "batch_size",
    "lr",
    "max_epochs",
    "patience",
    "val_every",
    "chunk_batches",
    "shuffle",
    "exact_sums",
    "compile",
    "reinit",
    "lr_schedule",
    "input_noise",
    "folds",
)
"""The options of a fit that every rank must share (with the task loss, rule and method)."""


def check_ranks_agree(
    world: World,
    seeds: Sequence[int],
    options: Options,
    train: tuple[Any, Tensor | None],
    val: tuple[Any, Tensor | None],
    device: torch.device,
    rule: Any = None,
    method: Any = None,
) -> None:
    """Raise on every rank when the ranks were given different seeds (or seeds in another
    order), options, task loss, rule, method, or data (values, sample weights, or rows in
    another order). `train` and `val` are each the data and its sample weights (or None).

    Each rank digests what it was given (:func:`_print`), and the ranks add the digests'
    pieces and their squares: the pieces are equal on every rank exactly when size *
    sum(v^2) = (sum v)^2, which every rank computes alike, so all ranks raise together
    (none is left waiting in a collective). DataLoaders are not compared (their batches are
    drawn as training goes); one with a DistributedSampler is refused, since deepctrl
    shards every batch itself.

    Raises:
        ValueError: Naming what differs between the ranks.
    """
    if world.size <= 1:
        return
    (train, train_weights), (val, val_weights) = train, val
    for name, data in (("train", train), ("val", val)):
        if _sharded_loader(data):
            raise ValueError(
                f"{name} is a DataLoader with a DistributedSampler: deepctrl gives each rank "
                "its share of every batch itself, so every rank passes the same DataLoader "
                "without one (a seeded generator keeps their shuffles alike)"
            )
    given: list[tuple[str, Any]] = [("seeds", [int(s) for s in seeds])]
    for option in OPTIONS_COMPARED:
        given.append((option, getattr(options, option)))
    given.append(("task_loss", _task_loss_name(options.task_loss)))
    given += [("rule", rule), ("method", method)]
    for label, data, weights in (
        ("training", train, train_weights),
        ("validation", val, val_weights),
    ):
        tensor_data = data is not None and not is_loader(data)
        given.append((f"{label} data", list(data) if tensor_data else None))
        given.append((f"{label} weights", weights))
    named = [(name, piece) for name, value in given for piece in _print(value)]
    v = torch.tensor([piece for _, piece in named], dtype=torch.float64, device=device)
    sums, squares = world.all_reduce_sum(v), world.all_reduce_sum(v * v)
    differ = world.size * squares - sums * sums != 0  # exact: the pieces are 16-bit
    if bool(differ.any()):
        what = sorted({named[i][0] for i in range(len(named)) if bool(differ[i])})
        unseeded = (
            " (an estimator with random_state=None draws other seeds on every rank: give it "
            "a random_state)"
            if "seeds" in what
            else ""
        )
        raise ValueError(
            f"the ranks were given different {', '.join(what)}: under torchrun every rank "
            "passes the same seeds, options and whole data set (deepctrl gives each rank its "
            f"share of every batch); do not shard the data yourself{unseeded}"
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
