"""Synthetic retail market: deterministic, M5 layout, all five groups populated."""

import numpy as np
import pytest

from deepctrl.paper.datasets.retail import GROUPS, build_table
from deepctrl.paper.datasets.retail_synthetic import report_groups, synthetic_market


@pytest.fixture(scope="module")
def market():
    sm = synthetic_market(seed=0, n_items=400)
    return sm, build_table(sm.market)


def test_deterministic_per_seed():
    a, b = synthetic_market(seed=3, n_items=30), synthetic_market(seed=3, n_items=30)
    np.testing.assert_array_equal(a.market.demand, b.market.demand)
    np.testing.assert_array_equal(a.market.prices, b.market.prices)
    c = synthetic_market(seed=4, n_items=30)
    assert not np.array_equal(a.market.demand, c.market.demand)


def test_m5_layout_and_split(market):
    sm, table = market
    assert sm.market.demand.shape == (400, 281 * 7 + 2)
    assert (sm.market.week_of_day[-2:] == -1).all()  # the partial week
    assert (table.val_start, table.test_start) == (273, 277)
    prices = sm.market.prices
    released = np.isfinite(prices).argmax(axis=1)
    weekly = sm.market.demand[:, : 281 * 7].reshape(400, 281, 7).sum(axis=2)
    before = np.arange(281)[None, :] < released[:, None]
    assert weekly[before].sum() == 0  # no sales before release
    assert np.isfinite(prices[:, -1]).all()


def test_all_groups_have_enough_items(market):
    _, table = market
    sizes = table.group_sizes()
    assert set(sizes) == set(GROUPS)
    for group, size in sizes.items():
        assert size["ids"] >= 15, (group, size)
        assert size["test"] == 4 * size["ids"]  # every item is on sale in the test weeks
    assert sizes["NEG0.1"]["ids"] > sizes["NEG0.2"]["ids"] > sizes["NEG0.3"]["ids"]


def test_groups_follow_elasticity(market):
    sm, table = market
    rows = {r["group"]: r for r in report_groups(sm, table)}
    assert rows["NEG0.3"]["median_elasticity"] > rows["NEG0.1"]["median_elasticity"] > 1
    assert rows["POS0.2"]["median_elasticity"] < -1
    r, e = table.correlation, sm.elasticity
    assert np.nanmean(r[e > 2]) < -0.2 < 0.2 < np.nanmean(r[e < -2])


def test_demand_scale_matches_m5_magnitudes(market):
    _, table = market
    # weekly demand / 100: items selling a few units a day, as in M5 (paper MAE ~ 0.045)
    assert 0.05 < float(np.median(table.target)) < 0.3


def test_bad_sizes():
    with pytest.raises(ValueError, match="n_items >= 1"):
        synthetic_market(n_items=0)
