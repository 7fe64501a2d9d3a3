"""Model files: safetensors weights with a JSON config in the metadata. Never pickle.

Examples:
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
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypeVar, overload

import numpy as np
import torch
from safetensors.torch import load as st_load
from safetensors.torch import save as st_save
from torch import Tensor, nn

from deepctrl.core.calls import unwrap
from deepctrl.core.checks import module
from deepctrl.core.layers import MLP
from deepctrl.core.model import DeepCTRL
from deepctrl.io.file_format import (
    CONFIG_DIGEST,
    TABLE_MODELS,
    WEIGHTS_DIGEST,
    canonical,
    model_config,
    model_file_metadata,
    read_model_file,
    text_digest,
    weights_digest,
    write_atomic,
)


class Checkpoint(NamedTuple):
    """What a model file holds: weights, config and the deepctrl version that wrote it.

    Attributes:
        state_dict: The weights, as `model.state_dict()` gave them (on the CPU), by name in
            sorted order ([load][deepctrl.io.checkpoint.load] matches them by name).
        config: The JSON config saved with them (with `"architecture"` for a model that
            [load][deepctrl.io.checkpoint.load] can rebuild).
        version: The deepctrl version that wrote the file (`"?"` if unknown).
    """

    state_dict: dict[str, Tensor]
    config: dict[str, Any]
    version: str

    def __repr__(self) -> str:
        """A summary: the number of tensors and of their values, the config (its keys when
        it is longer than a line) and the version, e.g. ``Checkpoint(state_dict=<6 tensors,
        57 values>, config={'note': 'demo'}, version='0.2.0')``."""
        values = sum(t.numel() for t in self.state_dict.values())
        config = repr(self.config)
        if len(config) > 60:
            config = f"<keys {', '.join(repr(k) for k in self.config)}>"
        return (
            f"Checkpoint(state_dict=<{len(self.state_dict)} tensors, {values:,} values>, "
            f"config={config}, version={self.version!r})"
        )


def _check_reserved(config: dict[str, Any]) -> None:
    """Refuse the config keys deepctrl's own files use: `architecture` (how `load` rebuilds a
    model) and `estimator` (what marks a table model file), unless they are the estimators'.

    >>> _check_reserved({"estimator": "ridge"})  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: config key 'estimator' is reserved for deepctrl's table model files; ...
    """
    if "architecture" in config:
        raise ValueError(
            "config key 'architecture' is reserved: save stores the model's own; name it otherwise"
        )
    if "estimator" in config and config.get("estimator") not in TABLE_MODELS:
        raise ValueError(
            "config key 'estimator' is reserved for deepctrl's table model files; name it otherwise"
        )


def _check_faithful(value: Any, where: str) -> None:
    """Refuse what JSON would store as something else: a dict key that is not a string
    (JSON writes ``{0: 1}`` as ``{"0": 1}``) and a float that is not finite (not JSON).

    >>> _check_faithful({"weights": {0: 0.2}}, "config")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: config['weights'] has the key 0, which JSON would read back as the string '0': ...
    """
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                try:
                    read_back = f"the string {next(iter(json.loads(json.dumps({key: 0}))))!r}"
                except TypeError:
                    read_back = "nothing (JSON cannot write it)"
                raise ValueError(
                    f"{where} has the key {key!r}, which JSON would read back as {read_back}: "
                    "use string keys"
                )
            _check_faithful(item, f"{where}[{key!r}]")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            _check_faithful(item, f"{where}[{i}]")
    elif isinstance(value, float | np.floating) and not np.isfinite(value):
        raise ValueError(f"{where} is {value}, which JSON cannot hold: store None or a string")


def _plain_number(value: Any) -> Any:
    """A NumPy or PyTorch scalar of a config as the Python number it holds (``json.dumps``
    calls this for what it cannot write; anything else stays an error, a tensor of one
    element but of shape (1,) too, whose shape the number would lose).

    >>> import numpy as np
    >>> json.dumps({"lr": np.float32(0.5), "n": torch.tensor(3)}, default=_plain_number)
    '{"lr": 0.5, "n": 3}'
    """
    if isinstance(value, np.generic) or (isinstance(value, torch.Tensor) and value.dim() == 0):
        return value.item()
    if isinstance(value, torch.Tensor | np.ndarray):
        raise TypeError(
            f"a {type(value).__name__} of shape {tuple(value.shape)} is not a number: store "
            "its .tolist()"
        )
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def save(
    model: nn.Module, path: str | os.PathLike[str], config: Mapping[str, Any] | None = None
) -> Path:
    """Write the weights of `model` and `config` to `path`, atomically.

    A [DeepCTRL][deepctrl.core.model.DeepCTRL] built from [mlp][deepctrl.core.layers.mlp]
    parts with a built-in merge also stores its architecture, so
    [load][deepctrl.io.checkpoint.load] can rebuild it without code; any other DeepCTRL
    stores its merge's name and `residual`, which `load` checks against the model it is
    given.

    Args:
        model: The model whose weights to write.
        path: The file to write; its folder must exist.
        config: JSON-serialisable values to store with the weights; None stores none.

    Returns:
        The path written.

    Raises:
        ValueError: When `config` is not JSON-serialisable or uses a key deepctrl reserves
            (`architecture`, `estimator`), or the path cannot be written: a missing folder,
            a folder, a device or a read-only file (a symbolic link is followed). Under
            `torchrun` only rank 0 writes; the other ranks get the path back at once, before
            rank 0 has written it (`torch.distributed.barrier()` before reading it there).
        TypeError: When `model` is not a `torch.nn.Module`.
    """
    model = unwrap(module(model, "model"))  # a torch.compile or DDP wrapper saves what it wraps
    stored = dict(config or {})
    _check_reserved(stored)
    if stored.get("estimator") not in TABLE_MODELS:
        _check_faithful(stored, "config")
    if isinstance(model, DeepCTRL):
        spec = model.spec()
        stored["architecture"] = (
            spec if spec is not None else {"merge": model.merge.name, "residual": model.residual}
        )
    try:
        config_json = json.dumps(stored, default=_plain_number)
    except TypeError as exc:
        raise ValueError(f"checkpoint config is not JSON-serialisable: {exc}") from None
    state = {k: v.detach().cpu().contiguous().clone() for k, v in model.state_dict().items()}
    meta = {**model_file_metadata(), "config": config_json, CONFIG_DIGEST: text_digest(config_json)}
    # the weight bytes do not depend on the metadata: checksum them, then write both
    meta[WEIGHTS_DIGEST] = weights_digest(st_save(state, metadata=meta))
    return write_atomic(path, canonical(st_save(state, metadata=meta)))


def read_checkpoint(path: str | os.PathLike[str]) -> Checkpoint:
    """Weights, config and writer version of a deepctrl model file, with clear errors.

    Args:
        path: The model file.

    Returns:
        What the file holds.

    Raises:
        ValueError: When the file does not exist, is not a deepctrl model file, or is
            corrupt.
    """
    data, meta = read_model_file(path)
    config = model_config(meta, path)
    try:
        state = st_load(data)
    except Exception as exc:
        raise ValueError(f"{path} is corrupt: {exc}") from None
    ordered = {name: state[name] for name in sorted(state)}  # safetensors keeps no order
    return Checkpoint(ordered, config, meta.get("deepctrl_version", "?"))


ModelT = TypeVar("ModelT", bound=nn.Module)


@overload
def load(path: str | os.PathLike[str], model: None = None) -> DeepCTRL: ...


@overload
def load(path: str | os.PathLike[str], model: ModelT) -> ModelT: ...


def load(path: str | os.PathLike[str], model: nn.Module | None = None) -> nn.Module:
    """Load weights into `model` (same architecture), or rebuild a stored MLP DeepCTRL.

    Args:
        path: The model file, written by [save][deepctrl.io.checkpoint.save].
        model: The model to load the weights into; None rebuilds the model from the
            architecture stored in the file.

    Returns:
        The model with the file's weights, in eval mode: `model` itself, or the rebuilt
            [DeepCTRL][deepctrl.core.model.DeepCTRL].

    Raises:
        ValueError: When the file cannot be read (see
            [read_checkpoint][deepctrl.io.checkpoint.read_checkpoint]), is a table model
            (read it with the estimator's `load`), stores no architecture and no `model`
            is given, or its weights do not fit `model`, or it was saved from a DeepCTRL
            with another merge or `residual` than `model`'s (same weights, another
            function), or with another `out_activation` in a part that is an MLP in both.
        TypeError: When `model` is neither None nor a `torch.nn.Module`.
    """
    if model is not None:
        module(model, "model")
    ckpt = read_checkpoint(path)
    if model is not None:
        _check_same_mix(path, ckpt.config.get("architecture"), unwrap(model))
        _check_same_activations(path, ckpt.config.get("architecture"), unwrap(model))
    if model is None:
        arch = ckpt.config.get("architecture")
        table = ckpt.config.get("estimator")
        if table is not None:
            raise ValueError(
                f"{path} is a table model ({table}): read it with "
                f"dc.{table}.load({str(path)!r}), which rebuilds its "
                "preprocessing too"
            )
        if arch is None or (isinstance(arch, dict) and "data_encoder" not in arch):
            raise ValueError(
                f"{path} stores no architecture (only models made of dc.mlp "
                "parts as built, with a built-in merge, do): build the same model in code "
                "and pass it, "
                f"dc.load({str(path)!r}, model=YourModel(...))"
            )
        _check_layer_count(path, arch, len(ckpt.state_dict))
        try:
            with torch.device("meta"):  # shapes only: claimed huge layers allocate nothing
                model = DeepCTRL.from_spec(arch)
        except (KeyError, TypeError, ValueError, AttributeError, RuntimeError):
            raise ValueError(
                f"{path}: its config's 'architecture' is not one deepctrl wrote; build the "
                f"model in code and pass it, dc.load({str(path)!r}, model=YourModel(...))"
            ) from None
        _check_shapes(path, model.state_dict(), ckpt.state_dict)
        floats = [t.dtype for t in ckpt.state_dict.values() if t.is_floating_point()]
        model = model.to_empty(device="cpu")  # the weights come from the file: none is drawn
        model = model.to(floats[0]) if floats else model  # the stored precision
    _check_fits(path, unwrap(model).state_dict(), ckpt.state_dict)  # before any copy
    try:
        unwrap(model).load_state_dict(ckpt.state_dict)  # a compile or DDP wrapper: what it wraps
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()
        raise ValueError(
            f"{path} does not fit this model: {first[1] if len(first) > 1 else exc}"
        ) from None
    return model.eval()


def shape_mismatch(
    expected: dict[str, Tensor], stored: dict[str, Tensor]
) -> tuple[str, tuple[int, ...] | None, tuple[int, ...] | None] | None:
    """The first weight (by name) whose shape differs between two state dicts, with both
    shapes (None where one lacks it); None when they agree.

    >>> shape_mismatch({"w": torch.zeros(2, 3)}, {"w": torch.zeros(2, 4)})
    ('w', (2, 3), (2, 4))
    """
    for key in sorted(expected.keys() | stored.keys()):
        want = tuple(expected[key].shape) if key in expected else None
        have = tuple(stored[key].shape) if key in stored else None
        if want != have:
            return key, want, have
    return None


def _check_shapes(path: Any, expected: dict[str, Tensor], stored: dict[str, Tensor]) -> None:
    """Refuse a file whose stored architecture and weights differ in a layer's shape."""
    differ = shape_mismatch(expected, stored)
    if differ is not None:
        key, want, have = differ
        raise ValueError(
            f"{path} does not hold together: its architecture gives {key} the shape "
            f"{want}, and its weights {have}"
        )


