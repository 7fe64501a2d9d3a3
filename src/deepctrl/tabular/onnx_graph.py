"""A fitted table estimator as one ONNX graph: the table's columns and `alpha` in, the
predictions out, with the preprocessing, the networks' average and the target scaling
(for a Poisson model the exp of its log-rate too) inside, so a server needs onnxruntime
and nothing of deepctrl.

Inputs, one per column by name, each of shape `(rows,)`:

* numeric columns: float32, NaN where missing; float64 for a column whose values lie more
  than :data:`~deepctrl.tabular.onnx_inputs.FLOAT32_REACH` standard deviations from 0
  (years, coordinates, timestamps), which float32 would round by more than a millionth of
  a standard deviation;
* categorical columns: strings, the value as `str(value)` (`"True"`, `"true"` or
  `"TRUE"` for a boolean), the empty string where missing;
* date columns: int64 nanoseconds since 1970-01-01 (`datetime64[ns]` viewed as int64;
  NaT, the smallest int64, where missing) of the wall-clock time a date shows, or in UTC
  for a column whose ``clock`` is ``"utc"`` (trained on UTC times only, or from a model
  file written before dates were read at their wall-clock time);
* `alpha`: float32, the rule strength of each row.

Outputs: `prediction` (a regressor; one value per row for a 1-D target, else one column
per target) or `label` and `probabilities` (a classifier, classes in `classes_` order).
The file's metadata holds the estimator's `default_alpha` (`alpha_`) and
`min_error_alpha`, as text.

The networks and their average are exported by PyTorch's ONNX exporter
(`deepctrl.io.onnx_export.export_program`); the preprocessing, written with ONNX
operators (`deepctrl.tabular.onnx_preprocessing`), is joined in front of them and the
label lookup behind.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np
import pandas as pd
import torch
from sklearn.utils.validation import check_is_fitted
from torch import Tensor, nn

from deepctrl._version import __version__
from deepctrl.io.file_format import write_atomic
from deepctrl.io.onnx_export import check_outputs, export_program, rename_value, require
from deepctrl.tabular.alpha_choice import per_row_alphas
from deepctrl.tabular.alpha_evaluation import aligned_alpha
from deepctrl.tabular.onnx_inputs import input_type_name, onnx_feed
from deepctrl.tabular.onnx_preprocessing import preprocessing_graph

if TYPE_CHECKING:
    from deepctrl.tabular.estimator_base import DeepCTRLEstimator

INTERNAL = ("_pre/", "_net/", "_post/")
"""Prefixes of the graph's internal value names (no input or output starts with one)."""


class _Served(nn.Module):
    """The estimator's networks from the encoded table and a per-row alpha to what
    `predict` (a regressor) or `predict_proba` (a classifier) returns."""

    def __init__(self, est: DeepCTRLEstimator) -> None:
        super().__init__()
        self.est = est
        # registered so that the exporter finds the weights that combined_at reads
        self.networks = nn.ModuleList(est.models_)
        self.ignores_alpha = est.rule_ is None
        self.classifier = hasattr(est, "classes_")
        self.log_link = not self.classifier and est.rule_outputs().link == "log"
        if not self.classifier:
            self.register_buffer("scale", torch.as_tensor(est.target_scale_, dtype=torch.float32))
            self.register_buffer("shift", torch.as_tensor(est.target_mean_, dtype=torch.float32))

    def forward(self, x: Tensor, alpha: Tensor) -> Tensor:
        if self.ignores_alpha:
            alpha = alpha * 0.0
        out = self.est.combined_at(x, alpha)
        if self.classifier:
            if out.shape[1] == 1:
                p = torch.sigmoid(out)
                return torch.cat([1 - p, p], dim=1)
            return torch.softmax(out, dim=1)
        linked = out.exp() if self.log_link else out  # a Poisson model's log-rate
        raw = linked * self.get_buffer("scale") + self.get_buffer("shift")
        return raw[:, 0] if self.est.target_1d_ else raw


