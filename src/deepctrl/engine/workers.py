"""Independent training jobs in worker processes: ``dc.fit(..., workers=N)`` trains a share
of the seeds in each of N processes, and ``deepctrl reproduce`` runs its jobs the same way.

Small networks train faster as one single-threaded process per CPU core than as one
process with several threads (on 2 cores about twice as fast for the paper's networks).
The processes are started with ``spawn``, so a job's function and arguments must be
picklable: module-level functions, not lambdas.

>>> seed_parts(range(5), 2)
[(0, 1, 2), (3, 4)]
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import numpy as np
import torch
import torch.multiprocessing

from deepctrl.core.log import collected, info
from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.engine.progress import set_bar_position

T = TypeVar("T")


def default_workers(device: str | torch.device = "cpu") -> int:
    """Processes for independent jobs: one per usable CPU core on a CPU; one on a GPU or
    under ``torchrun`` (there the ranks already share the work)."""
    if str(device) != "cpu" or int(os.environ.get("WORLD_SIZE", "1")) > 1:
        return 1
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def seed_parts(seeds: Sequence[int], parts: int) -> list[tuple[int, ...]]:
    """``seeds`` cut into at most ``parts`` contiguous, nearly equal, non-empty parts.

    >>> seed_parts(range(10), 3)
    [(0, 1, 2, 3), (4, 5, 6), (7, 8, 9)]
    """
    seeds = list(seeds)
    chunks = np.array_split(np.asarray(seeds), max(1, min(parts, len(seeds))))
    return [tuple(int(s) for s in chunk) for chunk in chunks]


_setting = threading.Lock()
_users = 0
"""Blocks of :func:`threads` running now, in every thread of the process."""
_program_threads = 0
"""The program's own setting, taken when the first of them started."""
_enclosing = threading.local()
"""This thread's settings before each of its blocks, innermost last."""


@contextlib.contextmanager
def threads(count: int) -> Iterator[None]:
    """Run torch on ``count`` intra-op threads, then restore the previous setting. The
    setting is the process's: when blocks of several threads overlap (a server's requests),
    the program's own setting comes back when the last of them ends, whatever order they
    end in; a block inside another of the same thread gives the outer one's back."""
    global _users, _program_threads
    stack = _enclosing.__dict__.setdefault("stack", [])
    with _setting:
        if _users == 0:
            _program_threads = torch.get_num_threads()
        _users += 1
        stack.append(torch.get_num_threads())
        torch.set_num_threads(count)
    try:
        yield
    finally:
        with _setting:
            _users -= 1
            outer = stack.pop()
            if _users == 0:
                torch.set_num_threads(_program_threads)
            elif stack:
                torch.set_num_threads(outer)


def single_thread() -> contextlib.AbstractContextManager[None]:
    """Run torch on one intra-op thread, then restore the previous setting.

    Small networks and batches gain nothing from extra threads but synchronisation: on a
    busy 2-core machine they made the pendulum's smoke run 6x slower (221 s against 36 s).
    """
    return threads(1)


def _own_running() -> int:
    """Threads of this process that are running or ready to run (Linux)."""
    count = 0
    for task in os.scandir("/proc/self/task"):
        try:
            with open(f"{task.path}/stat") as f:
                count += f.read().rpartition(")")[2].split()[0] == "R"
        except OSError:  # the thread ended
            continue
    return count


def busy_elsewhere(samples: int = 5) -> int | None:
    """How many threads of other processes are running or ready to run, the least of
    ``samples`` looks 10 ms apart (a busy process is seen in each, a passing one is not);
    None where the system does not say (Linux's ``/proc/loadavg`` does)."""
    seen = []
    for i in range(samples):
        try:
            with open("/proc/loadavg") as f:
                running = int(f.read().split()[3].split("/")[0])
            seen.append(max(0, running - _own_running()))
        except (OSError, ValueError, IndexError):
            return None
        if i + 1 < samples:
            time.sleep(0.01)
    return min(seen)