def _check_layer_count(path: Any, arch: Any, tensors: int) -> None:
    """Refuse an architecture that claims more layers than the file holds weights for (a
    weight and a bias each), before any is built: a crafted list of 50,000 widths would
    take a minute to build."""
    if not isinstance(arch, dict):  # not one deepctrl wrote: building it will say so
        return
    parts = [arch.get(k) for k in ("shared", "data_encoder", "rule_encoder", "decision")]
    dims = [p.get("dims") for p in parts if isinstance(p, dict)]
    layers = sum(len(d) - 1 for d in dims if isinstance(d, list) and d)
    if layers > tensors:
        raise ValueError(
            f"{path} does not hold together: its architecture claims {layers} layers, and it "
            f"holds {tensors} weight tensors"
        )


def _check_fits(path: Any, expected: dict[str, Tensor], stored: dict[str, Tensor]) -> None:
    """Refuse a file whose weights differ from the model's in a name or a shape, before
    any weight is copied (a failed ``load_state_dict`` leaves the others overwritten)."""
    differ = shape_mismatch(expected, stored)
    if differ is None:
        return
    key, want, have = differ
    if have is None:
        why = f"the file has no {key}, which the model has"
    elif want is None:
        why = f"the file's {key} is not in the model"
    else:
        why = f"{key} has the shape {want} in the model and {have} in the file"
    raise ValueError(f"{path} does not fit this model: {why}; the model is left as it was")


