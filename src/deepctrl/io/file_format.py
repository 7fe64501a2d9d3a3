"""Atomic file writes and the checks of a model file's header and of a table model's
config, without importing torch.

The command line checks a model file here first, so that a wrong file (a pickle, a foreign
or corrupt file, a table without the model's columns) is refused in a fraction of a second
instead of after loading PyTorch. :mod:`deepctrl.io.checkpoint` reads the weights after these
checks, and :mod:`deepctrl.tabular.model_file` builds the estimator.

>>> import os, tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "m.deepctrl")
>>> _ = write_atomic(path, b"\\x80\\x04 a pickle")
>>> try:
...     read_model_file(path)
... except ValueError as e:
...     print(str(e).split(": ", 1)[1])
it looks like a pickle or torch.save file, which deepctrl never loads
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
import signal
import stat
import struct
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from deepctrl._version import __version__
from deepctrl.core.log import is_worker

FORMAT = "deepctrl"
FORMAT_VERSION = 1
TABLE_MODELS = ("DeepCTRLRegressor", "DeepCTRLClassifier")
TABLE_MODEL_FORMAT = 1
LOG_LINK_FORMAT = 2
"""The format of a table model whose predictions are exp of the networks' output (a
regressor of the Poisson loss): laid out as format 1, numbered apart so that a deepctrl
without the log link refuses the file instead of predicting log-rates as if they were
targets."""
_MAX_HEADER = 100 * 1024 * 1024


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Under ``torchrun`` only rank 0 writes (every rank holds the same result), so that a
    data-parallel run leaves one copy of each file; the other ranks get the path back with
    nothing written, at once (no barrier: a save called on rank 0 alone must not wait for
    the others). A symbolic link is followed (the file it points to is replaced); a device,
    a pipe and a read-only file are refused, as is a folder. ``~`` is expanded.
    """
    given = path = Path(path).expanduser()
    if is_worker():
        return path
    if path.is_symlink():
        path = path.resolve()  # write where the link points; the link stays
    if path.resolve().parts[1:2] in (("dev",), ("proc",)):
        raise ValueError(f"cannot write {given}: it is a device or a stream, not a file")
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: folder {parent} does not exist")
    if path.is_dir():
        raise ValueError(f"cannot write {path}: it is a folder; give a file name")
    if path.exists() and not path.is_file():
        raise ValueError(f"cannot write {path}: it is not a regular file (a device or a pipe)")
    if path.is_file() and not path.stat().st_mode & stat.S_IWUSR:
        raise ValueError(f"cannot write {path}: the file is read-only")
    try:
        fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:
        raise ValueError(f"cannot write {path}: {exc.strerror}") from None
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        staged = _staged.get()
        if staged is None:
            os.replace(tmp, path)
        else:
            staged.append((tmp, path))  # renamed with the others at the block's end
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


_staged: contextvars.ContextVar[list[tuple[str, Path]] | None] = contextvars.ContextVar(
    "deepctrl_staged_writes", default=None
)
"""The files written in a :func:`written_together` block: each temporary file and its name."""


@contextlib.contextmanager
def written_together() -> Iterator[None]:
    """The files :func:`write_atomic` writes in the block replace their old versions
    together when it ends: an error or an interrupt in the block leaves every old file as
    it was, so a folder never holds a new report beside an old figure. SIGINT and SIGTERM
    are held back during the renames (an interrupt arrives once they are all done). A block
    inside another leaves the renames to the outer one.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> try:
    ...     with written_together():
    ...         _ = write_atomic(folder / "report.md", b"new")
    ...         raise KeyboardInterrupt
    ... except KeyboardInterrupt:
    ...     pass
    >>> sorted(p.name for p in folder.iterdir())
    []
    """
    if _staged.get() is not None:
        yield
        return
    staged: list[tuple[str, Path]] = []
    token = _staged.set(staged)
    try:
        yield
        with _signals_held():
            for tmp, path in staged:
                os.replace(tmp, path)
    finally:
        _staged.reset(token)
        for tmp, _ in staged:
            Path(tmp).unlink(missing_ok=True)  # those not renamed: the block failed


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGINT and SIGTERM held back while the block runs, then given to the handlers they
    had (in the main thread, where Python handles signals). A signal is recorded rather than
    masked: a process-wide signal reaches whichever thread does not mask it, and Python
    then runs its handler in the main thread all the same."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    before = {}
    for number in (signal.SIGINT, signal.SIGTERM):
        handler = signal.getsignal(number)
        if handler is not None:  # None: set outside Python, which could not be restored
            before[number] = signal.signal(number, lambda n, _: caught.append(n))
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
        if caught:
            signal.raise_signal(caught[0])  # to the handler restored: Ctrl-C's, say


