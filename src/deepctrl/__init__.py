"""deepctrl: teach neural networks rules and choose the rule strength at inference.

DeepCTRL (Seo et al., NeurIPS 2021) trains a data encoder and a rule encoder whose
latents are mixed by a rule strength alpha drawn at random during training; at inference
any alpha gives a model between "fits the data" (alpha = 0) and "follows the rule"
(alpha = 1), without retraining.

>>> import deepctrl as dc
>>> dc.__version__ >= "0.1"
True
"""

from deepctrl import methods, priors, rules
from deepctrl._version import __version__
from deepctrl.checkpoint import load, read_checkpoint, save
from deepctrl.evaluation import predict_sweep, select_alpha, sweep, verification_ratio
from deepctrl.model import MLP, DeepCTRL, mlp
from deepctrl.rules import Monotonic
from deepctrl.training import FitResult, fit

_LAZY = {"DeepCTRLClassifier": "deepctrl.estimators", "DeepCTRLRegressor": "deepctrl.estimators"}


def __getattr__(name: str) -> type:
    """Import the scikit-learn estimators only when they are used (import time)."""
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'deepctrl' has no attribute {name!r}")

__all__ = [
    "MLP",
    "DeepCTRL",
    "DeepCTRLClassifier",
    "DeepCTRLRegressor",
    "FitResult",
    "Monotonic",
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