def _check_same_activations(path: Any, arch: Any, model: nn.Module) -> None:
    """Refuse a file whose parts were saved with another output activation than the
    [MLP][deepctrl.core.layers.MLP] parts of `model` have (the weights fit, and a sigmoid more
    or less computes another function)."""
    if not isinstance(model, DeepCTRL) or not isinstance(arch, dict):
        return
    for name in ("shared", "data_encoder", "rule_encoder", "decision"):
        saved, part = arch.get(name), getattr(model, name)
        if not isinstance(saved, dict) or not isinstance(part, MLP):
            continue
        described = part.spec()
        if described is not None and saved.get("out_activation") != described["out_activation"]:
            raise ValueError(
                f"{path} was saved from a model whose {name} had "
                f"out_activation={saved.get('out_activation')!r}, and this model's has "
                f"out_activation={described['out_activation']!r}: build it as it was trained"
            )


def _check_same_mix(path: Any, arch: Any, model: nn.Module) -> None:
    """Refuse a file saved from a DeepCTRL whose merge or `residual` differs from `model`'s:
    the weights would fit, and the model would compute another function with them."""
    if not isinstance(model, DeepCTRL) or not isinstance(arch, dict):
        return
    saved, given = arch.get("merge"), model.merge.name
    if saved is not None and saved != given:
        raise ValueError(
            f"{path} was saved from a model with merge={saved!r}, and this model has "
            f"merge={given!r}: build it with the merge it was trained with"
        )
    if "residual" in arch and bool(arch["residual"]) != model.residual:
        raise ValueError(
            f"{path} was saved from a model with residual={bool(arch['residual'])}, and this "
            f"model has residual={model.residual}: build it as it was trained"
        )


__all__ = ["Checkpoint", "load", "read_checkpoint", "save"]
