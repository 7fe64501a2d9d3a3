"""Where rows come from: tensors held in memory, or a ``Dataset``/``DataLoader`` read in
batches (data larger than memory, augmentation on the fly).

A dataset yields ``(x, y)`` pairs, x one tensor or a dict of named tensors; a loader yields
them batched. Floating-point values are cast to the model's dtype, integers keep theirs.

>>> import torch
>>> from torch.utils.data import TensorDataset
>>> data = TensorDataset(torch.randn(10, 3), torch.randn(10))
>>> [tuple(x.shape) for x, y in blocks(data, 4, torch.device("cpu"), torch.float32)]
[(4, 3), (4, 3), (2, 3)]
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import torch
from torch import Tensor
from torch.utils.data import DataLoader, Dataset, IterableDataset

from deepctrl.core.data import as_pair
from deepctrl.core.inputs import (
    Inputs,
    apply,
    batch_len,
    cast_floats,
    expand_seeds,
    rows,
    stack_inputs,
)
from deepctrl.core.seeding import derive_seed


def is_loader(data: Any) -> bool:
    """Whether ``data`` is a torch Dataset or DataLoader (rather than tensors)."""
    return isinstance(data, Dataset | DataLoader)


def loader(
    data: Dataset | DataLoader,
    batch_size: int,
    shuffle: bool = False,
    generator: torch.Generator | None = None,
) -> DataLoader:
    """``data`` itself if it is a DataLoader, else a DataLoader over the dataset (with a
    generator of its own, so that starting its iterator leaves PyTorch's global one as it
    was)."""
    if isinstance(data, DataLoader):
        return data
    if not isinstance(data, IterableDataset) and hasattr(data, "__len__") and len(data) == 0:
        raise ValueError("the data is an empty Dataset: it has no rows")
    own = generator if generator is not None else torch.Generator()
    if isinstance(data, IterableDataset):
        return DataLoader(data, batch_size=batch_size, generator=own)
    return DataLoader(data, batch_size=batch_size, shuffle=shuffle, generator=own)


WEIGHED = ("train", "val")
"""The data (named as `fit` names them) that take sample weights, given as tensors."""


def unpack(batch: Any, name: str, need_y: bool = True) -> tuple[Inputs, Tensor | None]:
    """(x, y) from a batch: a pair, or x alone (bare, or a batch of one, as a
    `TensorDataset(X)` gives it) when ``need_y`` is False. Batches of three parts of
    `fit`'s data (``name`` in `WEIGHED`) are told that sample weights need tensors."""
    if isinstance(batch, list | tuple) and len(batch) == 2:
        return batch[0], batch[1]
    if not need_y:
        if isinstance(batch, list | tuple) and len(batch) == 1:
            batch = batch[0]
        if isinstance(batch, Tensor | dict):
            return batch, None
    if isinstance(batch, list | tuple):
        got = f"batches of {len(batch)} parts"
    elif isinstance(batch, dict):
        got = f"batches of type dict (keys {', '.join(map(repr, batch))})"
    else:
        got = f"a batch of type {type(batch).__name__}"
    raise ValueError(
        f"{name} must yield (x, y) pairs, got {got}: make its items (x, y) pairs (in the "
        "Dataset or a collate_fn), or pass (X, y) tensors"
        + (" (sample weights need tensors)" if "3 parts" in got and name in WEIGHED else "")
    )


def prepare(
    x: Any, y: Any, name: str, device: torch.device, dtype: torch.dtype
) -> tuple[Inputs, Tensor | None]:
    """A loader's batch moved to ``device``, floats in ``dtype``, a 1-D float target given
    an output axis."""
    if not isinstance(x, Tensor | dict):
        raise ValueError(f"{name}: x must be a tensor or a dict of tensors, got {type(x).__name__}")
    x = cast_floats(apply(lambda t: t.to(device, non_blocking=True), x), dtype)
    if y is None:
        return x, None
    if not isinstance(y, Tensor):
        raise ValueError(f"{name}: y must be a tensor, got {type(y).__name__}")
    y = y.to(device, dtype if y.is_floating_point() else y.dtype, non_blocking=True)
    if y.dim() == 1 and y.is_floating_point():
        y = y[:, None]
    if y.shape[0] != batch_len(x):
        raise ValueError(f"{name}: a batch has {batch_len(x)} inputs but {y.shape[0]} targets")
    return x, y


def blocks(
    data: Any,
    block_rows: int,
    device: torch.device,
    dtype: torch.dtype,
    name: str = "data",
    need_y: bool = True,
) -> Iterator[tuple[Inputs, Tensor | None]]:
    """(x, y) blocks of rows of tensors ``(X, y)`` or of a Dataset/DataLoader, in order."""
    if is_loader(data):
        for batch in loader(data, block_rows):
            yield prepare(*unpack(batch, name, need_y), name, device, dtype)
        return
    if need_y:
        X, y = as_pair(data, name, device, dtype)
    else:
        X, y = data, None
    for start in range(0, batch_len(X), block_rows):
        part = slice(start, start + block_rows)
        yield rows(X, part), (y[part] if y is not None else None)


class LoaderBatches:
    """Training batches from a Dataset or DataLoader for S seeds at once: (S, b, ...).

    A map-style Dataset with ``shuffle`` gets one DataLoader per seed, shuffled by that
    seed's generator, so a seed sees the batches it sees when trained alone. A DataLoader
    (or an IterableDataset) is shared: every seed gets its batches, in its order.
    """

    def __init__(
        self,
        data: Dataset | DataLoader,
        batch_size: int,
        shuffle: bool,
        seeds: Sequence[int],
        device: torch.device,
        dtype: torch.dtype,
    ) -> None:
        self.device, self.dtype = device, dtype
        if shuffle and isinstance(data, Dataset) and not isinstance(data, IterableDataset):
            self.loaders = [
                loader(
                    data, batch_size, True, torch.Generator().manual_seed(derive_seed(s, "shuffle"))
                )
                for s in seeds
            ]
            self.shared = False
        else:
            self.loaders = [loader(data, batch_size)]
            self.shared = True

    def __len__(self) -> int:
        return len(self.loaders[0])

    def has_len(self) -> bool:
        try:
            len(self.loaders[0])
        except TypeError:
            return False
        return True

    def epoch(self, n_seeds: int) -> Iterator[tuple[Inputs, Tensor]]:
        """One pass: stacked (inputs, targets) per step."""
        if self.shared:
            for batch in self.loaders[0]:
                x, y = prepare(*unpack(batch, "train"), "train", self.device, self.dtype)
                yield expand_seeds(x, n_seeds), expand_seeds(cast(Tensor, y), n_seeds)
            return
        for per_seed in zip(*self.loaders, strict=True):
            pairs = [
                prepare(*unpack(b, "train"), "train", self.device, self.dtype) for b in per_seed
            ]
            yield (
                stack_inputs([p[0] for p in pairs]),
                stack_inputs([cast(Tensor, p[1]) for p in pairs]),
            )

    def keep(self, mask: list[bool]) -> None:
        """Seeds that stopped leave (their loaders with them)."""
        if not self.shared:
            self.loaders = [d for d, k in zip(self.loaders, mask, strict=True) if k]
