"""Turning user data into tensors with clear errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor


def as_tensor(a: Any, name: str, device: torch.device | None = None) -> Tensor:
    """A float32 tensor (int64 kept for class labels) from a tensor, array or DataFrame."""
    if hasattr(a, "to_numpy") and not isinstance(a, Tensor):
        a = a.to_numpy()
    if not isinstance(a, Tensor):
        try:
            arr = np.asarray(a)
        except Exception as exc:
            raise ValueError(f"{name} cannot be turned into an array: {exc}") from None
        if arr.dtype.kind not in "biuf":
            raise ValueError(f"{name} must be numeric, got dtype {arr.dtype}")
        a = torch.from_numpy(np.ascontiguousarray(arr))
    if a.dtype.is_floating_point or a.dtype == torch.bool:
        a = a.float()
    t = a.to(device) if device is not None else a
    if t.dim() == 0 or t.shape[0] == 0:
        raise ValueError(f"{name} is empty")
    if t.dtype.is_floating_point:
        bad = count_bad_rows(t)
        if bad:
            raise ValueError(f"{name} has NaN or infinite values in {bad} rows")
    return t


def count_bad_rows(t: Tensor, block: int = 65536) -> int:
    """Rows of ``t`` holding NaN or infinity, checked in blocks of rows (isfinite on the
    whole tensor would make temporaries larger than the data).

    >>> count_bad_rows(torch.tensor([[1.0, float("nan")], [2.0, 3.0]]))
    1
    """
    flat = t.reshape(t.shape[0], -1)
    return sum(int((~torch.isfinite(flat[i:i + block])).any(dim=1).sum())
               for i in range(0, len(flat), block))


def as_pair(pair: Any, name: str, device: torch.device | None = None) -> tuple[Tensor, Tensor]:
    """(X, y) as tensors with matching lengths; X gets a feature axis if 1-D, y too."""
    try:
        X, y = pair
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a pair (X, y)") from None
    X, y = as_tensor(X, f"{name} X", device), as_tensor(y, f"{name} y", device)
    if X.dim() == 1:
        X = X[:, None]
    if y.dim() == 1 and y.dtype.is_floating_point:
        y = y[:, None]
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"{name}: X has {X.shape[0]} rows but y has {y.shape[0]}")
    return X.float() if X.dtype != torch.float32 else X, y
