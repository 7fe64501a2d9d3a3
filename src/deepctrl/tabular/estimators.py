"""scikit-learn estimators: DeepCTRL on tables, with rules that name columns.

Numeric columns are standardized and categorical ones (text, category, bool) one-hot
encoded inside the model; regression targets are standardized too (for `loss="poisson"`
divided by their mean). rho="auto" is the library's (`deepctrl.core.scale`): a
perturbation rule is measured on the data's typical slope instead of the fresh network,
which gives rho near 0.1 on standardized targets. It
keeps alpha = 0 a plain network trained on the data and makes alpha = 1 follow the rule
even where the training labels contradict it (rho = 1 left alpha = 1 at 78 % verification
on such a table; see docs/results/tabular.md).

The rule strength is chosen after training: `alpha="auto"` (the default) keeps the rule,
using the lowest-error alpha among those whose verification ratio on the validation rows
reaches 0.99 (`deepctrl.tabular.alpha_choice`); `alpha="min_error"` uses the lowest
validation error alone, `select_alpha` picks one on your own validation set, and
`predict(X, alpha=...)` takes any value.

This module is their documented home: `DeepCTRLRegressor` is defined in
`deepctrl.tabular.regressor` and `DeepCTRLClassifier` in `deepctrl.tabular.classifier`, both
on `deepctrl.tabular.estimator_base`; `load_any` reads either from a model file.

Examples:
    >>> import numpy as np, pandas as pd, deepctrl as dc
    >>> rng = np.random.default_rng(0)
    >>> X = pd.DataFrame({"price": rng.uniform(1, 10, 200), "size": rng.uniform(0, 1, 200)})
    >>> y = 10 - X["price"] + X["size"] + rng.normal(0, 0.3, 200)
    >>> est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")],
    ...                            max_epochs=30, random_state=0).fit(X, y)
    >>> est.verification_ratio(X, alpha=1.0) > 0.9
    True
"""

from __future__ import annotations

import os

from deepctrl.tabular.classifier import DeepCTRLClassifier
from deepctrl.tabular.estimator_base import DeepCTRLEstimator
from deepctrl.tabular.model_file import load_estimator
from deepctrl.tabular.regressor import DeepCTRLRegressor

__all__ = ["DeepCTRLClassifier", "DeepCTRLRegressor", "load_any"]


def load_any(path: str | os.PathLike[str]) -> DeepCTRLEstimator:
    """A table model file as the estimator class it names; never unpickles.

    Args:
        path: A file from `deepctrl fit` or an estimator's `save`.

    Returns:
        The fitted regressor or classifier.

    Raises:
        ValueError: When the file cannot be read or is not a table model.
    """
    return load_estimator(path)
