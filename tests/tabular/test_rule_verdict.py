"""Rule-test statistics against hand-computed values, and every branch of the verdict."""

import math

import numpy as np
import pytest

from deepctrl.tabular.rule_verdict import (
    Thresholds,
    _t_interval,
    binomial_interval,
    judge,
    segment_statistics,
    too_few_rows,
)

ALPHAS = [0.0, 0.5, 1.0]


def test_t_interval_is_the_90_percent_student_interval():
    mean, low, high = _t_interval(np.array([1.0, 2.0, 3.0]))
    half = 2.919986 / math.sqrt(3)  # t(0.95, 2 degrees of freedom) x sd 1 / sqrt(3)
    assert mean == 2.0
    assert low == pytest.approx(2 - half, abs=1e-5) and high == pytest.approx(2 + half, abs=1e-5)
    assert _t_interval(np.array([4.0]))[1:] == (-math.inf, math.inf)


def test_statistics_pair_alphas_within_folds():
    E = np.array([[1.0, 0.9, 1.2], [0.8, 1.0, 1.3], [1.0, 0.8, 1.1]])
    V = np.array([[0.4, 0.9, 1.0], [0.6, 0.97, 1.0], [0.5, 0.99, 1.0]])
    s = segment_statistics(E, V, ALPHAS, [1000, 1000, 1000])
    assert s["best_alpha"] == 0.5  # mean errors 0.933, 0.9, 1.2
    # alpha 0 minus best per fold: 0.1, -0.2, 0.2 (sd 0.208): not above zero, so plausible;
    # alpha 1 minus best: 0.3, 0.3, 0.3: clearly worse
    assert s["best_alpha_interval"] == [0.0, 0.5]
    assert s["enforcement_cost"] == pytest.approx(0.3)
    assert s["enforcement_cost_interval"] == pytest.approx([0.3, 0.3])
    assert s["error_alpha0"] == pytest.approx(2.8 / 3) and s["error_alpha1"] == pytest.approx(1.2)
    assert s["verification_alpha0"] == pytest.approx(0.5)
    lo, hi = s["verification_alpha0_interval"]
    assert lo == pytest.approx(0.5 - 2.919986 * 0.1 / math.sqrt(3), abs=1e-5)
    assert hi == pytest.approx(0.5 + 2.919986 * 0.1 / math.sqrt(3), abs=1e-5)
    # 1,500 of 3,000 rows: the folds' spread (sd 0.1) is far above the rows' (0.016)
    assert s["judged_rows"] == 3000 and s["followed_rows_alpha0"] == 1500
    # mean verification 0.953 at alpha 0.5: the rule holds there, at no cost over the best
    assert s["alpha_rule_holds"] == 0.5 and s["cost_rule_holds"] == 0.0


def test_rule_never_holding_is_costed_at_alpha_one():
    E = np.array([[1.0, 1.5, 2.0], [1.0, 1.4, 2.2]])
    V = np.array([[0.0, 0.3, 0.8], [0.0, 0.4, 0.9]])
    s = segment_statistics(E, V, ALPHAS, [50, 50])
    assert s["alpha_rule_holds"] is None
    assert s["cost_rule_holds"] == pytest.approx(1.1) == s["enforcement_cost"]


def test_a_fold_that_judged_no_row_leaves_the_verdict_to_the_others():
    E = np.array([[1.0, 1.5, 2.0], [1.1, 1.6, 2.1], [1.0, 1.4, 2.2], [1.2, 1.5, 2.0]])
    V = np.array([[0.0, 0.6, 1.0], [0.1, 0.7, 1.0], [np.nan] * 3, [0.0, 0.5, 1.0]])
    s = segment_statistics(E, V, ALPHAS, [100, 100, 0, 100])
    assert s["folds"] == 4 and s["folds_judged"] == 3
    assert s["judged_rows"] == 300 and s["followed_rows_alpha0"] == 10
    assert s["verification_alpha0"] == pytest.approx(0.1 / 3)
    assert s["alpha_rule_holds"] == 1.0  # the judged folds' mean reaches 1 there
    assert judge(s)[0] == "contradicted"
    V[[0, 1], :] = np.nan  # one fold left: no interval
    verdict, reason = judge(segment_statistics(E, V, ALPHAS, [100, 100, 0, 100]))
    assert verdict == "inconclusive" and reason.startswith("the rule judged rows in 1 of 4 folds")


