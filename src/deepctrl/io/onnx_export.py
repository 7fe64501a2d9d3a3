"""ONNX files of core models with the rule strength as an input.

[to_onnx][deepctrl.io.onnx_export.to_onnx] exports any
[DeepCTRL][deepctrl.core.model.DeepCTRL] (or a module called as `model(x, alpha=alpha)`)
through PyTorch's ONNX exporter. The file's inputs are the model's input (`x`, or one input
per key of a dict input) and `alpha`, a float32 per row, so one call scores every row at its
own rule strength; the output is `y`. The batch size is free.

Examples:
    Needs the `onnx` extra: `pip install "deepctrl[onnx]"`.

    ```python
    import torch, deepctrl as dc
    model = dc.DeepCTRL(dc.mlp(4, 8), dc.mlp(4, 8), dc.mlp(16, 1)).eval()
    dc.to_onnx(model, torch.zeros(8, 4), "model.onnx")
    # onnxruntime.InferenceSession("model.onnx").run(None, {"x": x, "alpha": a})
    ```
"""

from __future__ import annotations

import contextlib
import importlib.util
import inspect
import io
import logging
import os
import re
import threading
import warnings
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from deepctrl.core.inputs import Inputs, batch_len
from deepctrl.io.file_format import write_atomic

ONNX_EXTRA = 'pip install "deepctrl[onnx]"'
_QUIET_LOGGERS = (
    "torch.onnx",
    "torch.export",
    "torch._dynamo",
    "torch._subclasses",
    "torch.fx",
    "onnxscript",
)


EXPORTER_READY: bool = {"dynamo", "dynamic_shapes", "optimize"} <= set(
    inspect.signature(torch.onnx.export).parameters
)
"""Whether this PyTorch's ``torch.onnx.export`` is the torch.export-based exporter this module
calls (keywords ``dynamic_shapes`` and ``optimize``): torch 2.3 and 2.4 lack it; torch 2.5
takes ``dynamic_shapes`` but not ``optimize`` and writes files with a fixed batch size or an
opset too old for the table graphs."""


def require(*modules: str) -> None:
    """Raise a one-line error naming the `onnx` extra when a module it installs is absent.

    Args:
        *modules: The modules needed, by import name.

    Raises:
        ModuleNotFoundError: When one of them is not installed (an ImportError, as for
            the other extras).
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ModuleNotFoundError(
            f"ONNX export needs {', '.join(missing)}: {ONNX_EXTRA}", name=missing[0]
        )


def require_exporter() -> None:
    """Raise a one-line error when this PyTorch's exporter is older than the one called here."""
    if not EXPORTER_READY:
        raise ValueError(
            f"ONNX export needs a newer PyTorch than {torch.__version__} (one "
            "whose torch.onnx.export takes dynamo=True, dynamic_shapes and "
            "optimize): pip install -U torch"
        )


_EXPORTING = threading.RLock()
"""One export at a time in a process: PyTorch's exporter is not safe to run from several
threads at once, and the silence below is the process's."""


@contextlib.contextmanager
def quiet_exporter() -> Iterator[None]:
    """Silence the exporter's logs, warnings and what it prints to stderr (graph dumps of a
    failed trace), its error logs too: a failed export raises, and `export_program` names
    the cause in one line. Standard error and warnings are the process's, so other threads'
    are silenced too while an export runs; exports wait for each other."""
    with _EXPORTING:
        loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
        levels = [lg.level for lg in loggers]
        for lg in loggers:
            lg.setLevel(logging.CRITICAL)
        try:
            with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
                warnings.simplefilter("ignore")
                yield
        finally:
            for lg, level in zip(loggers, levels, strict=True):
                lg.setLevel(level)


class _AlphaAsInput(nn.Module):
    """`model(x, alpha=alpha)` with the inputs as separate tensors (the exporter names
    each); `keys` rebuilds a dict input."""

    def __init__(self, model: nn.Module, keys: tuple[str, ...] | None) -> None:
        super().__init__()
        self.model = model
        self.keys = keys

    def forward(self, *args: Tensor) -> Tensor:
        *inputs, alpha = args
        x: Inputs = dict(zip(self.keys, inputs, strict=True)) if self.keys else inputs[0]
        return self.model(x, alpha=alpha)


def rename_value(graph: Any, old: str, new: str) -> None:
    """Rename the value `old` to `new` everywhere in `graph` and its subgraphs.

    Args:
        graph: An ONNX GraphProto, changed in place.
        old: The value's name.
        new: Its new name.
    """
    for value in (*graph.input, *graph.output, *graph.value_info, *graph.initializer):
        if value.name == old:
            value.name = new
    for node in graph.node:
        node.input[:] = [new if v == old else v for v in node.input]
        node.output[:] = [new if v == old else v for v in node.output]
        for attr in node.attribute:
            for sub in (attr.g, *attr.graphs):
                rename_value(sub, old, new)


