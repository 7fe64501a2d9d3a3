"""The retail price rule: raw-unit relative perturbation, and the recomputing variant."""

import numpy as np
import pytest
import torch

from deepctrl.core.rules import Context
from deepctrl.paper.datasets.retail import Market, build_table, group_split
from deepctrl.paper.datasets.retail_rules import RecomputedPriceRule, price_rule

N_WEEKS = 45


def _market(prices):
    n_ids = prices.shape[0]
    day = np.arange(N_WEEKS * 7)
    demand = np.random.default_rng(0).poisson(3.0, (n_ids, len(day))).astype(np.float32)
    return Market([f"i{k}" for k in range(n_ids)], demand, day // 7, prices)


@pytest.fixture(scope="module")
def setup():
    rng = np.random.default_rng(5)
    prices = np.round(
        2 + rng.choice([0.0, 0.0, -0.4, 0.5], (3, N_WEEKS)).cumsum(axis=1).clip(-1, 3), 2
    ).astype(np.float32)
    prices[2, :33] = np.nan
    market = _market(prices)
    table = build_table(market)
    table.correlation[:] = -0.5
    return market, table


def test_default_rule_moves_only_the_raw_price_up_to_ten_percent(setup):
    _, table = setup
    split = group_split(table, "NEG0.3")
    rule = price_rule(split)
    x = split.test[0]
    x_p = rule.perturb(x, torch.Generator().manual_seed(0))
    raw = x[:, 0].double() * split.std[0] + split.mean[0]
    raw_p = x_p[:, 0].double() * split.std[0] + split.mean[0]
    change = (raw_p - raw) / raw
    assert (change >= -1e-6).all() and (change <= 0.1 + 1e-6).all() and change.max() > 0.05
    assert torch.equal(x_p[:, 1:], x[:, 1:])  # the other price features stay as they are


def test_recomputed_rule_matches_rebuilding_the_table(setup):
    market, table = setup
    split = group_split(table, "NEG0.3", aux=True)
    rule = price_rule(split, recompute=True)
    assert isinstance(rule, RecomputedPriceRule)
    rows = table.rows("NEG0.3", "train")[-30:]  # include weeks with price steps
    x = split.train[0][-30:]
    x_p = rule.perturb(x, torch.Generator().manual_seed(1))
    got = x_p[:, :13].double().numpy() * split.std + split.mean
    assert torch.equal(x_p[:, 13:], x[:, 13:])
    for k, r in enumerate(rows):
        i, w = table.row_id[r], table.row_week[r]
        prices = market.prices.copy()
        prices[i, w] = got[k, 0]
        rebuilt = build_table(Market(market.ids, market.demand, market.week_of_day, prices))
        hit = np.flatnonzero((rebuilt.row_id == i) & (rebuilt.row_week == w))[0]
        np.testing.assert_allclose(got[k], rebuilt.features[hit], rtol=1e-4, atol=1e-5)


def test_recomputed_rule_needs_aux_columns(setup):
    _, table = setup
    split = group_split(table, "NEG0.3")
    rule = RecomputedPriceRule(split.mean, split.std)
    with pytest.raises(ValueError, match="aux columns"):
        rule.perturb(split.train[0])
    with pytest.raises(ValueError, match="cannot be saved"):
        rule.config()


@pytest.mark.parametrize("recompute", [False, True])
def test_satisfied_when_sales_fall(setup, recompute):
    _, table = setup
    split = group_split(table, "NEG0.3", aux=recompute)
    rule = price_rule(split, recompute=recompute)
    x = split.val[0][:3]
    ctx = Context(
        x, torch.tensor([[1.0], [1.0], [1.0]]), rule.perturb(x), torch.tensor([[0.5], [1.0], [1.5]])
    )
    assert rule.satisfied(ctx).tolist() == [True, False, False]
    assert rule.loss(ctx).tolist() == [0.0, 0.0, 0.5]
