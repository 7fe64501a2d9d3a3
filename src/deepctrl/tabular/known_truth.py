"""Tables where the truth about a rule is known: each segment's sales follow the rule
"sales fall when the price rises", contradict it (they truly rise), or do not depend on the
price at all. They measure how reliable the verdicts of
[rule_test][deepctrl.tabular.rule_test.rule_test] are.

Examples:
    >>> from deepctrl.tabular.known_truth import known_truth_table
    >>> table = known_truth_table({"a": "follows", "b": "contradicts"}, rows=100, seed=0)
    >>> table.shape, sorted(table["segment"].unique())
    ((200, 5), ['a', 'b'])
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

TRUTHS = ("follows", "contradicts", "none")
"""What a segment's data do with the rule: the price effect is negative, positive or zero."""
SLOPE_SIGN = {"follows": -1.0, "contradicts": 1.0, "none": 0.0}
RULE = ("price", "decreasing")
"""The rule these tables test: the prediction falls when `price` rises."""


def _segment(
    n: int, slope: float, noise: float, level: float, rng: np.random.Generator
) -> pd.DataFrame:
    price = rng.uniform(1.0, 5.0, n)
    quality = rng.uniform(0.0, 1.0, n)
    season = rng.normal(0.0, 1.0, n)
    sales = (
        level
        + slope * (price - 3.0)
        + 2.0 * quality
        + 1.5 * np.sin(season)
        + noise * rng.normal(0.0, 1.0, n)
    )
    return pd.DataFrame({"price": price, "quality": quality, "season": season, "sales": sales})


def known_truth_table(
    truths: Mapping[str, str],
    rows: int | Sequence[int] = 600,
    effect: float = 1.0,
    noise: float = 1.0,
    seed: int = 0,
) -> pd.DataFrame:
    """One table with a `segment` column and the columns price, quality, season and sales.

    Every segment has its own rows where sales change by `effect` per unit of price (price
    uniform on [1, 5], so its standard deviation is 1.15), downwards for "follows", upwards
    for "contradicts" and not at all for "none". Two other features (quality, linear; season,
    through a sine) carry 1.3 units of variance. Segments differ in their sales level, so
    pooling them mixes levels.

    Args:
        truths: Segment name -> truth, one of [TRUTHS][deepctrl.tabular.known_truth.TRUTHS].
        rows: The rows of every segment, or one number per segment.
        effect: The change of sales per unit of price, >= 0.
        noise: The standard deviation of the unexplained part, >= 0.
        seed: Seeds the draws.

    Returns:
        The segments' rows, one after another.

    Raises:
        ValueError: When `rows` does not give one size per segment, a truth is unknown, or
            `effect` or `noise` is negative.
    """
    sizes = [rows] * len(truths) if isinstance(rows, int) else list(rows)
    if len(sizes) != len(truths):
        raise ValueError(f"rows gives {len(sizes)} sizes for {len(truths)} segments")
    unknown = sorted(set(truths.values()) - set(TRUTHS))
    if unknown:
        raise ValueError(f"unknown truth {unknown[0]!r}; use one of {', '.join(TRUTHS)}")
    if effect < 0 or noise < 0:
        raise ValueError(f"effect and noise must be >= 0, got {effect} and {noise}")
    rng = np.random.default_rng(seed)
    parts = []
    for i, ((name, truth), n) in enumerate(zip(truths.items(), sizes, strict=True)):
        part = _segment(n, SLOPE_SIGN[truth] * effect, noise, 5.0 + i, rng)
        parts.append(part.assign(segment=name)[["segment", *part.columns]])
    return pd.concat(parts, ignore_index=True)
