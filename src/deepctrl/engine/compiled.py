"""The terms of a training batch as one compiled graph (``dc.fit(compile=True)``).

``torch.compile`` traces the stacked forward, the rule and the task loss into one graph, and
AOTAutograd compiles their backward with it. The method's objective stays eager (a stack of
methods splits the terms per member, and those sizes would become guards), and the flat Adam
update stays one fused kernel. The graph has symbolic sizes (``dynamic=True``), so the last,
shorter batch of an epoch and a stack that shrinks as seeds stop early reuse it instead of
recompiling (a stack or batch of exactly one is specialised once more). Inputs are copied out
of the buffers they are slices of, and duck sizing is off while the graph runs, since both
storage offsets and sizes that happen to be equal would otherwise be guarded. Compiled kernels
fuse element-wise work and round differently from the eager ones: results agree with an eager
run to float rounding, not bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.fx.experimental._config as fx_config
from torch import Tensor

from deepctrl.core.methods import Terms

BatchTerms = Callable[..., Terms]


class CompiledTerms:
    """``terms(x, y, perturbed, alpha, rows)`` compiled once for every stack and batch size."""

    def __init__(self, terms: BatchTerms) -> None:
        self.compiled = torch.compile(terms, dynamic=True)

    def __call__(self, *args: Any) -> Terms:
        with fx_config.patch(use_duck_shape=False):  # type: ignore[attr-defined]
            return self.compiled(*(_own_storage(a) for a in args))


def _own_storage(value: Any) -> Any:
    """Tensors (also in lists and dicts) copied out of the larger buffers they are slices
    of: a compiled graph guards on storage offsets and would recompile for every slice."""
    if isinstance(value, Tensor):
        return value.clone(memory_format=torch.contiguous_format)
    if isinstance(value, list):
        return [_own_storage(v) for v in value]
    if isinstance(value, dict):
        return {k: _own_storage(v) for k, v in value.items()}
    return value
