"""deepctrl: teach neural networks rules and choose the rule strength at inference.

DeepCTRL (Seo et al., NeurIPS 2021) trains a data encoder and a rule encoder whose
latents are mixed by a rule strength alpha drawn at random during training; at inference
any alpha gives a model between "fits the data" (alpha = 0) and "follows the rule"
(alpha = 1), without retraining.

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
    "DeepCTRL": "deepctrl.model", "MLP": "deepctrl.model", "mlp": "deepctrl.model",
    "FitResult": "deepctrl.training", "fit": "deepctrl.training",
    "Objective": "deepctrl.objective", "ObjectiveOutput": "deepctrl.objective",
    "load": "deepctrl.checkpoint", "read_checkpoint": "deepctrl.checkpoint",
    "save": "deepctrl.checkpoint",
    "predict_sweep": "deepctrl.evaluation", "select_alpha": "deepctrl.evaluation",
    "sweep": "deepctrl.evaluation", "verification_ratio": "deepctrl.evaluation",
    "Monotonic": "deepctrl.rules",
    "DeepCTRLClassifier": "deepctrl.estimators", "DeepCTRLRegressor": "deepctrl.estimators",
}
_SUBMODULES = ("methods", "priors", "rules")

if TYPE_CHECKING:
    from deepctrl import methods, priors, rules
    from deepctrl.checkpoint import load, read_checkpoint, save
    from deepctrl.estimators import DeepCTRLClassifier, DeepCTRLRegressor
    from deepctrl.evaluation import predict_sweep, select_alpha, sweep, verification_ratio
    from deepctrl.model import MLP, DeepCTRL, mlp
    from deepctrl.objective import Objective, ObjectiveOutput
    from deepctrl.rules import Monotonic
    from deepctrl.training import FitResult, fit


def __getattr__(name: str) -> Any:
    """Import a public name's module the first time the name is used."""
    if name in _SUBMODULES:
        return importlib.import_module(f"deepctrl.{name}")
    if name in _WHERE:
        value = getattr(importlib.import_module(_WHERE[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'deepctrl' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "MLP",
    "DeepCTRL",
    "DeepCTRLClassifier",
    "DeepCTRLRegressor",
    "FitResult",
    "Monotonic",
    "Objective",
    "ObjectiveOutput",
    "__version__",
    "fit",
    "load",
    "methods",
    "mlp",
    "predict_sweep",
    "priors",
    "read_checkpoint",
    "rules",
    "save",
    "select_alpha",
    "sweep",
    "verification_ratio",
]
