"""Weekly retail table: every feature against hand-computed values, groups, split."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from deepctrl.paper.datasets.retail import (
    FEATURES,
    GROUPS,
    Market,
    RetailTable,
    build_table,
    group_split,
    spearman_rows,
)

N_WEEKS = 45  # + 2 days of a partial week


def _market(prices: np.ndarray, demand: np.ndarray | None = None) -> Market:
    n_ids = prices.shape[0]
    n_days = N_WEEKS * 7 + 2
    day = np.arange(n_days)
    if demand is None:
        demand = np.tile(day + 1.0, (n_ids, 1))  # demand on day d (0-based) is d + 1
    week_of_day = np.where(day < N_WEEKS * 7, day // 7, -1)
    return Market([f"id{i}" for i in range(n_ids)], demand, week_of_day, prices)


def _step_prices() -> np.ndarray:
    p = np.full((2, N_WEEKS), 2.0)
    p[0, 32], p[0, 33] = 3.0, 1.5
    p[1, :36] = np.nan  # released in week 36
    return p


def _row(table: RetailTable, id_index: int, week: int) -> int:
    hit = np.flatnonzero((table.row_id == id_index) & (table.row_week == week))
    assert len(hit) == 1, (id_index, week)
    return int(hit[0])


def test_rows_start_when_the_180_day_window_and_two_prices_exist():
    table = build_table(_market(_step_prices()))
    assert table.n_weeks == N_WEEKS  # the partial week is dropped
    # id0: the first week whose days are all >= day 208 (1-based) is week 30 (days 211..217)
    assert table.row_week[table.row_id == 0].tolist() == list(range(30, N_WEEKS))
    # id1: priced from week 36, so the first week with a previous price is 37
    assert table.row_week[table.row_id == 1].tolist() == list(range(37, N_WEEKS))
    # rows are ordered by id, then week
    assert np.all(np.diff(table.row_id) >= 0)


@pytest.mark.parametrize("week", [30, 33, 44])
def test_demand_features_and_target_by_hand(week):
    table = build_table(_market(_step_prices()))
    f = dict(zip(FEATURES, table.features[_row(table, 0, week)].astype(float), strict=True))
    # shifted demand s_d = demand_{d-28} = d - 27 for 0-based day d; week days 7k..7k+6
    lag = 7 * week - 24.0
    assert f["week_lag_t28"] == pytest.approx(lag)
    for w in (7, 30, 60, 90, 180):  # mean of w consecutive integers ending at s_d
        assert f[f"week_rolling_mean_t{w}"] == pytest.approx(lag - (w - 1) / 2)
    # std (ddof 1) of w consecutive integers: sqrt(w (w + 1) / 12)
    assert f["week_rolling_std_t7"] == pytest.approx(math.sqrt(7 * 8 / 12), rel=1e-5)
    assert f["week_rolling_std_t30"] == pytest.approx(math.sqrt(30 * 31 / 12), rel=1e-5)
    # weekly demand: sum of d + 1 over days 7k..7k+6 = 49 k + 28, divided by 100
    assert table.target[_row(table, 0, week)] == pytest.approx((49 * week + 28) / 100)


def test_price_features_by_hand():
    table = build_table(_market(_step_prices()))

    def feats(week):
        return dict(zip(FEATURES, table.features[_row(table, 0, week)].astype(float), strict=True))

    w31, w32, w33, w34 = feats(31), feats(32), feats(33), feats(34)
    assert (
        w31["week_sell_price"],
        w31["diff_week_price"],
        w31["week_sell_price_rel_diff"],
        w31["week_sell_price_roll_sd7"],
        w31["week_sell_price_cumrel"],
    ) == (2, 0, 0, 0, 0)
    assert w32["diff_week_price"] == pytest.approx(1.0)
    assert w32["week_sell_price_rel_diff"] == pytest.approx(0.5)
    # window 26..32 = [2]*6 + [3]: SS = 6/7 -> sd = sqrt(1/7)
    assert w32["week_sell_price_roll_sd7"] == pytest.approx(math.sqrt(1 / 7), rel=1e-5)
    assert w32["week_sell_price_cumrel"] == pytest.approx((3 - 2) / (1 + 3 - 2))
    assert w33["week_sell_price"] == pytest.approx(1.5)
    assert w33["diff_week_price"] == pytest.approx(-1.5)
    assert w33["week_sell_price_rel_diff"] == pytest.approx(-0.5)
    # window 27..33 = [2]*5 + [3, 1.5]: sum 14.5, sum of squares 31.25
    assert w33["week_sell_price_roll_sd7"] == pytest.approx(
        math.sqrt((31.25 - 14.5**2 / 7) / 6), rel=1e-5
    )
    assert w33["week_sell_price_cumrel"] == pytest.approx(0.0)
    assert w34["week_sell_price_rel_diff"] == pytest.approx(0.5 / 1.5)
    assert w34["week_sell_price_cumrel"] == pytest.approx(0.5 / 2.5)


def test_price_window_counts_only_priced_weeks():
    table = build_table(_market(_step_prices()))
    r = _row(table, 1, 38)  # released in week 36: window 32..38 holds 3 prices
    assert table.aux[r].tolist() == [2.0, 3.0, 2.0, 2.0]  # mean, count, cummin, cummax
    assert table.features[r, 3] == 0.0


def test_daily_features_match_pandas_rolling():
    rng = np.random.default_rng(3)
    demand = rng.poisson(3.0, (2, N_WEEKS * 7 + 2)).astype(np.float32)
    table = build_table(_market(np.full((2, N_WEEKS), 2.0), demand))
    s = pd.Series(demand[1].astype(float)).shift(28)
    daily = {"week_lag_t28": s}
    for w in (7, 30, 60, 90, 180):
        daily[f"week_rolling_mean_t{w}"] = s.rolling(w).mean()
    for w in (7, 30):
        daily[f"week_rolling_std_t{w}"] = s.rolling(w).std()
    week = np.arange(len(s)) // 7
    for name, series in daily.items():
        weekly = series.groupby(week).mean()
        for k in (30, 38, 44):
            got = table.features[_row(table, 1, k), FEATURES.index(name)]
            assert got == pytest.approx(weekly[k], rel=1e-5), (name, k)


def test_split_by_week():
    table = build_table(_market(_step_prices()))
    assert (table.val_start, table.test_start) == (N_WEEKS - 8, N_WEEKS - 4)
    test_weeks = sorted(set(table.row_week[table.split_mask("test")].tolist()))
    val_weeks = sorted(set(table.row_week[table.split_mask("val")].tolist()))
    assert test_weeks == list(range(41, 45)) and val_weeks == list(range(37, 41))
    assert table.row_week[table.split_mask("train")].max() == 36
    with pytest.raises(ValueError, match="split must be"):
        table.split_mask("holdout")


def test_correlation_is_spearman_of_training_week_differences():
    rng = np.random.default_rng(0)
    prices = np.round(rng.uniform(1, 3, (3, N_WEEKS)), 1)
    prices[2, :10] = np.nan
    demand = rng.poisson(4.0, (3, N_WEEKS * 7 + 2)).astype(np.float32)
    table = build_table(_market(prices, demand))
    weekly = demand[:, : N_WEEKS * 7].reshape(3, N_WEEKS, 7).sum(axis=2)
    n_train = N_WEEKS - 8
    for i in range(3):
        dp = np.round(np.diff(prices[i, :n_train]), 4)
        dq = np.diff(weekly[i, :n_train])
        ok = np.isfinite(dp)
        expected = spearmanr(dp[ok], dq[ok]).statistic
        assert table.correlation[i] == pytest.approx(expected, abs=1e-9)


def test_constant_price_gives_no_correlation():
    table = build_table(_market(np.full((1, N_WEEKS), 2.0)))
    assert np.isnan(table.correlation[0])
    assert all(len(table.group_ids(g)) == 0 for g in GROUPS)


def test_spearman_rows_with_ties_and_missing_values():
    a = np.array([[1.0, 0.0, 0.0, 2.0, np.nan, -1.0], [1.0, 2.0, np.nan, np.nan, np.nan, 3.0]])
    b = np.array([[3.0, 1.0, 2.0, 0.0, 9.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    r = spearman_rows(a, b)
    ok = np.isfinite(a[0])
    assert r[0] == pytest.approx(spearmanr(a[0, ok], b[0, ok]).statistic)
    assert r[1] == pytest.approx(1.0)
    assert np.isnan(spearman_rows(a[1:], b[1:], min_pairs=4)[0])


def _table_with(correlation: list[float]) -> RetailTable:
    n = len(correlation)
    return RetailTable(
        [f"i{k}" for k in range(n)],
        np.zeros((n, 13), np.float32),
        np.zeros((n, 4), np.float32),
        np.zeros(n, np.float32),
        np.arange(n, dtype=np.int32),
        np.zeros(n, np.int32),
        np.array(correlation),
        20,
    )


def test_groups_are_strict_thresholds_and_nested():
    table = _table_with([-0.35, -0.3, -0.25, -0.2, -0.15, -0.1, 0.0, 0.2, 0.25, 0.31, np.nan])
    assert table.group_ids("NEG0.3").tolist() == [0]
    assert table.group_ids("NEG0.2").tolist() == [0, 1, 2]
    assert table.group_ids("NEG0.1").tolist() == [0, 1, 2, 3, 4]
    assert table.group_ids("POS0.2").tolist() == [8, 9]
    assert table.group_ids("POS0.3").tolist() == [9]
    with pytest.raises(ValueError, match="unknown group"):
        table.group_ids("NEG0.5")


def test_group_split_standardizes_with_training_statistics():
    rng = np.random.default_rng(1)
    prices = np.round(rng.uniform(1, 3, (6, N_WEEKS)), 2)
    demand = rng.poisson(np.linspace(1, 8, 6)[:, None], (6, N_WEEKS * 7 + 2)).astype(np.float32)
    table = build_table(_market(prices, demand))
    table.correlation[:] = [-0.5, -0.5, -0.5, 0.5, 0.5, 0.0]
    split = group_split(table, "NEG0.3")
    x_train = table.features[table.rows("NEG0.3", "train")].astype(np.float64)
    assert np.allclose(split.mean, x_train.mean(axis=0))
    assert split.train[0].mean(dim=0).abs().max() < 1e-4
    assert np.allclose(split.test[1].numpy()[:, 0], table.target[table.rows("NEG0.3", "test")])
    assert split.test[0].shape == (12, 13)  # 3 ids x 4 test weeks
    other = group_split(table, "POS0.3", stats=split.stats, aux=True)
    assert other.train[0].shape[1] == 13 + 4
    raw = table.features[table.rows("POS0.3", "val")]
    assert np.allclose(other.val[0].numpy()[:, :13], (raw - split.mean) / split.std, atol=1e-5)


def test_bad_markets_are_rejected():
    with pytest.raises(ValueError, match="7 consecutive days"):
        Market(["a"], np.ones((1, 20)), np.repeat(np.arange(3), 7)[:20], np.ones((1, 3)))
    with pytest.raises(ValueError, match="prices must be > 0"):
        _market(np.zeros((1, N_WEEKS)))
    with pytest.raises(ValueError, match="must agree"):
        Market(["a", "b"], np.ones((1, 14)), np.repeat(np.arange(2), 7), np.ones((1, 2)))
    with pytest.raises(ValueError, match="refers to week 2"):
        Market(["a"], np.ones((1, 21)), np.repeat(np.arange(3), 7), np.ones((1, 2)))
    with pytest.raises(ValueError, match="full weeks"):
        build_table(Market(["a"], np.ones((1, 56)), np.repeat(np.arange(8), 7), np.ones((1, 8))))
