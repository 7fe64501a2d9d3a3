"""An offline synthetic retail market with the M5 layout (daily demand, weekly prices).

Every item has a base demand b (units per day), a yearly season, a weekly day pattern, a
regular price that is raised now and then, promotions (temporary discounts of 10-30 %
lasting 1-3 weeks), a release week, a slowly wandering demand level (an AR(1) process in
log space with item noise sigma) and a price elasticity e. Daily demand is Poisson with
mean

    b * day_pattern * season * exp(level_week) * (price_week / first_price) ** (-e)

and zero before release. The calendar mirrors M5: 281 full weeks plus a partial week of
2 days (dropped), so the split is 273 / 4 / 4 weeks.

How elasticity and noise decide the groups: the groups are cut on the Spearman
correlation r between week-over-week price and demand changes. Price changes are rare
(promotions and regular raises), so r is driven by the weeks with a price change: a large
elasticity turns every price cut into a clear demand jump (r very negative), while the
level noise sigma and the Poisson noise of a small base demand b blur it. Elasticities come
from three kinds of items: normal goods e ~ U(0.3, 3.5) (55 %), nearly inelastic goods
e ~ U(-0.3, 0.3) (20 %) and goods whose demand RISES with price, e ~ U(-3.5, -0.3) (25 %,
the POS groups; in M5 a positive r is a correlation, not such a demand law). Measured on
1000 items (seed 0), the mean r is -0.30 for e in [2, 3.5), -0.19 for [1, 2), -0.10 for
[0.3, 1), -0.01 for [-0.3, 0.3), +0.10 for [-1, -0.3) and +0.24 for [-3.5, -1); among items
with e > 1.5 it is -0.31 / -0.28 / -0.27 for sigma in [0.05, 0.15) / [0.15, 0.25) /
[0.25, 0.35) and -0.22 / -0.28 / -0.34 for b < 1 / 1-2 / > 2 units a day. So elasticity
decides the sign and most of the size of r, noise and small volumes pull it towards 0.
``report_groups`` tabulates the drawn elasticity, noise and base demand of each group.

>>> sm = synthetic_market(seed=0, n_items=20)
>>> sm.market.demand.shape, sm.market.prices.shape
((20, 1969), (20, 281))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from deepctrl.paper.datasets.retail import GROUPS, Market, RetailTable

N_WEEKS = 281
PARTIAL_DAYS = 2
DAY_PATTERN = np.array([1.25, 1.3, 0.95, 0.85, 0.85, 0.9, 1.0])  # Saturday first, as wm_yr_wk
ITEM_KINDS = (  # (share, low e, high e)
    (0.55, 0.3, 3.5),
    (0.20, -0.3, 0.3),
    (0.25, -3.5, -0.3),
)


@dataclass
class SyntheticMarket:
    """The market and the per-item truth it was drawn from."""

    market: Market
    elasticity: np.ndarray
    noise: np.ndarray
    base: np.ndarray
    promo_rate: np.ndarray


def _price_paths(rng: np.random.Generator, n: int, n_weeks: int) -> tuple[np.ndarray, ...]:
    """Weekly prices (NaN before release), first prices and promotion rates."""
    first = np.round(np.exp(rng.normal(np.log(4.0), 0.5, n)), 2).clip(0.5)
    raises = rng.random((n, n_weeks)) < 1 / 40
    steps = np.where(raises, np.exp(rng.normal(0.04, 0.04, (n, n_weeks))), 1.0)
    steps[:, 0] = 1.0
    regular = first[:, None] * np.cumprod(steps, axis=1)
    rate = rng.uniform(0.02, 0.10, n)
    discount = np.zeros((n, n_weeks))
    starts = rng.random((n, n_weeks)) < rate[:, None]
    lengths = rng.integers(1, 4, (n, n_weeks))
    depth = rng.uniform(0.1, 0.3, (n, n_weeks))
    for i, w in zip(*np.nonzero(starts), strict=True):
        discount[i, w : w + lengths[i, w]] = depth[i, w]
    price = np.round(regular * (1 - discount), 2)
    release = np.where(rng.random(n) < 0.5, 0, rng.integers(0, 150, n))
    price[np.arange(n_weeks)[None, :] < release[:, None]] = np.nan
    return price, first, rate, release


def _elasticities(rng: np.random.Generator, n: int) -> np.ndarray:
    shares = np.array([k[0] for k in ITEM_KINDS])
    kind = rng.choice(len(ITEM_KINDS), size=n, p=shares / shares.sum())
    low = np.array([k[1] for k in ITEM_KINDS])[kind]
    high = np.array([k[2] for k in ITEM_KINDS])[kind]
    return rng.uniform(low, high)


def _levels(rng: np.random.Generator, noise: np.ndarray, n_weeks: int) -> np.ndarray:
    """AR(1) log demand level per week, x_t = 0.8 x_{t-1} + N(0, sigma^2)."""
    shocks = rng.normal(0.0, 1.0, (len(noise), n_weeks)) * noise[:, None]
    level = np.zeros_like(shocks)
    for t in range(1, n_weeks):
        level[:, t] = 0.8 * level[:, t - 1] + shocks[:, t]
    return level


def synthetic_market(seed: int = 0, n_items: int = 1000, n_weeks: int = N_WEEKS) -> SyntheticMarket:
    """A market of ``n_items`` items over ``n_weeks`` full weeks; deterministic per seed."""
    if n_items < 1 or n_weeks < 40:
        raise ValueError(
            f"synthetic market needs n_items >= 1 and n_weeks >= 40, got {n_items} and {n_weeks}"
        )
    rng = np.random.default_rng(np.random.SeedSequence([seed, 5]))
    n_days = n_weeks * 7 + PARTIAL_DAYS
    day = np.arange(n_days)
    week_of_day = np.where(day < n_weeks * 7, day // 7, -1)
    price, first, rate, _ = _price_paths(rng, n_items, n_weeks)
    elasticity = _elasticities(rng, n_items)
    noise = rng.uniform(0.05, 0.35, n_items)
    base = np.exp(rng.normal(np.log(1.5), 0.6, n_items))
    amplitude = rng.uniform(0.0, 0.4, n_items)
    phase = rng.uniform(0.0, 2 * np.pi, n_items)
    level = _levels(rng, noise, n_weeks)
    week = np.minimum(day // 7, n_weeks - 1)
    season = 1 + amplitude[:, None] * np.sin(2 * np.pi * day[None, :] / 365.25 + phase[:, None])
    with np.errstate(invalid="ignore"):
        price_effect = (price / first[:, None]) ** (-elasticity[:, None])
    weekly = np.exp(level) * np.nan_to_num(price_effect, nan=0.0)
    mean = base[:, None] * DAY_PATTERN[day % 7][None, :] * season * weekly[:, week]
    demand = rng.poisson(mean).astype(np.float32)
    ids = [f"SYN_{i:05d}" for i in range(n_items)]
    market = Market(ids, demand, week_of_day, price.astype(np.float32))
    return SyntheticMarket(market, elasticity, noise, base, rate)


def report_groups(sm: SyntheticMarket, table: RetailTable) -> list[dict[str, float]]:
    """Per group: ids, the share of items whose demand truly falls with price (e > 0) and
    the median elasticity, noise sigma, base demand and promotion rate."""
    out = []
    for group in GROUPS:
        idx = table.group_ids(group)
        row: dict[str, float] = {"group": group, "ids": len(idx)}  # type: ignore[dict-item]
        row["share_elastic"] = float(np.mean(sm.elasticity[idx] > 0)) if len(idx) else float("nan")
        for name in ("elasticity", "noise", "base", "promo_rate"):
            values = getattr(sm, name)[idx]
            row[f"median_{name}"] = float(np.median(values)) if len(idx) else float("nan")
        out.append(row)
    return out