def _label_values(classes: np.ndarray) -> np.ndarray:
    if classes.dtype.kind in "iub":
        return classes.astype(np.int64)
    if classes.dtype.kind == "f":
        return classes.astype(np.float64)
    return np.array([str(c) for c in classes], dtype=object)


def onnx_name_clashes(columns: Sequence[str], classifier: bool) -> list[str]:
    """The columns whose names an ONNX file of the model uses for its own inputs and
    outputs (or internal values), or cannot give an input (the empty name), so that
    `to_onnx` refuses them.

    >>> onnx_name_clashes(["alpha", "label", "price", ""], classifier=False)
    ['alpha', '']
    """
    reserved = {"", "alpha", *(["label", "probabilities"] if classifier else ["prediction"])}
    return [n for n in columns if n in reserved or n.startswith(INTERNAL)]


def table_graph(est: DeepCTRLEstimator) -> Any:
    """The fitted estimator `est` as one ONNX ModelProto (see the module docstring)."""
    require("onnx", "onnxscript")
    from onnx import compose, helper

    encoder = est.encoder_
    classifier = hasattr(est, "classes_")
    outputs = ["label", "probabilities"] if classifier else ["prediction"]
    clash = onnx_name_clashes(encoder.names, classifier)
    if clash == [""]:
        raise ValueError(
            "the table has a column with an empty name (''), which an ONNX input cannot "
            "have: rename the column and fit again"
        )
    if clash:
        named = next(n for n in clash if n)
        raise ValueError(
            f"the table has a column named {named!r}, which the ONNX file "
            "uses for its own input or output: rename the column and fit again"
        )
    example = torch.zeros(2, encoder.n_encoded)
    network = export_program(
        _Served(est).eval(),
        (example, torch.zeros(2)),
        ["encoded", "alpha"],
        outputs[-1:],
        f"this {type(est).__name__}",
    )
    network = compose.add_prefix(network, "_net/")
    for name in ("alpha", outputs[-1]):
        rename_value(network.graph, f"_net/{name}", name)
    pre = preprocessing_graph(
        encoder, list(network.opset_import), network.ir_version, output="_pre/encoded"
    )
    model = compose.merge_models(pre, network, io_map=[("_pre/encoded", "_net/encoded")])
    if classifier:
        _add_label(model, est.classes_)
    for value in (*model.graph.input, *model.graph.output):
        for dim in value.type.tensor_type.shape.dim:
            if dim.dim_param == "batch":  # the network's row axis: one name for every row axis
                dim.dim_param = "rows"
    model.graph.name = f"deepctrl {type(est).__name__}"
    model.doc_string = (
        "Inputs: the table's columns by name and 'alpha' (float32 per row); "
        f"outputs: {', '.join(o.name for o in model.graph.output)}."
    )
    helper.set_model_props(
        model,
        {
            "estimator": type(est).__name__,
            "deepctrl_version": __version__,
            "default_alpha": repr(float(est.alpha_)),
            "min_error_alpha": repr(float(est.min_error_alpha_)),
            # how each column enters, for a server that has only the file (a date column
            # trained on UTC times takes UTC, the others the wall-clock time)
            **{f"input {c.name}": input_type_name(c) for c in encoder.columns},
        },
    )
    return model


def _add_label(model: Any, classes: np.ndarray) -> None:
    """Add the `label` output (the most probable class) in front of `probabilities`."""
    from onnx import TensorProto, helper, numpy_helper

    labels = _label_values(classes)
    label_type = {"i": TensorProto.INT64, "f": TensorProto.DOUBLE}.get(
        labels.dtype.kind, TensorProto.STRING
    )
    graph = model.graph
    graph.initializer.append(numpy_helper.from_array(labels, "_post/classes"))
    graph.node.extend(
        [
            helper.make_node("ArgMax", ["probabilities"], ["_post/best"], axis=1, keepdims=0),
            helper.make_node("Gather", ["_post/classes", "_post/best"], ["label"], axis=0),
        ]
    )
    graph.output.insert(0, helper.make_tensor_value_info("label", label_type, ["rows"]))


