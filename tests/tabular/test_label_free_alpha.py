"""Choosing alpha for new rows without their labels: the smallest alpha whose verification
ratio reaches a goal (paper Sec. 4.1 and 4.3), by ``alpha_for_verification`` and
``select_alpha(X, min_verification=...)``."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.exceptions import NotFittedError

import deepctrl as dc
from deepctrl.tabular.alpha_choice import ALPHA_GRID, LABEL_FREE_GRID

FAST = {"max_epochs": 30, "batch_size": 32, "n_seeds": 1, "random_state": 0}


def confounded_table(n: int, seed: int) -> tuple[pd.DataFrame, pd.Series]:
    """Sales that rise with the price (busy days), against the rule 'price lowers sales'."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "size": rng.uniform(0, 1, n)})
    y = X["price"] + 2 * X["size"] + rng.normal(0, 0.2, n)
    return X, y.rename("sales")


@pytest.fixture(scope="module")
def against() -> tuple[dc.DeepCTRLRegressor, pd.DataFrame]:
    """A model whose data path breaks the rule, and new rows without labels."""
    X, y = confounded_table(256, 0)
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")], **FAST).fit(X, y)
    return est, confounded_table(200, 1)[0]


@pytest.fixture(scope="module")
def ratios(against) -> list[float]:
    """The verification ratio at every alpha of the grid, one alpha at a time."""
    est, X_new = against
    return [est.verification_ratio(X_new, alpha=a) for a in LABEL_FREE_GRID]


def test_the_grid_runs_from_0_to_1_5_in_steps_of_0_05():
    assert len(LABEL_FREE_GRID) == 31 and LABEL_FREE_GRID[:3] == [0.0, 0.05, 0.1]
    assert LABEL_FREE_GRID[-1] == 1.5 and LABEL_FREE_GRID[:21] == ALPHA_GRID
    np.testing.assert_allclose(np.diff(LABEL_FREE_GRID), 0.05)


@pytest.mark.parametrize("goal", [0.3, 0.8, 0.95])
def test_the_smallest_alpha_reaching_the_goal_leaves_the_model_unchanged(against, ratios, goal):
    est, X_new = against
    before = est.alpha_
    alpha, ratio = est.alpha_for_verification(X_new, goal)
    i = LABEL_FREE_GRID.index(alpha)
    assert ratios[0] < goal, "the data path should break the rule on these rows"
    assert ratio == pytest.approx(ratios[i]) and ratios[i] >= goal
    assert all(r < goal for r in ratios[:i])  # every smaller alpha falls short
    assert 0 < alpha <= 1.5 and est.alpha_ == before


def test_select_alpha_without_labels_sets_alpha_and_predict_uses_it(against, ratios):
    est, X_new = against
    saved = est.alpha_
    try:
        alpha = est.select_alpha(X_new, min_verification=0.9)
        i = LABEL_FREE_GRID.index(alpha)
        assert ratios[i] >= 0.9 and all(r < 0.9 for r in ratios[:i])
        assert est.alpha_ == alpha and est.get_params()["alpha"] == "auto"
        np.testing.assert_array_equal(est.predict(X_new), est.predict(X_new, alpha=alpha))
        assert est.select_alpha(X_new, None, 0.9) == alpha  # y_val given positionally as None
    finally:
        est.alpha_ = saved


def test_a_goal_no_alpha_reaches_is_refused_with_the_highest_ratio(against):
    est, X_new = against
    saved = est.alpha_
    grid = [0.0, 0.25, 0.5]
    found = [est.verification_ratio(X_new, alpha=a) for a in grid]
    goal = 0.9
    assert max(found) < goal
    best = max(found)
    at = grid[found.index(best)]
    expected = (
        f"no alpha in 0..0.5 reaches verification ratio 0.9 on these rows "
        f"(highest {best:.3f} at alpha {at:g})"
    )
    with pytest.raises(ValueError, match=f"^{re.escape(expected)}$"):
        est.alpha_for_verification(X_new, goal, alphas=grid)
    with pytest.raises(ValueError, match=re.escape(expected)):
        est.select_alpha(X_new, min_verification=goal, alphas=grid)
    assert est.alpha_ == saved  # a refusal changes nothing


