"""deepctrl: teach neural networks rules and choose the rule strength at inference.

DeepCTRL (Seo et al., NeurIPS 2021) trains a data encoder and a rule encoder whose
latents are mixed by a rule strength alpha drawn at random during training; at inference
any alpha gives a model between "fits the data" (alpha = 0) and "follows the rule"
(alpha = 1), without retraining.

Examples:
    >>> import deepctrl as dc
    >>> dc.__version__ >= "0.1"
    True
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from deepctrl._version import __version__

# public name -> module defining it; imported on first use, so that ``import deepctrl`` (and
# the command line's argument errors) do not wait for PyTorch and scikit-learn to load
_WHERE = {
    "DeepCTRL": "deepctrl.core.model",
    "MLP": "deepctrl.core.layers",
    "mlp": "deepctrl.core.layers",
    "Residual": "deepctrl.core.layers",
    "FitResult": "deepctrl.engine.result",
    "fit": "deepctrl.engine.training",
    "Callback": "deepctrl.engine.callbacks",
    "EpochEnd": "deepctrl.engine.callbacks",
    "fit_methods": "deepctrl.engine.training",
    "Objective": "deepctrl.core.objective",
    "ObjectiveOutput": "deepctrl.core.objective_output",
    "load": "deepctrl.io.checkpoint",
    "read_checkpoint": "deepctrl.io.checkpoint",
    "save": "deepctrl.io.checkpoint",
    "to_onnx": "deepctrl.io.onnx_export",
    "predict_sweep": "deepctrl.core.sweep_outputs",
    "select_alpha": "deepctrl.core.alpha_selection",
    "sweep": "deepctrl.core.evaluation",
    "verification_ratio": "deepctrl.core.evaluation",
    "Monotonic": "deepctrl.core.rules",
    "DeepCTRLClassifier": "deepctrl.tabular.estimators",
    "DeepCTRLRegressor": "deepctrl.tabular.estimators",
    "rule_test": "deepctrl.tabular.rule_test",
    "write_rule_test": "deepctrl.tabular.rule_test_report",
}
_SUBMODULES = ("methods", "priors", "rules")
_TABULAR_EXTRA = ("pandas", "sklearn", "scipy", "matplotlib", "narwhals")
"""What the tabular extra installs: a public name that needs one of them says so."""

if TYPE_CHECKING:
    from deepctrl import methods, priors, rules
    from deepctrl.core.alpha_selection import select_alpha
    from deepctrl.core.evaluation import sweep, verification_ratio
    from deepctrl.core.layers import MLP, Residual, mlp
    from deepctrl.core.model import DeepCTRL
    from deepctrl.core.objective import Objective
    from deepctrl.core.objective_output import ObjectiveOutput
    from deepctrl.core.rules import Monotonic
    from deepctrl.core.sweep_outputs import predict_sweep
    from deepctrl.engine.callbacks import Callback, EpochEnd
    from deepctrl.engine.result import FitResult
    from deepctrl.engine.training import fit, fit_methods
    from deepctrl.io.checkpoint import load, read_checkpoint, save
    from deepctrl.io.onnx_export import to_onnx
    from deepctrl.tabular.estimators import DeepCTRLClassifier, DeepCTRLRegressor
    from deepctrl.tabular.rule_test import rule_test
    from deepctrl.tabular.rule_test_report import write_rule_test


if not TYPE_CHECKING:  # hidden from type checkers, which then flag misspelt names

    def __getattr__(name: str) -> Any:
        """Import a public name's module the first time the name is used."""
        if name in _SUBMODULES:
            return importlib.import_module(f"deepctrl.{name}")
        if name in _WHERE:
            try:
                module = importlib.import_module(_WHERE[name])
            except ModuleNotFoundError as exc:
                if exc.name not in _TABULAR_EXTRA:
                    raise
                raise ModuleNotFoundError(
                    f"deepctrl.{name} needs {exc.name}, which the tabular extra installs: "
                    "pip install 'deepctrl[tabular]'",
                    name=exc.name,
                ) from exc
            value = getattr(module, name)
            globals()[name] = value
            return value
        raise AttributeError(f"module 'deepctrl' has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(__all__)


__all__ = [
    "MLP",
    "Callback",
    "DeepCTRL",
    "DeepCTRLClassifier",
    "DeepCTRLRegressor",
    "EpochEnd",
    "FitResult",
    "Monotonic",
    "Objective",
    "ObjectiveOutput",
    "Residual",
    "__version__",
    "fit",
    "fit_methods",
    "load",
    "methods",
    "mlp",
    "predict_sweep",
    "priors",
    "read_checkpoint",
    "rule_test",
    "rules",
    "save",
    "select_alpha",
    "sweep",
    "to_onnx",
    "verification_ratio",
    "write_rule_test",
]
