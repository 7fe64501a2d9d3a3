"""Weekly sales forecasting table (paper Sec. 4.2): 13 features, groups by price-demand
correlation, week-based split.

A :class:`Market` holds the raw inputs: daily demand per item-store id, the week of every
day and one sell price per id and week (NaN while the item is not on sale). The M5 files
(:mod:`deepctrl.paper.datasets.retail_m5`) and the synthetic market
(:mod:`deepctrl.paper.datasets.retail_synthetic`) both produce one; :func:`build_table` turns it
into one row per (id, week).

Features of the row of week t (prices are the week's sell price p_t):

* ``week_sell_price`` p_t; ``diff_week_price`` p_t - p_{t-1};
  ``week_sell_price_rel_diff`` (p_t - p_{t-1}) / p_{t-1};
* ``week_sell_price_roll_sd7``: standard deviation (ddof 1) of the prices of weeks
  t-6..t that exist (at least p_{t-1} and p_t do);
* ``week_sell_price_cumrel`` (p_t - cummin) / (1 + cummax - cummin), min and max over the
  id's prices up to week t;
* demand statistics of the daily demand shifted by 28 days, s_d = demand_{d-28}:
  ``week_lag_t28`` s_d, ``week_rolling_mean_t{7,30,60,90,180}`` and
  ``week_rolling_std_t{7,30}`` (ddof 1) over the w days ending at d. They are computed
  per day, on the demand as recorded (zeros before an item's release included), and a week
  row takes the MEAN over its 7 days (so ``week_lag_t28`` is the weekly demand 4 weeks
  earlier divided by 7). The paper leaves this mapping open; this is our choice.

Target: the week's summed demand / 100 (not standardized). Weeks are calendar weeks (M5
``wm_yr_wk``); a week with fewer than 7 days of sales (the last, partial one) is dropped.
A row exists when the id has a price in week t and t-1 and the 180-day window is complete
(day >= 208 of the data). Rows are ordered by id, then week.

Split by week: the last 4 weeks test, the 4 before validation, all earlier weeks training
(273 training weeks for the full M5 calendar of 1969 days, as in the paper).
:func:`group_split` standardizes the 13 features of a group with its TRAINING split's mean
and standard deviation (or with another group's, to test a trained model on new items);
the target stays weekly demand / 100, as in the paper.

Correlation: per id, the Spearman correlation between week-over-week price differences
and weekly-demand differences over pairs of consecutive priced TRAINING weeks (the test
weeks never decide a group; NaN with fewer than 3 pairs or a constant series). Price
changes are rounded to 1e-4 (prices are quoted in cents) so that equal changes tie. Groups:
NEG0.1 / NEG0.2 / NEG0.3 are r < -0.1 / -0.2 / -0.3 (nested), POS0.2 / POS0.3 r > 0.2 / 0.3.

>>> import numpy as np
>>> m = Market(["a"], np.ones((1, 280), np.float32), np.repeat(np.arange(40), 7),
...            np.full((1, 40), 2.0, np.float32))
>>> build_table(m).features.shape  # weeks 30..39: the 180-day window starts at day 208
(10, 13)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch import Tensor

from deepctrl.engine.progress import progress_bar

FEATURES = (
    "week_sell_price",
    "diff_week_price",
    "week_sell_price_rel_diff",
    "week_sell_price_roll_sd7",
    "week_sell_price_cumrel",
    "week_lag_t28",
    "week_rolling_mean_t7",
    "week_rolling_mean_t30",
    "week_rolling_mean_t60",
    "week_rolling_mean_t90",
    "week_rolling_mean_t180",
    "week_rolling_std_t7",
    "week_rolling_std_t30",
)
PRICE = 0
# Raw extras per row that let a rule recompute the price features after a price change.
AUX = ("price_window_mean", "price_window_count", "price_cummin", "price_cummax")
GROUPS: dict[str, tuple[str, float]] = {
    "NEG0.1": ("<", -0.1),
    "NEG0.2": ("<", -0.2),
    "NEG0.3": ("<", -0.3),
    "POS0.2": (">", 0.2),
    "POS0.3": (">", 0.3),
}
SHIFT, MEAN_WINDOWS, STD_WINDOWS = 28, (7, 30, 60, 90, 180), (7, 30)
PRICE_WINDOW, VAL_WEEKS, TEST_WEEKS = 7, 4, 4


@dataclass
class Market:
    """Raw inputs: ``demand`` (ids, days), ``week_of_day`` (days,) week index or -1,
    ``prices`` (ids, weeks) with NaN where an id has no price."""

    ids: Sequence[str]
    demand: np.ndarray
    week_of_day: np.ndarray
    prices: np.ndarray

    def __post_init__(self) -> None:
        self.demand = np.asarray(self.demand, dtype=np.float32)
        self.week_of_day = np.asarray(self.week_of_day, dtype=np.int64)
        self.prices = np.asarray(self.prices, dtype=np.float32)
        n_ids, n_days = self.demand.shape
        if len(self.ids) != n_ids or self.prices.shape[0] != n_ids:
            raise ValueError(
                f"market: {len(self.ids)} ids, {n_ids} demand rows and "
                f"{self.prices.shape[0]} price rows must agree"
            )
        if self.week_of_day.shape != (n_days,):
            raise ValueError(
                f"market: week_of_day needs {n_days} entries, got {self.week_of_day.shape[0]}"
            )
        if not np.isfinite(self.demand).all() or (self.demand < 0).any():
            raise ValueError("market: demand must be finite and >= 0")
        if (self.prices <= 0).any():
            raise ValueError("market: prices must be > 0 (NaN where there is none)")
        if self.week_of_day.max(initial=-1) >= self.prices.shape[1]:
            raise ValueError(
                f"market: week_of_day refers to week {self.week_of_day.max()} but "
                f"prices has {self.prices.shape[1]} week columns"
            )
        self.week_days = _week_days(self.week_of_day, self.prices.shape[1])


def _week_days(week_of_day: np.ndarray, n_weeks: int) -> np.ndarray:
    """(n_weeks, 7) day indices of every week; each week must have 7 consecutive days."""
    out = np.empty((n_weeks, 7), dtype=np.int64)
    for w in range(n_weeks):
        days = np.flatnonzero(week_of_day == w)
        if len(days) != 7 or days[-1] - days[0] != 6:
            raise ValueError(f"market: week {w} must have 7 consecutive days, has {len(days)}")
        out[w] = days
    return out


@dataclass
class RetailTable:
    """One row per (id, week): ``features`` (rows, 13) raw, ``aux`` (rows, 4), ``target``,
    ``row_id`` (index into ``ids``), ``row_week``; ``correlation`` per id."""

    ids: list[str]
    features: np.ndarray
    aux: np.ndarray
    target: np.ndarray
    row_id: np.ndarray
    row_week: np.ndarray
    correlation: np.ndarray
    n_weeks: int

    @property
    def val_start(self) -> int:
        return self.n_weeks - VAL_WEEKS - TEST_WEEKS

    @property
    def test_start(self) -> int:
        return self.n_weeks - TEST_WEEKS

    def split_mask(self, split: str) -> np.ndarray:
        """Rows of ``split`` ("train", "val" or "test")."""
        w = self.row_week
        if split == "train":
            return w < self.val_start
        if split == "val":
            return (w >= self.val_start) & (w < self.test_start)
        if split == "test":
            return w >= self.test_start
        raise ValueError(f"split must be 'train', 'val' or 'test', got {split!r}")

    def group_ids(self, group: str) -> np.ndarray:
        """Indices of the ids in ``group`` (e.g. "NEG0.2")."""
        if group not in GROUPS:
            raise ValueError(f"unknown group {group!r}; choose from {sorted(GROUPS)}")
        op, bound = GROUPS[group]
        r = np.nan_to_num(self.correlation, nan=0.0)
        hit = r < bound if op == "<" else r > bound
        return np.flatnonzero(hit & np.isfinite(self.correlation))

    def rows(self, group: str, split: str) -> np.ndarray:
        """Row indices of ``group`` in ``split``."""
        in_group = np.isin(self.row_id, self.group_ids(group))
        return np.flatnonzero(in_group & self.split_mask(split))

    def group_sizes(self) -> dict[str, dict[str, int]]:
        """Ids and rows per split of every group."""
        return {
            g: {
                "ids": len(self.group_ids(g)),
                **{s: len(self.rows(g, s)) for s in ("train", "val", "test")},
            }
            for g in GROUPS
        }


def build_table(market: Market, chunk_ids: int = 2000, progress: bool = False) -> RetailTable:
    """The weekly table of ``market``, ``chunk_ids`` ids at a time (bounded memory)."""
    n_ids, n_weeks = market.prices.shape
    if n_weeks <= VAL_WEEKS + TEST_WEEKS:
        raise ValueError(
            f"market has {n_weeks} full weeks; the split needs more than {VAL_WEEKS + TEST_WEEKS}"
        )
    _check_history(market.week_of_day)
    parts: list[tuple[np.ndarray, ...]] = []
    corr = np.full(n_ids, np.nan)
    bar = progress_bar(n_ids, "weekly features", progress)
    for lo in range(0, n_ids, chunk_ids):
        hi = min(lo + chunk_ids, n_ids)
        demand_feats, weekly = _demand_features(market.demand[lo:hi], market.week_days)
        price_feats, aux = _price_features(market.prices[lo:hi])
        feats = np.concatenate([price_feats, demand_feats], axis=2)
        corr[lo:hi] = spearman_rows(
            *_differences(market.prices[lo:hi], weekly, n_weeks - VAL_WEEKS - TEST_WEEKS)
        )
        ok = np.isfinite(feats).all(axis=2)
        rid, week = np.nonzero(ok)
        parts.append(
            (
                feats[rid, week].astype(np.float32),
                aux[rid, week].astype(np.float32),
                (weekly[rid, week] / 100.0).astype(np.float32),
                rid + lo,
                week,
            )
        )
        bar.update(hi - lo)
    bar.close()
    cols = list(zip(*parts, strict=True))
    return RetailTable(
        ids=list(market.ids),
        features=np.concatenate(cols[0]).astype(np.float32),
        aux=np.concatenate(cols[1]).astype(np.float32),
        target=np.concatenate(cols[2]).astype(np.float32),
        row_id=np.concatenate(cols[3]).astype(np.int32),
        row_week=np.concatenate(cols[4]).astype(np.int32),
        correlation=corr,
        n_weeks=n_weeks,
    )


def _check_history(week_of_day: np.ndarray) -> None:
    """An error unless more than ``VAL_WEEKS + TEST_WEEKS`` weeks have every feature: a week
    has them once its first day has ``SHIFT + max(MEAN_WINDOWS)`` days before it (the
    longest rolling mean of the demand 28 days earlier) and a week before it (the price
    change)."""
    first = SHIFT + max(MEAN_WINDOWS) - 1
    weeks, starts = np.unique(week_of_day, return_index=True)  # each week's first day
    usable = int(((weeks >= 1) & (starts >= first)).sum())
    needed = VAL_WEEKS + TEST_WEEKS + 1
    if usable < needed:
        raise ValueError(
            f"the sales cover {len(week_of_day)} days, and only {usable} full weeks come after "
            f"the {first} days of history a row's features need (a {max(MEAN_WINDOWS)}-day "
            f"mean of the demand {SHIFT} days before); the split needs {needed} "
            f"({TEST_WEEKS} to test, {VAL_WEEKS} to validate, at least one to train): give "
            f"{first + 7 * (needed + 1)} days of sales (enough whichever weekday they start on)"
        )


def _window_sums(cum: np.ndarray, w: int, first_valid: int) -> np.ndarray:
    """Sums over the w days ending at each day from a zero-prefixed cumulative sum."""
    n_days = cum.shape[1] - 1
    out = np.full((cum.shape[0], n_days), np.nan)
    start = first_valid + w - 1
    if start < n_days:
        out[:, start:] = cum[:, start + 1 :] - cum[:, start + 1 - w : n_days + 1 - w]
    return out


def _demand_features(demand: np.ndarray, week_days: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids, weeks, 8) weekly means of the daily demand statistics, and weekly demand sums."""
    d = demand.astype(np.float64)
    n, n_days = d.shape
    shifted = np.full((n, n_days), np.nan)
    shifted[:, SHIFT:] = d[:, : n_days - SHIFT]
    zero = np.zeros((n, 1))
    filled = np.nan_to_num(shifted)
    c1 = np.concatenate([zero, np.cumsum(filled, axis=1)], axis=1)
    c2 = np.concatenate([zero, np.cumsum(filled**2, axis=1)], axis=1)
    daily = [shifted] + [_window_sums(c1, w, SHIFT) / w for w in MEAN_WINDOWS]
    for w in STD_WINDOWS:
        s1, s2 = _window_sums(c1, w, SHIFT), _window_sums(c2, w, SHIFT)
        daily.append(np.sqrt(np.maximum(s2 - s1 * s1 / w, 0.0) / (w - 1)))
    weekly = np.stack([f[:, week_days].mean(axis=2) for f in daily], axis=2)
    return weekly, d[:, week_days].sum(axis=2)


