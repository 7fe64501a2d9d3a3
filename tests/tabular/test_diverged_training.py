"""A table estimator whose networks' training goes NaN or infinite: a network that did not
train is left out of the model (or the fit refused), never averaged in or saved."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc


def table(n: int = 600) -> tuple[pd.DataFrame, pd.Series]:
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"a": rng.normal(size=n), "b": rng.normal(size=n)})
    return X, -2 * X["a"] + X["b"] ** 2 + 0.1 * rng.normal(size=n)


RULE = [dc.Monotonic("a", "decreasing")]


def test_networks_that_did_not_train_are_left_out_with_a_warning(tmp_path):
    X, y = table()
    est = dc.DeepCTRLRegressor(rules=RULE, rho=3e38, max_epochs=5, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    said = [str(w.message) for w in caught]
    left_out = [re.match(r"(\d) of 5 networks did not train", m) for m in said]
    count = next(int(m.group(1)) for m in left_out if m)
    assert 0 < count < 5  # this seed: some networks failed, not all
    assert len(est.models_) == len(est.best_epochs_) == len(est.rho_) == 5 - count
    assert min(est.best_epochs_) > 0  # none kept its initial weights
    assert not any(m.startswith("seed(s)") for m in said)  # the core's words, not a table's
    assert np.isfinite(est.predict(X)).all()
    again = dc.DeepCTRLRegressor.load(est.save(tmp_path / "kept.deepctrl"))
    np.testing.assert_array_equal(again.predict(X), est.predict(X))


def test_a_fit_whose_every_network_went_nan_is_refused_without_validation_rows():
    X, y = table()
    est = dc.DeepCTRLRegressor(
        rules=RULE, learning_rate=1e4, validation_fraction=0.0, max_epochs=5, n_seeds=2
    )
    with (
        warnings.catch_warnings(),
        pytest.raises(
            ValueError, match=r"^no network trained \(their training loss went NaN or infinite\)"
        ),
    ):
        warnings.simplefilter("ignore")
        est.fit(X, y)
    assert not hasattr(est, "models_")


def test_cross_fitting_refuses_a_fold_without_a_trained_network():
    X, y = table()
    est = dc.DeepCTRLRegressor(
        rules=RULE, rho=3e38, validation="cross_fit", max_epochs=5, random_state=0
    )
    with (
        warnings.catch_warnings(),
        pytest.raises(ValueError, match=r"(no network|the networks of folds \[[\d, ]+\]) trained"),
    ):
        warnings.simplefilter("ignore")
        est.fit(X, y)


def test_a_target_whose_squares_overflow_is_refused_naming_its_row():
    X, y = table(50)
    y.iloc[7] = -1e200
    with pytest.raises(ValueError, match=r"^y has a value too large, -1e\+200 at row 7: its"):
        dc.DeepCTRLRegressor(max_epochs=1).fit(X, y.to_numpy())
