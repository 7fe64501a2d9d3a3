"""Turning user data into tensors with clear errors, and choosing the device."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

from deepctrl.core.inputs import Inputs, batch_len


def _numeric_tensor(a: Any, name: str) -> Tensor:
    """A tensor as it is, or a numeric array, list or Series/DataFrame as a tensor."""
    if hasattr(a, "to_numpy") and not isinstance(a, Tensor):
        a = a.to_numpy()
    if isinstance(a, Tensor):
        return a
    try:
        arr = np.asarray(a)
    except Exception as exc:
        raise ValueError(f"{name} cannot be turned into an array: {exc}") from None
    if arr.dtype.kind not in "biuf":
        raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
    return torch.from_numpy(np.ascontiguousarray(arr))


def as_tensor(
    a: Any, name: str, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> Tensor:
    """A tensor from a tensor, array or DataFrame: floating-point and boolean values in
    ``dtype``, integers kept (class labels, token ids)."""
    a = _numeric_tensor(a, name)
    if a.dtype.is_floating_point or a.dtype == torch.bool:
        a = a.to(dtype)
    t = a.to(device) if device is not None else a
    if t.dim() == 0 or t.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if t.dtype.is_floating_point:
        bad = count_bad_rows(t)
        if bad:
            raise ValueError(f"{name} has NaN or infinite values in {bad} rows")
    return t


def as_inputs(
    X: Any, name: str, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> Inputs:
    """Model inputs from one array-like (a 1-D one gets a feature axis) or a dict of them
    (several inputs, each kept in its shape; all must have the same number of rows).

    >>> x = as_inputs({"num": [[1.0], [2.0]], "ids": [3, 4]}, "X")
    >>> x["num"].dtype, x["ids"].dtype
    (torch.float32, torch.int64)
    """
    if isinstance(X, dict):
        if not X:
            raise ValueError(f"{name} is an empty dict of inputs")
        out = {str(k): as_tensor(v, f"{name}[{k!r}]", device, dtype) for k, v in X.items()}
        lengths = {k: v.shape[0] for k, v in out.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"the inputs of {name} have different numbers of rows: {lengths}")
        return out
    t = as_tensor(X, name, device, dtype)
    return t[:, None] if t.dim() == 1 else t


def as_target(
    y: Any, name: str, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> Tensor:
    """Targets: a 1-D float target gets an output axis; integer labels stay 1-D."""
    t = as_tensor(y, name, device, dtype)
    return t[:, None] if t.dim() == 1 and t.dtype.is_floating_point else t


BLOCK_BYTES = 16 * 2**20
"""The size of the float64 temporaries a pass over the rows of a tensor makes in blocks."""


def block_rows(t: Tensor, most: int = 65536) -> int:
    """Rows per block such that a float64 copy of a block of ``t`` (rows first) takes at
    most :data:`BLOCK_BYTES` (at least one row, at most ``most``).

    >>> block_rows(torch.zeros(10, 3)), block_rows(torch.zeros(10, 2**20))
    (65536, 2)
    """
    width = max(1, t[:1].numel())
    return max(1, min(most, BLOCK_BYTES // (8 * width)))


def count_bad_rows(t: Tensor, block: int | None = None) -> int:
    """Rows of ``t`` holding NaN or infinity, checked in blocks of rows (isfinite on the
    whole tensor would make temporaries larger than the data; by default blocks of
    :func:`block_rows`).

    >>> count_bad_rows(torch.tensor([[1.0, float("nan")], [2.0, 3.0]]))
    1
    """
    flat = t.reshape(t.shape[0], -1)
    block = block or block_rows(flat)
    return sum(
        int((~torch.isfinite(flat[i : i + block])).any(dim=1).sum())
        for i in range(0, len(flat), block)
    )


def as_pair(
    pair: Any, name: str, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> tuple[Inputs, Tensor]:
    """(X, y) with matching numbers of rows; X one input or a dict of inputs."""
    try:
        X, y = pair
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (X, y), a Dataset or a DataLoader") from None
    X = as_inputs(X, f"{name} X", device, dtype)
    y = as_target(y, f"{name} y", device, dtype)
    if batch_len(X) != y.shape[0]:
        raise ValueError(f"{name}: X has {batch_len(X)} rows but y has {y.shape[0]}")
    return X, y


def as_weights(
    w: Any, name: str, n: int, device: torch.device | None = None, all_zero: bool = False
) -> Tensor:
    """Per-row sample weights in float64: a 1-D tensor or array (or Series) of ``n`` finite
    values >= 0, not all zero (unless ``all_zero``).

    >>> as_weights([1, 0, 2], "train", 3).tolist()
    [1.0, 0.0, 2.0]
    >>> as_weights([1.0, -2.0], "train", 2)
    Traceback (most recent call last):
    ...
    ValueError: train weights must be >= 0, got 1 negative weight(s)
    """
    what = f"{name} weights"
    w = _numeric_tensor(w, what)
    if w.is_complex():
        raise ValueError(f"{what} must be real numbers, got dtype {w.dtype}")
    if w.dim() != 1:
        raise ValueError(f"{what} must be 1-D (one weight per row), got shape {tuple(w.shape)}")
    if w.shape[0] != n:
        raise ValueError(f"{what}: {w.shape[0]} weights for {n} rows (one per row)")
    w = w.to(device=device, dtype=torch.float64)
    bad = int((~torch.isfinite(w)).sum())
    if bad:
        raise ValueError(f"{what} must be finite, got NaN or infinity in {bad} row(s)")
    negative = int((w < 0).sum())
    if negative:
        raise ValueError(f"{what} must be >= 0, got {negative} negative weight(s)")
    if not all_zero and not bool((w > 0).any()):
        raise ValueError(f"{what} are all zero: at least one row needs a positive weight")
    return w


def as_data(
    data: Any, name: str, device: torch.device | None = None, dtype: torch.dtype = torch.float32
) -> tuple[Inputs, Tensor, Tensor | None]:
    """(X, y, w) from ``(X, y)`` or ``(X, y, None)`` (w None) or ``(X, y, w)`` with per-row
    weights (:func:`as_weights`, float64)."""
    if isinstance(data, tuple | list) and len(data) == 3:
        X, y = as_pair(data[:2], name, device, dtype)
        w = None if data[2] is None else as_weights(data[2], name, batch_len(X), device)
        return X, y, w
    if isinstance(data, tuple | list) and len(data) != 2:
        raise ValueError(
            f"{name} must be (X, y), (X, y, w) with per-row weights w, a Dataset or a DataLoader"
        )
    X, y = as_pair(data, name, device, dtype)
    return X, y, None


def resolve_device(device: str | torch.device | None) -> torch.device:
    """``device`` as a torch.device that exists here (default: the CPU).

    >>> resolve_device(None)
    device(type='cpu')
    >>> resolve_device("tpu")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'tpu': use cpu, cuda, cuda:N or mps
    >>> resolve_device("meta")
    Traceback (most recent call last):
    ...
    ValueError: unknown device 'meta': use cpu, cuda, cuda:N or mps
    """
    if device is None:
        return torch.device("cpu")
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError):
        raise ValueError(f"unknown device {device!r}: use cpu, cuda, cuda:N or mps") from None
    if dev.type not in ("cpu", "cuda", "mps"):  # meta, xpu, vulkan, ...: nothing trains there
        raise ValueError(f"unknown device {device!r}: use cpu, cuda, cuda:N or mps")
    if dev.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0:
            raise ValueError(
                f"device {str(device)!r} is not available: this PyTorch sees no "
                "CUDA GPU; train on 'cpu'"
            )
        if dev.index is not None and dev.index >= count:
            raise ValueError(f"device {str(device)!r} is not available: {count} CUDA GPU(s)")
    if dev.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"device {str(device)!r} is not available here; train on 'cpu'")
    return dev


def check_materialized(model: torch.nn.Module) -> None:
    """A `ValueError` when `model` has weights on the meta device, which hold shapes only.

    >>> with torch.device("meta"):
    ...     net = torch.nn.Linear(2, 1)
    >>> check_materialized(net)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: the model's weights are on the meta device, which holds no values: ...
    """
    if any(p.is_meta for p in model.parameters()):
        raise ValueError(
            "the model's weights are on the meta device, which holds no values: materialize "
            'them first (model.to_empty(device="cpu"), then initialize them)'
        )