def _price_features(prices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(ids, weeks, 5) price features and (ids, weeks, 4) raw extras (see ``AUX``)."""
    p = prices.astype(np.float64)
    n = p.shape[0]
    prev = np.full_like(p, np.nan)
    prev[:, 1:] = p[:, :-1]
    diff = p - prev
    padded = np.concatenate([np.full((n, PRICE_WINDOW - 1), np.nan), p], axis=1)
    win = np.lib.stride_tricks.sliding_window_view(padded, PRICE_WINDOW, axis=1)
    have = np.isfinite(win)
    count = have.sum(axis=2).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(have, win, 0.0).sum(axis=2) / count
        ss = np.where(have, (win - mean[..., None]) ** 2, 0.0).sum(axis=2)
        sd = np.where(count >= 2, np.sqrt(ss / (count - 1)), np.nan)
        cummin = np.fmin.accumulate(p, axis=1)
        cummax = np.fmax.accumulate(p, axis=1)
        feats = np.stack([p, diff, diff / prev, sd, (p - cummin) / (1 + cummax - cummin)], axis=2)
    return feats, np.stack([mean, count, cummin, cummax], axis=2)


def _differences(
    prices: np.ndarray, weekly: np.ndarray, n_train_weeks: int
) -> tuple[np.ndarray, np.ndarray]:
    """Week-over-week price and demand differences over the training weeks (NaN if none)."""
    p = prices[:, :n_train_weeks].astype(np.float64)
    dp = np.round(p[:, 1:] - p[:, :-1], 4)
    dq = np.where(
        np.isfinite(dp), weekly[:, 1:n_train_weeks] - weekly[:, : n_train_weeks - 1], np.nan
    )
    return dp, dq


def _rank_rows(a: np.ndarray) -> np.ndarray:
    """Average ranks (1-based) along each row, NaN kept as NaN."""
    from scipy.stats import rankdata

    return rankdata(a, axis=1, nan_policy="omit")


def spearman_rows(a: np.ndarray, b: np.ndarray, min_pairs: int = 3) -> np.ndarray:
    """Spearman correlation of every row pair over the columns where both are finite.

    >>> spearman_rows(np.array([[1.0, 2, 3, np.nan]]), np.array([[3.0, 1, 0, 5]])).round(3)
    array([-1.])
    """
    both = np.isfinite(a) & np.isfinite(b)
    ra = _rank_rows(np.where(both, a, np.nan))
    rb = _rank_rows(np.where(both, b, np.nan))
    k = both.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        ca = np.where(
            both, ra - np.where(both, ra, 0.0).sum(axis=1, keepdims=True) / k[:, None], 0.0
        )
        cb = np.where(
            both, rb - np.where(both, rb, 0.0).sum(axis=1, keepdims=True) / k[:, None], 0.0
        )
        r = (ca * cb).sum(axis=1) / np.sqrt((ca**2).sum(axis=1) * (cb**2).sum(axis=1))
    return np.where((k >= min_pairs) & np.isfinite(r), r, np.nan)


@dataclass
class RetailSplit:
    """Tensors of one group for training: X standardized with ``mean`` and ``std`` (the
    training split's of the group the model is trained on), y = weekly demand / 100.

    With ``aux=True`` the raw columns of ``AUX`` follow the 13 features (for
    :class:`~deepctrl.paper.datasets.retail_rules.RecomputedPriceRule`; networks read the first 13).
    """

    group: str
    train: tuple[Tensor, Tensor]
    val: tuple[Tensor, Tensor]
    test: tuple[Tensor, Tensor]
    mean: np.ndarray
    std: np.ndarray

    @property
    def stats(self) -> tuple[np.ndarray, np.ndarray]:
        return self.mean, self.std


def group_split(
    table: RetailTable,
    group: str,
    stats: tuple[np.ndarray, np.ndarray] | None = None,
    aux: bool = False,
) -> RetailSplit:
    """Train/val/test tensors of ``group``; standardized with ``stats`` (a source group's,
    for testing a trained model on another group) or the group's own training statistics.
    """
    idx = {s: table.rows(group, s) for s in ("train", "val", "test")}
    if any(len(v) == 0 for v in idx.values()):
        sizes = {s: len(v) for s, v in idx.items()}
        raise ValueError(f"group {group} has an empty split {sizes}; too few items in it")
    if stats is None:
        x = table.features[idx["train"]].astype(np.float64)
        mean, std = x.mean(axis=0), x.std(axis=0)
        std = np.where(std > 0, std, 1.0)
    else:
        mean, std = (np.asarray(a, dtype=np.float64) for a in stats)

    def pair(rows: np.ndarray) -> tuple[Tensor, Tensor]:
        x = ((table.features[rows] - mean) / std).astype(np.float32)
        if aux:
            x = np.concatenate([x, table.aux[rows]], axis=1)
        return torch.from_numpy(x), torch.from_numpy(table.target[rows][:, None].copy())

    return RetailSplit(group, pair(idx["train"]), pair(idx["val"]), pair(idx["test"]), mean, std)
