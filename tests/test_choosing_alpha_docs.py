"""docs/choosing-alpha.md and `dc.select_alpha`'s docstring state the metric order and the
tie-breaks that the code follows."""

import re
from pathlib import Path

import deepctrl as dc
from deepctrl.core.alpha_selection import ERROR_METRICS
from deepctrl.tabular.alpha_choice import keep_rule_alpha, min_error_alpha

PAGE = Path(__file__).resolve().parents[1] / "docs" / "choosing-alpha.md"
TIED = {"alpha": [0.0, 0.5, 1.0], "mse": [3.0, 1.0, 1.0], "verification_ratio": [0.5, 0.995, 1.0]}
"""Alphas 0.5 and 1.0 tie on error, and both reach a verification goal of 0.99."""


def flat(text):
    return " ".join(text.split())


def test_the_guide_lists_the_metrics_select_alpha_tries_in_their_order():
    used = re.search(r"first error metric of the table is used \(([^;)]*)", flat(PAGE.read_text()))
    assert used is not None
    assert tuple(re.findall(r"`(\w+)`", used.group(1))) == ERROR_METRICS
    assert dc.select_alpha({"alpha": [0, 1], "mae": [1, 2], "poisson": [2, 1]}) == 1.0


def test_ties_break_as_the_guide_and_the_docstring_say():
    assert dc.select_alpha(TIED, metric="mse") == 0.5
    assert dc.select_alpha(TIED, min_verification=0.99, metric="mse") == 0.5
    assert min_error_alpha(TIED, "mse") == 0.5
    assert keep_rule_alpha(TIED, "mse") == keep_rule_alpha(TIED, "mse", 0.99) == 1.0
    page = flat(PAGE.read_text())
    assert "When several alphas tie on the metric, the smallest of them is taken." in page
    assert "reaches 0.99 (the largest of them, the stronger rule, when several tie" in page
    doc = flat(dc.select_alpha.__doc__)
    assert "When several alphas tie on `metric`, the smallest is taken" in doc
    assert "min_verification=...)`) takes the largest, the stronger rule." in doc
    assert "as the table estimators take)" not in doc