def test_a_grid_of_its_own_is_searched_in_alpha_order(against, ratios):
    est, X_new = against
    reached = [a for a, r in zip(LABEL_FREE_GRID, ratios, strict=True) if r >= 0.5]
    alpha, _ = est.alpha_for_verification(X_new, 0.5, alphas=[1.5, reached[0], 1.0])
    assert alpha == reached[0]


def test_labelled_select_alpha_keeps_the_rule_or_takes_the_lowest_error(against):
    est = against[0]
    saved = est.alpha_
    X, y = confounded_table(200, 1)
    try:
        table = est.sweep(X, y, alphas=ALPHA_GRID)  # the labelled grid stops at 1
        assert (
            est.select_alpha(X, y, objective="min_error")
            == table.loc[table["mse"].idxmin(), "alpha"]
        )
        kept = table[table["verification_ratio"] >= 0.99]
        expected = (
            kept.loc[kept["mse"].idxmin(), "alpha"]
            if len(kept)
            else table.loc[table["verification_ratio"].idxmax(), "alpha"]
        )
        assert est.select_alpha(X, y) == expected
        reached = table[table["verification_ratio"] >= 0.5]
        assert (
            est.select_alpha(X, y, min_verification=0.5)
            == reached.loc[reached["mse"].idxmin(), "alpha"]
        )
        with pytest.raises(ValueError, match="objective='min_error' and min_verification exclude"):
            est.select_alpha(X, y, min_verification=0.5, objective="min_error")
    finally:
        est.alpha_ = saved


@pytest.mark.parametrize("goal", [0, -0.1, 1.01, float("nan"), True, "0.9"])
def test_the_goal_must_be_in_0_to_1(against, goal):
    est, X_new = against
    message = "^min_verification must be a number greater than 0 and at most 1, got"
    with pytest.raises(ValueError, match=message):
        est.alpha_for_verification(X_new, goal)
    with pytest.raises(ValueError, match=message):
        est.select_alpha(X_new, min_verification=goal)


def test_other_misuse_is_one_clear_line(against):
    est, X_new = against
    with pytest.raises(
        ValueError,
        match=r"^select_alpha without labels \(y_val=None\) needs "
        "min_verification",
    ):
        est.select_alpha(X_new)
    X, y = confounded_table(64, 2)
    plain = dc.DeepCTRLRegressor(max_epochs=2, n_seeds=1, random_state=0).fit(X, y)
    with pytest.raises(ValueError, match="^this model has no rules, so it has no verification"):
        plain.alpha_for_verification(X, 0.9)
    with pytest.raises(ValueError, match="^this model has no rules"):
        plain.select_alpha(X, min_verification=0.9)
    with pytest.raises(NotFittedError):
        dc.DeepCTRLRegressor(rules=[dc.Monotonic("price", "decreasing")]).alpha_for_verification(
            X, 0.9
        )


def test_the_rows_order_changes_no_ratio_sweep_or_chosen_alpha(against):
    est, X_new = against
    y_new = X_new["price"] + 2 * X_new["size"]
    base = est.sweep(X_new, y_new)
    goal = 0.9
    alpha = est.alpha_for_verification(X_new, goal)
    for seed in range(4):
        order = np.random.default_rng(seed).permutation(len(X_new))
        shuffled, y_shuffled = X_new.iloc[order], y_new.iloc[order]
        pd.testing.assert_frame_equal(est.sweep(shuffled, y_shuffled), base, rtol=1e-12)
        assert est.verification_ratio(shuffled, 0.5) == est.verification_ratio(X_new, 0.5)
        assert est.alpha_for_verification(shuffled, goal) == alpha


def test_select_alpha_says_when_no_alpha_keeps_the_rule(against):
    est, X_new = against
    y_new = X_new["price"] + 2 * X_new["size"]
    table = est.sweep(X_new, y_new, [0.0, 0.1])
    assert max(table["verification_ratio"]) < 0.99  # the data path breaks the rule
    best = table.sort_values(["verification_ratio", "mse"], ascending=[False, True]).iloc[0]
    said = (
        "no alpha reaches verification 0.99 on these rows, so the one that keeps the rule best "
        f"is chosen: alpha {best['alpha']:g}, verification {best['verification_ratio']:.3f}"
    )
    with pytest.warns(UserWarning, match=re.escape(said)):
        assert est.select_alpha(X_new, y_new, alphas=[0.0, 0.1]) == best["alpha"]
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="no alpha reaches")
        est.select_alpha(X_new, y_new)  # the default grid reaches 0.99 at alpha 1
