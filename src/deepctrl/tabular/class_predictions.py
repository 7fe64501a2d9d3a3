"""A warning for a classifier that never predicts a class on the rows that chose its alpha
(the usual sign of a rare class trained without class weights)."""

from __future__ import annotations

import warnings

import numpy as np

from deepctrl.core.warn_site import outside_stacklevel
from deepctrl.tabular.table_messages import shown


def unpredicted_classes(
    classes: np.ndarray, predicted: np.ndarray, y_true: np.ndarray
) -> list[tuple[object, int]]:
    """The classes that some of the rows hold and none is predicted as, with how many rows
    hold each; `predicted` and `y_true` are class indices.

    >>> unpredicted_classes(np.array(["no", "yes"]), np.array([0, 0, 0]), np.array([0, 1, 1]))
    [('yes', 2)]
    """
    held = np.bincount(y_true, minlength=len(classes))
    given = np.bincount(predicted, minlength=len(classes))
    labels = classes.tolist()  # numpy scalars as Python values
    return [(labels[k], int(held[k])) for k in range(len(classes)) if held[k] and not given[k]]


WEIGHTS_HINT = (
    "; class_weight='balanced' (deepctrl fit --class-weight balanced) weighs the classes alike"
)
"""How the warning ends for a model trained without class weights."""


def warn_unpredicted_classes(
    classes: np.ndarray,
    predicted: np.ndarray,
    y_true: np.ndarray,
    alpha: float,
    weighted: bool,
    rows: str = "validation",
) -> None:
    """Warn once per class that the ``rows`` ("validation", "training", "out-of-fold") hold
    and the model at ``alpha`` never predicts; without class weights (``weighted`` False),
    suggest them.

    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as seen:
    ...     warnings.simplefilter("always")
    ...     warn_unpredicted_classes(
    ...         np.array(["no", "yes"]), np.zeros(50, int), np.arange(50) % 25 == 0, 0.3, False
    ...     )
    >>> print(str(seen[0].message))  # doctest: +NORMALIZE_WHITESPACE
    class 'yes' is predicted for none of the 50 validation rows at alpha 0.3, though 2 of
    them hold it: its probability never passes the others'; class_weight='balanced'
    (deepctrl fit --class-weight balanced) weighs the classes alike
    """
    for label, held in unpredicted_classes(classes, predicted, np.asarray(y_true, int)):
        hint = WEIGHTS_HINT if not weighted else ""
        warnings.warn(
            f"class {shown(label)} is predicted for none of the {len(predicted)} {rows} "
            f"rows at alpha {alpha:g}, though {held} of them hold it: its probability never "
            f"passes the others'{hint}",
            UserWarning,
            stacklevel=outside_stacklevel(),
        )