def test_the_exact_binomial_interval():
    assert binomial_interval(6, 8) == pytest.approx((0.400311, 0.953611), abs=1e-6)
    assert binomial_interval(0, 20) == pytest.approx((0.0, 1 - 0.05 ** (1 / 20)))
    assert binomial_interval(20, 20) == pytest.approx((0.05 ** (1 / 20), 1.0))


def test_equal_fold_ratios_of_a_few_rows_give_no_confident_verdict():
    # 2 folds of 4 held-out rows, 3 of 4 following the rule in each: the folds' sd is 0,
    # which made the interval [0.75, 0.75] and the verdict consistent
    E = np.array([[1.0, 1.0, 1.1], [1.2, 1.2, 1.3]])
    V = np.array([[0.75, 1.0, 1.0], [0.75, 1.0, 1.0]])
    s = segment_statistics(E, V, ALPHAS, [4, 4])
    share = 8 / 12  # (6 + 2) / (8 + 4); the rows' sd is sqrt(share (1 - share) / 4) per fold
    half = 6.313752 * math.sqrt(share * (1 - share) / 4) / math.sqrt(2)
    assert 0.75 - half < 0 and 0.75 + half > 1
    assert s["verification_alpha0_interval"] == [0.0, 1.0]
    verdict, reason = judge(s)
    assert verdict == "inconclusive"
    assert "its interval is too wide to tell (0% to 100%): too few judged rows" in reason
    assert s["judged_rows"] == 8 and s["followed_rows_alpha0"] == 6
    # all 8 rows following, at no cost: neither route to consistent rests on two folds
    V[:, 0] = 1.0
    s = segment_statistics(E, V, ALPHAS, [4, 4])
    share = 10 / 12
    low = 1 - 6.313752 * math.sqrt(share * (1 - share) / 4) / math.sqrt(2)
    assert s["verification_alpha0_interval"] == pytest.approx([low, 1.0], abs=1e-5)
    assert low == pytest.approx(0.1681, abs=1e-4) and judge(s)[0] == "inconclusive"


def test_many_rows_all_following_give_a_narrow_interval_short_of_one():
    E = np.tile([1.0, 1.1, 1.3], (5, 1))
    V = np.tile([1.0, 1.0, 1.0], (5, 1))
    s = segment_statistics(E, V, ALPHAS, [120] * 5)
    # 600 of 600 rows: t(0.95, 4) x the rows' sd at the share 602 / 604, a little wider
    # than the exact binomial bound 0.05 ** (1 / 600) = 0.99502
    share = 602 / 604
    half = 2.131847 * math.sqrt(share * (1 - share) / 600)
    assert 1 - half < 0.05 ** (1 / 600)
    assert s["verification_alpha0_interval"] == pytest.approx([1 - half, 1.0], abs=1e-6)
    verdict, reason = judge(s)
    assert verdict == "consistent"
    assert reason.endswith(
        "on 100% of held-out rows, on average over the folds (99% to 100% at 90% confidence)"
    )
    V[:, 0] = 0.0
    lo, hi = segment_statistics(E, V, ALPHAS, [120] * 5)["verification_alpha0_interval"]
    assert lo == 0.0 and hi == pytest.approx(half, abs=1e-6)


def test_the_exact_interval_bounds_many_folds_of_few_rows():
    # 10 folds of 2 rows, all following: the rows' sd gives 0.80, the exact binomial 0.74
    E = np.tile([1.0, 1.1, 1.3], (10, 1))
    s = segment_statistics(E, np.ones((10, 3)), ALPHAS, [2] * 10)
    share = 22 / 24
    assert 1 - 1.833113 * math.sqrt(share * (1 - share) / 20) > 0.05 ** (1 / 20)
    assert s["verification_alpha0_interval"] == pytest.approx([0.05 ** (1 / 20), 1.0])
    assert judge(s)[0] == "consistent"  # 0.741 >= 0.7