def model_file_metadata() -> dict[str, str]:
    """The safetensors metadata every deepctrl model file carries (besides its config)."""
    return {
        "format": FORMAT,
        "format_version": str(FORMAT_VERSION),
        "deepctrl_version": __version__,
    }


WEIGHTS_DIGEST = "weights_sha256"
"""The metadata key of the SHA-256 of a model file's weight bytes (files written before it
existed have none and are read unchecked)."""


CONFIG_DIGEST = "config_sha256"
"""The metadata key of the SHA-256 of a model file's config text (files written before it
existed have none and are read unchecked)."""


def text_digest(text: str) -> str:
    """The SHA-256 (hex) of ``text`` in UTF-8."""
    return hashlib.sha256(text.encode()).hexdigest()


def weights_digest(data: bytes) -> str:
    """The SHA-256 (hex) of the weight bytes of a safetensors file's contents ``data``: all
    that follows its header."""
    (n,) = struct.unpack("<Q", data[:8])
    return hashlib.sha256(memoryview(data)[8 + n :]).hexdigest()


def canonical(data: bytes) -> bytes:
    """A safetensors file's contents ``data`` with its header's keys in sorted order, so
    that the same weights and metadata always give the same bytes (safetensors writes the
    metadata in an order that changes from one save to the next).

    >>> head = json.dumps({"b": 1, "a": {"d": 2, "c": 3}}).encode()
    >>> out = canonical(struct.pack("<Q", len(head)) + head + b"weights")
    >>> out[8:].decode()
    '{"a":{"c":3,"d":2},"b":1}       weights'
    """
    (n,) = struct.unpack("<Q", data[:8])
    header = json.dumps(
        json.loads(data[8 : 8 + n]), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    ).encode()
    header += b" " * (-len(header) % 8)  # the weights start at a multiple of 8, as before
    return struct.pack("<Q", len(header)) + header + data[8 + n :]


def _describe_foreign(head: bytes) -> str:
    if head[:1] == b"\x80" or head[:2] == b"PK":
        return "it looks like a pickle or torch.save file, which deepctrl never loads"
    return "it is not a safetensors file"


def not_a_file(path: Path, what: str) -> str:
    """Why ``path``, which is not a regular file, cannot be read as ``what``.

    >>> not_a_file(Path("/dev/null"), "model file")
    'model file /dev/null is not a regular file (a pipe, a device or a socket)'
    """
    if path.is_symlink() and not path.exists():
        return f"{what} {path} is a symbolic link to nothing (or a loop of links)"
    if path.exists():
        return f"{what} {path} is not a regular file (a pipe, a device or a socket)"
    return f"{what} {path} does not exist"


def read_model_file(path: str | os.PathLike[str]) -> tuple[bytes, dict[str, Any]]:
    """The bytes and the safetensors metadata of a deepctrl model file of this format
    version; a ``ValueError`` naming the problem for anything else."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"model file {path} is a folder; give the model file in it")
    if not path.is_file():
        raise ValueError(not_a_file(path, "model file"))
    size = path.stat().st_size
    with path.open("rb") as f:  # the header is checked before the weights are read
        head = f.read(9)
        if len(head) < 8:
            raise ValueError(f"{path} is not a deepctrl model file: {_describe_foreign(head)}")
        (n,) = struct.unpack("<Q", head[:8])
        if size - 8 < n <= _MAX_HEADER and head[8:9] == b"{":  # a safetensors header, cut
            raise ValueError(
                f"{path} is damaged: it ends inside its header ({size} bytes; the header "
                f"alone takes {n + 8}); copy the file again"
            )
        if not 0 < n <= min(_MAX_HEADER, size - 8):
            raise ValueError(f"{path} is not a deepctrl model file: {_describe_foreign(head)}")
        try:
            header = json.loads(head[8:] + f.read(n - 1))  # n - 1 >= 0: no read to the end
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
            raise ValueError(
                f"{path} is not a deepctrl model file: its header is corrupt"
            ) from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is a safetensors file but not a deepctrl model file")
    if not all(isinstance(v, str) for v in meta.values()):  # safetensors writes text only
        raise ValueError(f"{path} is not a deepctrl model file: its metadata is not all text")
    if meta.get("format_version") != str(FORMAT_VERSION):
        raise ValueError(
            f"{path} was written by deepctrl {meta.get('deepctrl_version')} in model-file format"
            f" {meta.get('format_version')}; this deepctrl ({__version__}) reads format"
            f" {FORMAT_VERSION}"
        )
    data = path.read_bytes()
    if WEIGHTS_DIGEST in meta and weights_digest(data) != meta[WEIGHTS_DIGEST]:
        raise ValueError(
            f"{path} is damaged: its weights differ from the checksum written with them"
        )
    if CONFIG_DIGEST in meta and text_digest(str(meta.get("config"))) != meta[CONFIG_DIGEST]:
        raise ValueError(
            f"{path} is damaged: its settings (the config in its header) differ from the "
            "checksum written with them"
        )
    return data, meta


def model_config(meta: dict[str, Any], path: str | os.PathLike[str]) -> dict[str, Any]:
    """The JSON config stored in a model file's metadata (from :func:`read_model_file`)."""
    return _json(meta.get("config", "{}"), path, "its config")


