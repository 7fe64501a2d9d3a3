"""The synthetic cardio cohort: format, ranges, determinism and the discovered threshold."""

from __future__ import annotations

import numpy as np
import pytest

from deepctrl.paper.datasets.cardio import (
    discover_threshold,
    load_cardio_csv,
    prepare,
    usual_mask,
    validate_cardio,
)
from deepctrl.paper.datasets.cardio_synthetic import COLUMNS, synthetic_cohort, write_cardio_csv


@pytest.fixture(scope="module")
def cohort():
    return synthetic_cohort(70_000, seed=0)


def test_columns_ranges_and_codes(cohort):
    assert list(cohort.columns) == list(COLUMNS) and len(cohort) == 70_000
    validate_cardio(cohort)
    years = cohort["age"] / 365.25
    assert years.min() >= 29.5 and years.max() <= 65.0
    assert cohort["height"].between(140, 205).all()
    assert cohort["weight"].between(40, 190).all()
    assert cohort["ap_hi"].between(85, 240).all() and cohort["ap_lo"].between(50, 150).all()
    assert (cohort["ap_hi"] > cohort["ap_lo"]).mean() > 0.99
    assert 0.6 < (cohort["gender"] == 1).mean() < 0.7
    assert 0.45 < cohort["cardio"].mean() < 0.55
    # most pressures are written to 10 mmHg, 120 being the most common reading
    assert (cohort["ap_hi"] % 10 == 0).mean() > 0.75
    assert cohort["ap_hi"].mode()[0] == 120


def test_threshold_and_groups_like_the_real_file(cohort):
    threshold = discover_threshold(cohort)
    assert threshold == 129.5
    high = cohort["ap_hi"] > threshold
    assert cohort["cardio"][high].mean() > 0.7
    unusual = int((~usual_mask(cohort, threshold)).sum())
    assert 18_000 < unusual < 23_000  # real file: 20,027


def test_deterministic_per_seed():
    a, b, c = (synthetic_cohort(500, seed=s) for s in (7, 7, 8))
    assert a.equals(b)
    assert not a.equals(c)


def test_bp_effect_controls_pressure_risk():
    def risk_gap(bp_effect: float) -> float:
        f = synthetic_cohort(20_000, seed=1, bp_effect=bp_effect)
        return f["cardio"][f["ap_hi"] >= 140].mean() - f["cardio"][f["ap_hi"] <= 120].mean()

    none, default, strong = risk_gap(0.0), risk_gap(0.8), risk_gap(2.0)
    assert none < default < strong
    assert default > 0.3 and strong > 0.5
    # with no pressure effect only the shared causes (age, weight) link pressure and risk
    assert none < 0.2


def test_argument_errors():
    with pytest.raises(ValueError, match="at least one patient"):
        synthetic_cohort(0)
    with pytest.raises(ValueError, match="noise must be >= 0"):
        synthetic_cohort(10, noise=-1.0)


def test_csv_round_trip(tmp_path):
    frame = synthetic_cohort(300, seed=2)
    path = write_cardio_csv(frame, tmp_path / "cardio_train.csv")
    back = load_cardio_csv(path)
    np.testing.assert_array_equal(back.to_numpy(dtype=float), frame.to_numpy(dtype=float))


def test_full_pipeline_offline(cohort):
    task = prepare(cohort)
    assert task.threshold == 129.5
    counts = {k: d.counts() for k, d in task.targets.items()}
    assert [counts[k]["usual"] for k in counts] == [20000, 6000, 4000]
    assert all(c["unusual"] == 6009 for c in counts.values())
    assert [round(c["usual_ratio"], 2) for c in counts.values()] == [0.77, 0.5, 0.4]
    assert [len(task.train.y), len(task.val.y), len(task.test.y)] == [14017, 2002, 4006]