def free_threads(cores: int | None = None, busy: int | None = None, most: int | None = None) -> int:
    """As many threads as other processes leave cores free, at least one and at most
    ``most`` (torch's setting when not given): ``cores`` less the threads running elsewhere
    (both read from the machine when not given; where they cannot be read, ``most``).

    A thread that shares its core with a busy process stalls the others at every
    synchronisation, so a fit beside busy processes runs several times slower on two
    threads than on one. The load average would also count this process's own recent work,
    and lag a minute behind.

    Examples:
        >>> tuple(free_threads(cores=2, busy=busy, most=8) for busy in (0, 1, 3))
        (2, 1, 1)
        >>> free_threads(cores=16, busy=2, most=8)
        8
    """
    most = most or torch.get_num_threads()
    if busy is None:
        busy = busy_elsewhere()
        if busy is None:
            return most
    cores = cores or os.cpu_count() or 1
    return max(1, min(most, cores - busy))


def _terminal(stream: Any) -> bool:
    """Whether ``stream`` is a terminal, where the workers' bars can each keep a line."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):  # replaced, or closed
        return False


def _join_pool(counter: Any, parent: int, bars: bool) -> None:
    with counter.get_lock():
        position = counter.value
        counter.value += 1
    set_bar_position(position if bars else None)
    warnings.formatwarning = _one_line_warning
    # the parent's pid as it gave it: one that died while this worker started is gone already
    threading.Thread(target=_end_with_parent, args=(parent,), daemon=True).start()


def _end_with_parent(parent: int) -> None:
    """End this worker when the process that started it is gone (killed, or ended by a
    signal it could not handle): an orphan would go on training jobs nobody reads."""
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(1)


def _one_line_warning(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> str:
    r"""A worker's warning as one line, without the file and source line of Python's format
    (several processes' warnings otherwise interleave as blocks).

    >>> _one_line_warning(UserWarning("rho is 1"), UserWarning, "f.py", 3)
    'UserWarning: rho is 1\n'
    """
    return f"{category.__name__}: {' '.join(str(message).split())}\n"


Said = tuple[list[tuple[str, str, str]], list[str]]
"""A job's warnings (category's module and name, message) and notes, in order."""


def _reported(job: Callable[..., T], *args: Any) -> tuple[T, Said]:
    """``job(*args)`` in a worker, with the warnings and notes it gave, for the parent to
    give through its own warning filters and logging."""
    with warnings.catch_warnings(record=True) as seen, collected() as notes:
        warnings.simplefilter("always")
        result = job(*args)
    kinds = [(w.category.__module__, w.category.__qualname__, str(w.message)) for w in seen]
    return result, (kinds, notes)


def _say_again(said: Said, before: set[Any]) -> None:
    """Give a worker's warnings and notes in this process, each text once (``before``: what
    other jobs gave already)."""
    kinds, notes = said
    for module, name, message in kinds:
        if (name, message) not in before:
            before.add((name, message))
            category = getattr(sys.modules.get(module), name, None)
            if not (isinstance(category, type) and issubclass(category, Warning)):
                category = UserWarning  # a class this process has not imported
            warnings.warn(message, category, stacklevel=outside_stacklevel())
    for note in notes:
        if note not in before:
            before.add(note)
            info(note)


def run_jobs(job: Callable[..., T], args: Sequence[tuple], workers: int) -> list[T]:
    """``[job(*a) for a in args]``, in ``workers`` processes when ``workers`` > 1. Each
    draws its progress bars on its own line of a terminal (none when standard error is not
    one: a notebook or a file), and its warnings and notes are given in this process, as
    its jobs end, through this process's warning filters and logging (each text once).

    ``job`` must be a module-level function and ``args`` picklable; put the longest jobs
    first. A job computes what it computes in this process, so the results do not depend on
    ``workers``; only the wall time does.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1 or len(args) <= 1:
        return [job(*a) for a in args]
    ctx = torch.multiprocessing.get_context("spawn")
    counter = ctx.Value("i", 0)
    pool = ProcessPoolExecutor(
        min(workers, len(args)),
        mp_context=ctx,
        initializer=_join_pool,
        initargs=(counter, os.getpid(), _terminal(sys.stderr)),
    )
    try:
        futures = [pool.submit(_reported, job, *a) for a in args]
        results: list[T] = []
        before: set[Any] = set()
        for f in futures:
            result, said = f.result()
            _say_again(said, before)
            results.append(result)
        return results
    except BaseException:  # Ctrl-C, SIGTERM or a job's error: no job starts after it
        _stop(pool)
        raise
    finally:
        pool.shutdown(wait=True)


def _stop(pool: ProcessPoolExecutor) -> None:
    """Cancel the jobs not started and end the workers running the others."""
    # the executor keeps its processes in a private attribute (Python 3.14 adds
    # terminate_workers), which shutdown clears; without it the queued jobs still run
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        process.terminate()
