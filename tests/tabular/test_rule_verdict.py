"""Rule-test statistics against hand-computed values, and every branch of the verdict."""

import math

import numpy as np
import pytest

from deepctrl.tabular.rule_verdict import (
    Thresholds,
    _t_interval,
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
    s = segment_statistics(E, V, ALPHAS)
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
    # mean verification 0.953 at alpha 0.5: the rule holds there, at no cost over the best
    assert s["alpha_rule_holds"] == 0.5 and s["cost_rule_holds"] == 0.0


def test_rule_never_holding_is_costed_at_alpha_one():
    E = np.array([[1.0, 1.5, 2.0], [1.0, 1.4, 2.2]])
    V = np.array([[0.0, 0.3, 0.8], [0.0, 0.4, 0.9]])
    s = segment_statistics(E, V, ALPHAS)
    assert s["alpha_rule_holds"] is None
    assert s["cost_rule_holds"] == pytest.approx(1.1) == s["enforcement_cost"]


def test_a_fold_that_judged_no_row_leaves_the_verdict_to_the_others():
    E = np.array([[1.0, 1.5, 2.0], [1.1, 1.6, 2.1], [1.0, 1.4, 2.2], [1.2, 1.5, 2.0]])
    V = np.array([[0.0, 0.6, 1.0], [0.1, 0.7, 1.0], [np.nan] * 3, [0.0, 0.5, 1.0]])
    s = segment_statistics(E, V, ALPHAS)
    assert s["folds"] == 4 and s["folds_judged"] == 3
    assert s["verification_alpha0"] == pytest.approx(0.1 / 3)
    assert s["alpha_rule_holds"] == 1.0  # the judged folds' mean reaches 1 there
    assert judge(s)[0] == "contradicted"
    V[[0, 1], :] = np.nan  # one fold left: no interval
    verdict, reason = judge(segment_statistics(E, V, ALPHAS))
    assert verdict == "inconclusive" and reason.startswith("the rule judged rows in 1 of 4 folds")


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
        (_stats(0.5, [0.1, 0.9], 0.3, [0.1, 0.5]), "inconclusive", "folds disagree"),
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


def test_too_few_rows_names_the_count():
    assert too_few_rows(1, 50) == ("inconclusive", "1 row: too few to judge (50 needed)")
