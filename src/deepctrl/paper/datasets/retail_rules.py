"""The retail rule: sales fall when the price rises (paper Sec. 4.2).

The price is raised by delta = gamma |p| with gamma ~ U[0, 0.1] (the paper's relative
perturbation) in RAW price units: the network sees the standardized price, and a relative
change of a standardized value is meaningless (zero at the mean, and of the wrong sign
below it), so the perturbation is wrapped in ``dc.rules.Standardized``.
Satisfied when y_hat_p < y_hat; loss relu(y_hat_p - y_hat).

Two variants:

* :func:`price_rule` (default, as the authors did): only ``week_sell_price`` moves; the
  other price-derived features (week-over-week difference, relative difference, 7-week
  standard deviation, cumulative relative position) keep their values. The perturbed row
  is then not a row that could occur, but the rule asks exactly "higher price, all else
  equal".
* :class:`RecomputedPriceRule` (``price_rule(split, recompute=True)``): the four derived
  features are recomputed for the raised price from the raw extras the split carries
  (``aux=True``): difference + delta, relative difference against the previous price,
  the 7-week standard deviation with p replaced by p + delta, and the cumulative position
  with cummax updated.

>>> import numpy as np
>>> mean, std = np.zeros(13), np.ones(13)
>>> price_rule_for(mean, std).perturbation.config()["kind"]
'standardized'
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import Tensor

import deepctrl as dc
from deepctrl.paper.datasets.retail import AUX, FEATURES, PRICE, RetailSplit

RELATIVE_U = 0.1


def price_rule_for(mean: np.ndarray, std: np.ndarray, u: float = RELATIVE_U) -> dc.rules.Monotonic:
    """Monotonic decreasing on the standardized price, raised by u * U(0,1) * |raw price|."""
    raw = dc.rules.Standardized(dc.rules.Relative(u), float(mean[PRICE]), float(std[PRICE]))
    return dc.rules.Monotonic(PRICE, "decreasing", perturbation=raw)


def price_rule(split: RetailSplit, recompute: bool = False, u: float = RELATIVE_U) -> dc.rules.Rule:
    """The rule for a split's standardization; ``recompute`` needs ``group_split(aux=True)``."""
    if recompute:
        return RecomputedPriceRule(split.mean, split.std, u)
    return price_rule_for(split.mean, split.std, u)


class RecomputedPriceRule(dc.rules.SignedRule):
    """Price up by u * U(0,1) * |p| with the derived price features recomputed.

    Inputs are the 13 standardized features followed by the raw ``AUX`` columns (window
    mean and count of the 7-week price window, cummin, cummax). Satisfied on y_hat_p <
    y_hat. Built from code only (cannot be saved in a model file).
    """

    def __init__(self, mean: np.ndarray, std: np.ndarray, u: float = RELATIVE_U) -> None:
        self.mean = torch.as_tensor(np.asarray(mean, dtype=np.float32)[: len(FEATURES)])
        self.std = torch.as_tensor(np.asarray(std, dtype=np.float32)[: len(FEATURES)])
        self.relative = dc.rules.Relative(u)

    def perturb(
        self, x: Tensor | dict[str, Tensor], generator: torch.Generator | None = None
    ) -> Tensor:
        if isinstance(x, dict):
            raise ValueError("RecomputedPriceRule needs one input tensor, not a dict of inputs")
        k = len(FEATURES)
        if x.shape[-1] != k + len(AUX):
            raise ValueError(
                f"RecomputedPriceRule needs {k} features + {len(AUX)} aux columns "
                f"(group_split(..., aux=True)), got {x.shape[-1]} columns"
            )
        mean, std = self.mean.to(x), self.std.to(x)
        raw = x[:, :k] * std + mean
        p, diff, sd = raw[:, 0], raw[:, 1], raw[:, 3]
        w_mean, w_count, cmin, cmax = (x[:, k + i] for i in range(len(AUX)))
        delta = self.relative.delta(p, generator)
        p_new = p + delta
        prev = p - diff
        ss = sd**2 * (w_count - 1) + 2 * delta * (p - w_mean) + delta**2 * (1 - 1 / w_count)
        new = raw.clone()
        new[:, 0] = p_new
        new[:, 1] = diff + delta
        new[:, 2] = (p_new - prev) / prev
        new[:, 3] = torch.sqrt(torch.clamp(ss, min=0.0) / (w_count - 1))
        new[:, 4] = (p_new - cmin) / (1 + torch.maximum(cmax, p_new) - cmin)
        out = x.clone()
        out[:, :k] = (new - mean) / std
        return out

    def violation(self, ctx: dc.rules.Context) -> Tensor:
        if ctx.y_hat_p is None:
            raise ValueError("RecomputedPriceRule needs the perturbed output")
        return dc.rules.output_column(ctx.y_hat_p, 0) - dc.rules.output_column(ctx.y_hat, 0)

    def config(self) -> dict[str, Any]:
        raise ValueError("RecomputedPriceRule is built from code and cannot be saved")