def _name_values(proto: Any, placeholders: list[str], names: list[str]) -> None:
    """Give the graph's inputs and outputs the user's names, first moving any internal value
    that already has one of them out of the way (the exporter names values after the
    operations that make them, so an input called `cat` would clash)."""
    graph = proto.graph
    taken = {v for node in graph.node for v in (*node.input, *node.output)}
    taken |= {v.name for v in (*graph.initializer, *graph.value_info)}
    for name in names:
        if name in taken and name not in placeholders:
            rename_value(graph, name, f"{name}__internal")
    for old, new in zip(placeholders, names, strict=True):
        rename_value(graph, old, new)


def export_program(
    module: nn.Module, args: tuple[Tensor, ...], names: list[str], outputs: list[str], what: str
) -> Any:
    """`torch.onnx.export` of `module(*args)` with a free batch size on every input.

    Args:
        module: The module to export.
        args: Example inputs, one tensor per input.
        names: The file's input names, one per tensor of `args`.
        outputs: The file's output names.
        what: How error messages name the module, e.g. `"this DeepCTRL"`.

    Returns:
        The ONNX ModelProto with inputs `names` and outputs `outputs`.

    Raises:
        ModuleNotFoundError: When the `onnx` extra is missing.
        ValueError: When the export fails (one error naming `what` and the exporter's
            first cause).
    """
    require("onnx", "onnxscript")
    require_exporter()
    batch = torch.export.Dim("batch", min=1)
    shapes: tuple[Any, ...] = tuple({0: batch} for _ in args)
    params = inspect.signature(module.forward).parameters.values()
    if any(p.kind is p.VAR_POSITIONAL for p in params):
        shapes = (shapes,)  # forward(*args) takes them as one nested entry
    held_in = [f"deepctrl_input_{i}" for i in range(len(names))]
    held_out = [f"deepctrl_output_{i}" for i in range(len(outputs))]
    try:
        with quiet_exporter():
            program = torch.onnx.export(
                module,
                args,
                None,
                input_names=held_in,
                output_names=held_out,
                dynamic_shapes=shapes,
                dynamo=True,
                verbose=False,
                optimize=True,
            )
    except Exception as exc:  # the exporter raises many types; the user needs the cause
        interrupt = _interrupt_in(exc)
        if interrupt is not None:  # Ctrl-C while the exporter imported a module
            raise interrupt from None
        raise ValueError(f"{what} does not export to ONNX: {_root_cause(exc)}") from exc
    if program is None:
        raise ValueError(f"{what} does not export to ONNX: the exporter returned nothing")
    proto = program.model_proto
    _name_values(proto, held_in + held_out, names + outputs)
    return proto


def _interrupt_in(exc: BaseException) -> BaseException | None:
    """An interrupt (Ctrl-C, or SIGTERM as the command line raises it) among the causes and
    contexts of ``exc``, which the exporter wraps in errors of its own, or None.

    >>> try:
    ...     try:
    ...         raise KeyboardInterrupt
    ...     except KeyboardInterrupt as stop:
    ...         raise AttributeError("module 'torch._dynamo' has no attribute 'exc'") from stop
    ... except AttributeError as err:
    ...     type(_interrupt_in(err)).__name__
    'KeyboardInterrupt'
    """
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if not isinstance(link, Exception):
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return None


def _root_cause(exc: BaseException) -> str:
    """The first line of the innermost cause of an exporter error, without colour codes; for
    a module of onnx or onnxscript that is missing, what to upgrade.

    >>> err = ModuleNotFoundError("No module named 'onnxscript.x'", name="onnxscript.x")
    >>> _root_cause(err)  # doctest: +ELLIPSIS
    "No module named 'onnxscript.x' (this PyTorch's exporter needs a newer onnxscript: ..."
    """
    while exc.__cause__ is not None:
        exc = exc.__cause__
    text = re.sub(r"\x1b\[[0-9;]*m", "", str(exc)).strip()
    line = text.splitlines()[0] if text else type(exc).__name__
    package = (getattr(exc, "name", None) or "").split(".")[0]
    if isinstance(exc, ModuleNotFoundError) and package in ("onnx", "onnxscript", "onnx_ir"):
        line += (
            f" (this PyTorch's exporter needs a newer {package}: pip install --upgrade "
            f"{package.replace('_', '-')})"
        )
    return line


def _example_tensors(example_inputs: Inputs) -> tuple[tuple[str, ...] | None, tuple[Tensor, ...]]:
    """The names (None for a tensor) and tensors of `to_onnx`'s example, checked."""
    if isinstance(example_inputs, Tensor):
        tensors: tuple[Any, ...] = (example_inputs,)
        keys = None
    elif isinstance(example_inputs, Mapping) and example_inputs:
        keys = tuple(str(k) for k in example_inputs)
        tensors = tuple(example_inputs.values())
        for taken, what in (("alpha", "the rule strength input"), ("y", "the output")):
            if taken in keys:
                raise ValueError(f"a dict input named {taken!r} would clash with {what}: rename it")
    else:
        empty = " (empty)" if isinstance(example_inputs, Mapping) else ""
        raise ValueError(
            "example_inputs must be a tensor or a non-empty dict of tensors, got "
            f"{type(example_inputs).__name__}{empty}"
        )
    for name, t in zip(keys or ("example_inputs",), tensors, strict=True):
        if not isinstance(t, Tensor):
            raise ValueError(f"example_inputs[{name!r}] must be a tensor, got {type(t).__name__}")
        if t.dim() == 0:
            raise ValueError(f"{name} must have a batch dimension (rows first), got a scalar")
    return keys, tensors