def _json(text: str | bytes, path: str | os.PathLike[str], what: str) -> Any:
    """``text`` read as JSON, with one line naming ``what`` when it is not.

    >>> _json("[1, 2", "m.deepctrl", "its config")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: m.deepctrl is corrupt: its config is not JSON (Expecting ...)
    """
    try:
        return json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is corrupt: {what} is not JSON ({exc})") from None
    except RecursionError:
        raise ValueError(f"{path} is corrupt: {what} is nested too deeply") from None


def check_table_model(
    config: Any, path: str | os.PathLike[str], version: str, kind: str | None = None
) -> str:
    """The estimator class named by a model file's ``config``, after checking that it is a
    table model (of class ``kind``, when given) in the format this deepctrl reads."""
    name = config.get("estimator") if isinstance(config, dict) else None
    if name not in TABLE_MODELS:
        raise ValueError(
            f"{path} is a deepctrl model file but not a table model (written by "
            "'deepctrl fit' or an estimator's save)"
        )
    if kind is not None and name != kind:
        raise ValueError(f"{path} holds a {name}, not a {kind}")
    if config.get("estimator_format") not in (TABLE_MODEL_FORMAT, LOG_LINK_FORMAT):
        raise ValueError(
            f"{path} holds a table model in format {config.get('estimator_format')}"
            f" (written by deepctrl {version}); this deepctrl reads format "
            f"{TABLE_MODEL_FORMAT} (and {LOG_LINK_FORMAT}, for models of the Poisson loss)"
        )
    return name


def damaged_table_model(path: str | os.PathLike[str], problem: Exception | str) -> ValueError:
    """The error for a table model whose config or weights do not hold together."""
    lines = [line.strip() for line in str(problem).strip().splitlines() if line.strip()]
    # PyTorch's load_state_dict says what differs on its second line
    detail = lines[1] if len(lines) > 1 and lines[0].endswith(":") else lines[0] if lines else ""
    return ValueError(f"{path} is a damaged table model: {detail or type(problem).__name__}")


class TableModelColumns(NamedTuple):
    """What a table model file says of the columns it reads."""

    inputs: list[str]
    targets: list[str]
    categorical: list[str]
    dates: list[str]
    ranges: dict[str, tuple[float, float]]
    """Each number column's lowest and highest training value."""
    dots: dict[str, str]
    """How the semicolon file a model was fitted on wrote each number column's dots
    ("thousands" or "decimal"); none for a model fitted otherwise, or by an older deepctrl."""
    categories: dict[str, list[Any]]
    """Each category column's training categories (None for the missing values)."""


def table_model_columns(path: str | os.PathLike[str]) -> TableModelColumns:
    """The columns a table model file reads, the names of its targets, the columns it
    reads as categories (with their training categories) and as dates, its number columns'
    training ranges and how its training file wrote their dots, from the checked header
    alone (no weights, no PyTorch)."""
    _, meta = read_model_file(path)
    config = model_config(meta, path)
    check_table_model(config, path, meta.get("deepctrl_version", "?"))
    try:
        columns = config["preprocessing"]["columns"]
        inputs = [c["name"] for c in columns]
        categorical = [c["name"] for c in columns if c.get("kind") == "categorical"]
        dates = [c["name"] for c in columns if c.get("kind") == "date"]
        fitted = config["fitted"]
        targets = (
            list(fitted["output_names_"]) if "output_names_" in fitted else [fitted["target_name_"]]
        )
        ranges = {
            c["name"]: (float(c["low"]), float(c["high"]))
            for c in columns
            if c.get("kind") == "numeric" and "low" in c and "high" in c
        }
        dots = {str(k): str(v) for k, v in config["preprocessing"].get("dots", {}).items()}
        categories = {
            c["name"]: list(c.get("categories", [])) for c in columns if c["name"] in categorical
        }
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise damaged_table_model(path, exc) from None
    return TableModelColumns(inputs, targets, categorical, dates, ranges, dots, categories)
