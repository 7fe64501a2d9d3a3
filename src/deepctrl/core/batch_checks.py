"""The checks of a batch an [Objective][deepctrl.core.objective.Objective] is called on:
tensors with rows, on a real device, one alpha in [0, 1] and one weight per row."""

from __future__ import annotations

from typing import Any

from torch import Tensor

from deepctrl.core.checks import finite_real
from deepctrl.core.data import as_weights
from deepctrl.core.inputs import Inputs, batch_len, device_of


def checked_batch(
    x: Inputs, y: Tensor, alpha: float | None, weight: Any
) -> tuple[Tensor, float | None, Tensor | None]:
    """The targets (a 1-D float tensor read as one column), the alpha given (None: drawn)
    and the rows' weights (None: every row alike) of the batch `(x, y)`, checked."""
    if not isinstance(x, Tensor | dict) or not isinstance(y, Tensor):
        got = type(x if not isinstance(x, Tensor | dict) else y).__name__
        raise ValueError(
            f"an Objective takes torch tensors (x may be a dict of them), got {got}: "
            "convert with torch.as_tensor"
        )
    if y.dim() == 1 and y.is_floating_point():
        y = y[:, None]
    if isinstance(x, dict):
        lengths = {k: v.shape[0] for k, v in x.items()}
        if len(set(lengths.values())) > 1:
            raise ValueError(f"the inputs of the batch have different numbers of rows: {lengths}")
    if batch_len(x) == 0:
        raise ValueError("the batch has no rows")
    if device_of(x).type == "meta":
        raise ValueError(
            "the batch is on the meta device, which holds no values: an Objective "
            "draws perturbations and alphas from values, so move the model and the "
            "batch to a real device first"
        )
    if isinstance(alpha, Tensor) and alpha.numel() != 1:
        raise ValueError(
            "alpha must be one number: the objective weighs a batch's losses by one "
            f"alpha, got a tensor of shape {tuple(alpha.shape)} (per-row alphas are for "
            "model(x, alpha))"
        )
    given_alpha = None if alpha is None else finite_real(alpha, "alpha")
    if given_alpha is not None and not 0.0 <= given_alpha <= 1.0:
        raise ValueError(
            f"alpha must be in [0, 1] for the training objective, got {alpha} (beyond 1 the "
            "task weight turns negative; the model itself takes any alpha)"
        )
    w = (
        None
        if weight is None
        else as_weights(weight, "the batch", batch_len(x), device_of(x), all_zero=True)
    )
    return y, given_alpha, w