def _run_eager(wrapper: nn.Module, args: tuple[Tensor, ...], what: str) -> Any:
    """The model's own output on `args` as a NumPy array, or one line on why it fails."""
    try:
        with torch.no_grad():
            return wrapper(*args).detach().cpu().numpy()
    except Exception as exc:  # the model is the user's: any error it raises is theirs
        rows = batch_len(args[0])
        on = (
            "one row of example_inputs (the file's batch size is free)"
            if rows == 1
            else (f"example_inputs ({rows} rows)")
        )
        raise ValueError(f"{what} does not run on {on}: {_root_cause(exc)}") from exc


def to_onnx(
    model: nn.Module,
    example_inputs: Inputs,
    path: str | os.PathLike[str],
    *,
    check: bool = True,
    atol: float = 1e-4,
) -> Path:
    """Write `model` as an ONNX file whose inputs are `x` (or the keys of a dict input)
    and `alpha` (float32, one per row), and whose output is `y`.

    The model is exported in eval mode (its mode is restored after). Needs the `onnx`
    extra.

    Args:
        model: A [DeepCTRL][deepctrl.core.model.DeepCTRL], or a module called as
            `model(x, alpha=alpha)`.
        example_inputs: A batch of at least two rows (a tensor, or a dict of tensors with
            the same batch size) in the dtypes the model takes.
        path: The file to write (atomically).
        check: With onnxruntime installed, run the file on the example at alphas spread
            over [0, 1], and on its first row alone; it must give the model's outputs to
            `atol` (a file whose batch size was fixed while exporting fails here).
        atol: The largest difference `check` accepts (relative to the scale of large
            outputs).

    Returns:
        The path written.

    Raises:
        ModuleNotFoundError: When the `onnx` extra is missing.
        ValueError: When `example_inputs` is neither a tensor nor a non-empty dict of
            tensors with a batch dimension, has fewer than two rows, or has a key named
            `alpha` or `y`; when the model does not run on it; when the export fails, or
            the check finds different outputs.

    Examples:
        ```python
        dc.to_onnx(model, torch.zeros(8, 4), "model.onnx")
        ```

        With a dict input, the file's inputs are `num`, `cat` and `alpha`:

        ```python
        dc.to_onnx(model, {"num": nums, "cat": codes}, "model.onnx")
        ```
    """
    keys, tensors = _example_tensors(example_inputs)
    n = batch_len(example_inputs)
    if n < 2:
        raise ValueError(
            "example_inputs needs at least two rows, so that the batch size stays free in the file"
        )
    was_training = model.training
    model.eval()
    try:
        alpha = torch.linspace(0.0, 1.0, n)
        wrapper = _AlphaAsInput(model, keys)
        what = f"this {type(model).__name__}"
        expected = _run_eager(wrapper, (*tensors, alpha), what)
        names = [*(keys or ("x",)), "alpha"]
        proto = export_program(wrapper, (*tensors, alpha), names, ["y"], what)
        if check and importlib.util.find_spec("onnxruntime") is not None:
            for rows in (slice(None), slice(0, 1)):  # the example's size, then one row
                args = tuple(t[rows] for t in (*tensors, alpha))
                want = expected if rows == slice(None) else _run_eager(wrapper, args, what)
                feed = {name: t.cpu().numpy() for name, t in zip(names, args, strict=True)}
                check_outputs(proto, feed, [want], atol)
    finally:
        model.train(was_training)
    return write_atomic(path, proto.SerializeToString())


def check_outputs(proto: Any, feed: dict[str, Any], expected: list[Any], atol: float) -> None:
    """Run `proto` in onnxruntime on `feed` and compare its outputs with `expected`.

    Args:
        proto: The ONNX ModelProto.
        feed: Its inputs by name.
        expected: The outputs it should give, in the graph's order.
        atol: The largest difference accepted (relative to the scale for large values).

    Raises:
        ValueError: When an output's shape differs, or its values differ by more than
            `atol` (exactly, for outputs that are not floats).
    """
    import numpy as np
    import onnxruntime as ort

    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    got = session.run(None, feed)
    for out, want, value in zip(session.get_outputs(), expected, got, strict=False):
        want = np.asarray(want)
        if value.shape != want.shape:
            raise ValueError(
                f"the ONNX output {out.name!r} has shape {value.shape}, the model's {want.shape}"
            )
        if want.dtype.kind == "f":
            gap = float(np.max(np.abs(value - want) / np.maximum(1.0, np.abs(want)), initial=0.0))
            if not gap <= atol:
                raise ValueError(
                    f"the ONNX output {out.name!r} differs from the model's by "
                    f"{gap:.2e} (more than {atol:g})"
                )
        elif not np.array_equal(value, want):
            raise ValueError(f"the ONNX output {out.name!r} differs from the model's")