def test_judged_counts_must_match_the_folds():
    E, V = np.ones((2, 3)), np.array([[0.5, 1.0, 1.0], [np.nan] * 3])
    with pytest.raises(ValueError, match=r"judged must hold one row count per fold \(2\)"):
        segment_statistics(E, V, ALPHAS, [10])
    with pytest.raises(ValueError, match="at least 1 where a fold has a verification ratio"):
        segment_statistics(E, V, ALPHAS, [0, 0])
    assert segment_statistics(E, V, ALPHAS, [10, 0])["judged_rows"] == 10


def _stats(v0, v0_interval, cost, cost_interval, error_best=1.0, holds=0.5):
    return {
        "verification_alpha0": v0,
        "verification_alpha0_interval": v0_interval,
        "cost_rule_holds": cost,
        "cost_rule_holds_interval": cost_interval,
        "error_best": error_best,
        "alpha_rule_holds": holds,
    }


@pytest.mark.parametrize(
    ("stats", "verdict", "words"),
    [
        (_stats(0.97, [0.9, 1.0], 0.5, [0.3, 0.7]), "consistent", "follows the rule on 97%"),
        (_stats(0.6, [0.55, 0.65], 0.005, [-0.01, 0.009]), "consistent", "within 1%"),
        # no effect on a noisy target: enforcing costs nothing, the data lean neither way
        (_stats(0.5, [0.4, 0.6], 0.005, [-0.01, 0.009]), "inconclusive", "no clear direction"),
        # a reversed effect buried in noise: cheap to enforce, but the data lean against it
        (
            _stats(0.16, [0.05, 0.27], 0.005, [-0.01, 0.009]),
            "inconclusive",
            "the data lean against the rule, short of contradicting it",
        ),
        (
            _stats(0.62, [0.56, 0.68], 0.3, [0.1, 0.5]),
            "inconclusive",
            "the data lean towards the rule, short of agreeing with it",
        ),
        (_stats(0.05, [0.0, 0.1], 0.5, [0.3, 0.7]), "contradicted", "beyond the noise"),
        (_stats(0.05, [0.0, 0.1], 0.05, [-0.1, 0.2]), "inconclusive", "not distinguishable"),
        (_stats(0.5, [0.1, 0.9], 0.3, [0.1, 0.5]), "inconclusive", "too wide to tell (10% to 90%)"),
        (_stats(0.55, [0.45, 0.65], 0.3, [0.1, 0.5]), "inconclusive", "no clear direction"),
        (
            _stats(float("nan"), [float("nan"), float("nan")], 0.3, [0.1, 0.5]),
            "inconclusive",
            "the rule judged none of the held-out rows (a threshold rule judges only the rows",
        ),
    ],
)
def test_every_verdict_branch(stats, verdict, words):
    got, reason = judge(stats)
    assert got == verdict
    assert words in reason


def test_tolerance_scales_with_the_error_and_thresholds_are_parameters():
    cheap = _stats(0.6, [0.55, 0.65], 0.05, [0.0, 0.09], error_best=10.0)
    assert judge(cheap)[0] == "consistent"  # 0.09 <= 1 % of 10
    assert judge(cheap, Thresholds(tolerance=0.005))[0] == "inconclusive"
    leaning = _stats(0.8, [0.65, 0.95], 1, [0.5, 1.5])
    assert judge(leaning)[0] == "inconclusive"
    assert judge(leaning, Thresholds(agree=0.6))[0] == "consistent"
    half = judge(
        _stats(0.6, [0.55, 0.65], 0.03, [0.0, 0.04], error_best=10.0), Thresholds(0.7, 0.2, 0.005)
    )
    assert (
        half == ("consistent", half[1]) and "costs +0.3% error, within 0.5% of the best" in half[1]
    )
    free = judge(_stats(0.6, [0.55, 0.65], 0.0, [0.0, 0.0], error_best=0.0))
    assert "costs +0.0% error, within 1% of the best" in free[1]  # no +inf% of a zero error


def test_too_few_rows_names_the_count():
    assert too_few_rows(1, 50) == ("inconclusive", "1 row: too few to judge (50 needed)")
