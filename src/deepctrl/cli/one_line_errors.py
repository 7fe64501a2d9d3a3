"""How the commands report problems: each warning printed once, as one line, when it is
raised, and each problem with the user's input (a ValueError, a file error, running out of
memory) as a one-line ValueError, which the command line prints without a traceback.
"""

from __future__ import annotations

import contextlib
import functools
import re
import sys
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from tqdm import tqdm

F = TypeVar("F", bound=Callable[..., int])


def one_line_errors(command: F) -> F:
    """Run ``command`` printing each warning once, as a single line, when it is raised (so
    a warning about the table comes before the training it concerns), and turning problems
    into one-line ValueErrors."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> int:
        with one_line_warnings():
            try:
                return command(*args, **kwargs)
            except BrokenPipeError:  # the reader stopped: no error (the caller exits quietly)
                raise
            except (ValueError, OSError) as exc:
                raise ValueError(_one_line(exc)) from None
            except (MemoryError, RuntimeError) as exc:
                # numpy's MemoryError; torch's RuntimeError (OutOfMemoryError on a GPU)
                if not (isinstance(exc, MemoryError) or _out_of_memory(exc)):
                    raise
                raise ValueError(
                    f"out of memory ({_one_line(exc)}): a text column with many values takes "
                    "one input per value on every row; leave such a column out "
                    "(--id-column COL) or use fewer rows"
                ) from None

    return run  # type: ignore[return-value]


def _one_line(exc: Exception) -> str:
    """``exc`` as one line; a file error as the file and why, without its errno.

    >>> _one_line(PermissionError(13, "Permission denied", "m.deepctrl"))
    'm.deepctrl: Permission denied'
    """
    if isinstance(exc, OSError) and exc.filename and exc.strerror:
        return f"{exc.filename}: {exc.strerror}"
    return " ".join(str(exc).split()) or type(exc).__name__


def _out_of_memory(exc: RuntimeError) -> bool:
    """Whether torch ran out of memory: ``OutOfMemoryError`` on a GPU, a RuntimeError
    saying it cannot allocate on a CPU.

    >>> _out_of_memory(RuntimeError("[enforce fail] DefaultCPUAllocator: can't allocate memory"))
    True
    """
    return type(exc).__name__ == "OutOfMemoryError" or "can't allocate memory" in str(exc)


@contextlib.contextmanager
def one_line_warnings() -> Iterator[None]:
    """Within the block, each warning prints once, when raised, as one line
    ``deepctrl: warning: ...`` above any progress bar (no file name, no source line); one
    that differs from an earlier one only in its numbers (the same warning for another fold
    of a rule test, say) is not printed again. Deprecation warnings, meant for developers,
    are ignored."""
    shown_before: set[str] = set()

    def show(message: Warning | str, category: type[Warning], *_: Any, **__: Any) -> None:
        text = " ".join(str(message).split())
        key = re.sub(r"\d[\d.,]*", "#", text)
        if key in shown_before:
            return
        shown_before.add(key)
        tqdm.write(f"deepctrl: warning: {text}", file=sys.stderr)  # above a progress bar

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        # not even recorded: a library that records warnings and logs them (matplotlib's
        # style files) would print its dependencies' deprecations
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", PendingDeprecationWarning)
        warnings.showwarning = show
        yield
