"""Model files: safetensors weights with a JSON config in the metadata. Never pickle.

>>> import tempfile, os, torch, deepctrl as dc
>>> model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
>>> path = os.path.join(tempfile.mkdtemp(), "m.safetensors")
>>> _ = dc.save(model, path, {"note": "demo"})
>>> dc.read_checkpoint(path).config["note"]
'demo'
>>> x = torch.randn(3, 2)
>>> bool(torch.equal(dc.load(path)(x, 0.5), model(x, 0.5)))
True
"""

from __future__ import annotations

import json
import os
import struct
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from torch import Tensor, nn

from deepctrl._version import __version__
from deepctrl.model import DeepCTRL

FORMAT = "deepctrl"
FORMAT_VERSION = 1
_MAX_HEADER = 100 * 1024 * 1024


class Checkpoint(NamedTuple):
    state_dict: dict[str, Tensor]
    config: dict[str, Any]
    version: str


def write_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``path`` through a temporary file and a rename.

    Under ``torchrun`` only rank 0 writes (every rank holds the same result), so that a
    data-parallel run leaves one copy of each file.
    """
    path = Path(path)
    if int(os.environ.get("RANK", "0")) > 0:
        return path
    parent = path.parent if str(path.parent) else Path(".")
    if not parent.is_dir():
        raise ValueError(f"cannot write {path}: folder {parent} does not exist")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp makes 0600; give the usual file mode
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def save(model: nn.Module, path: str | os.PathLike[str],
         config: dict[str, Any] | None = None) -> Path:
    """Write the weights of ``model`` and ``config`` (JSON-serialisable) to ``path``.

    A :class:`DeepCTRL` built from :func:`deepctrl.mlp` parts also stores its architecture,
    so :func:`load` can rebuild it without code.
    """
    config = dict(config or {})
    if isinstance(model, DeepCTRL) and "architecture" not in config:
        spec = model.spec()
        if spec is not None:
            config["architecture"] = spec
    try:
        config_json = json.dumps(config)
    except TypeError as exc:
        raise ValueError(f"checkpoint config is not JSON-serialisable: {exc}") from None
    state = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    meta = {"format": FORMAT, "format_version": str(FORMAT_VERSION),
            "deepctrl_version": __version__, "config": config_json}
    return write_atomic(path, st_save(state, metadata=meta))


def _describe_foreign(head: bytes) -> str:
    if head[:1] == b"\x80" or head[:2] == b"PK":
        return "it looks like a pickle or torch.save file, which deepctrl never loads"
    return "it is not a safetensors file"


def read_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Weights, config and writer version of a deepctrl model file, with clear errors."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"model file {path} does not exist")
    data = path.read_bytes()
    if len(data) < 8:
        raise ValueError(f"{path} is not a deepctrl model file: {_describe_foreign(data)}")
    (n,) = struct.unpack("<Q", data[:8])
    if n > min(_MAX_HEADER, len(data) - 8):
        raise ValueError(f"{path} is not a deepctrl model file: {_describe_foreign(data)}")
    try:
        header = json.loads(data[8:8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"{path} is not a deepctrl model file: its header is corrupt") from None
    meta = header.get("__metadata__") if isinstance(header, dict) else None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise ValueError(f"{path} is a safetensors file but not a deepctrl model file")
    if meta.get("format_version") != str(FORMAT_VERSION):
        raise ValueError(
            f"{path} was written by deepctrl {meta.get('deepctrl_version')} in model-file format"
            f" {meta.get('format_version')}; this deepctrl ({__version__}) reads format"
            f" {FORMAT_VERSION}"
        )
    try:
        state = st_load(data)
        config = json.loads(meta.get("config", "{}"))
    except Exception as exc:
        raise ValueError(f"{path} is corrupt: {exc}") from None
    return Checkpoint(state, config, meta.get("deepctrl_version", "?"))


def load(path: str | os.PathLike[str], model: nn.Module | None = None) -> nn.Module:
    """Load weights into ``model`` (same architecture), or rebuild a stored MLP DeepCTRL."""
    ckpt = read_checkpoint(path)
    if model is None:
        arch = ckpt.config.get("architecture")
        if arch is None:
            raise ValueError(f"{path} stores no architecture: pass the model to load into")
        model = DeepCTRL.from_spec(arch)
    try:
        model.load_state_dict(ckpt.state_dict)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()
        raise ValueError(f"{path} does not fit this model: {first[1] if len(first) > 1 else exc}"
                         ) from None
    return model.eval()


def load_config(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Only the JSON config of a model file."""
    return read_checkpoint(path).config


__all__ = ["Checkpoint", "load", "load_config", "read_checkpoint", "save", "write_atomic"]