def check_table_graph(
    est: DeepCTRLEstimator, proto: Any, frame: pd.DataFrame, alpha: Any, atol: float = 1e-4
) -> None:
    """Raise ValueError unless onnxruntime's outputs for `frame` match the estimator's."""
    feed = onnx_feed(est.encoder_, frame, alpha)
    rows = feed["alpha"].astype(np.float64)
    with warnings.catch_warnings():
        # `frame` carries the model's own column names, also for a model fitted on an array
        warnings.filterwarnings("ignore", "X has feature names", UserWarning)
        if hasattr(est, "classes_"):
            proba = est.predict_proba(frame, alpha=rows)
            expected = [_label_values(np.asarray(est.classes_[proba.argmax(axis=1)])), proba]
        else:
            expected = [est.predict(frame, alpha=rows)]
    check_outputs(proto, feed, expected, atol)


def write_onnx(
    est: DeepCTRLEstimator, path: str | os.PathLike[str], frame: pd.DataFrame | None
) -> Path:
    """Build the graph of `est`, check it on the rows of `frame` (if given) at alphas
    spread over [0, 1] one per row (one row: at alpha 0 and at 1), and write it
    atomically."""
    proto = table_graph(est)
    if frame is not None and len(frame):
        require("onnxruntime")
        spread = [np.linspace(0.0, 1.0, len(frame))] if len(frame) > 1 else [0.0, 1.0]
        for alphas in spread:
            check_table_graph(est, proto, frame, alphas)
    return write_atomic(path, proto.SerializeToString())


class OnnxExport:
    """ONNX export for the table estimators (mixed into their base class)."""

    def to_onnx(self, path: str | os.PathLike[str], X: Any = None) -> Path:
        """Write the fitted model as one ONNX file: inputs are the table's columns by name
        and `alpha` (float32, one per row), outputs `prediction` (regressor) or `label` and
        `probabilities` (classifier); the preprocessing, the networks' average and the
        target scaling are inside, so onnxruntime alone serves it. Needs the `onnx` extra.
        Input types and `onnx_inputs` are described in the deployment guide.

        Args:
            path: The file to write (atomically).
            X: Rows to check the file on: it is first run in onnxruntime on them (alphas
                from 0 to 1, one per row; one row at alpha 0 and at 1) and must give this
                estimator's predictions to 1e-4. None skips the check.

        Returns:
            The path written.

        Raises:
            ModuleNotFoundError: When the `onnx` extra is missing.
            ValueError: When a column's name clashes with an input or output of the file,
                the export fails, or the check finds different predictions.

        Examples:
            ```python
            est.to_onnx("model.onnx", X_test[:100])
            ```
        """
        est = cast("DeepCTRLEstimator", self)
        check_is_fitted(est, "models_")
        return write_onnx(est, path, None if X is None else est._frame(X, reset=False))

    def onnx_inputs(self, X: Any, alpha: Any = None) -> dict[str, np.ndarray]:
        """The ONNX file's inputs for the rows of `X`: float32 numbers (float64 for columns
        far from 0, see the module's docstring), string categories, int64 nanosecond dates
        and `alpha`.

        Args:
            X: The rows, with the columns the model was fitted on.
            alpha: The rule strength: a number, `"auto"`, `"min_error"`, one number per
                row, or None for `alpha_`.

        Returns:
            The inputs by name, one array of shape (rows,) each.

        Raises:
            ValueError: When X lacks a column the model needs or `alpha` is not valid.

        Examples:
            ```python
            session.run(None, est.onnx_inputs(X, alpha=0.8))
            ```
        """
        est = cast("DeepCTRLEstimator", self)
        check_is_fitted(est, "models_")
        frame = est._frame(X, reset=False)
        if alpha is None or isinstance(alpha, str) or np.ndim(alpha) == 0:
            alpha = est.resolve_alpha(alpha)
        else:
            alpha = per_row_alphas(aligned_alpha(alpha, X), len(frame))
        return onnx_feed(est.encoder_, frame, alpha)
