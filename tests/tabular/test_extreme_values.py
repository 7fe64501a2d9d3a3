"""Values a model cannot use well: one training value that dwarfs the others, and values
to score far outside the training range or too large once scaled."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from deepctrl.tabular.encoding import TableEncoder


def test_one_training_value_dwarfing_the_others_is_named():
    prices = np.r_[np.linspace(2, 8, 1000), 1e30]
    dwarfed = (
        r"column 'price': its value 1e\+30 dwarfs its other values \(2.06 to 7.95 for all but 20 "
    )
    with pytest.warns(UserWarning, match=dwarfed):
        TableEncoder.fit(pd.DataFrame({"price": prices}))


def test_a_column_of_one_value_has_no_value_dwarfing_the_others():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = TableEncoder.fit(pd.DataFrame({"price": [5.0]}))
    assert enc.n_encoded == 1


@pytest.mark.parametrize("n", [3, 50, 80, 100])
def test_one_typo_in_a_small_table_is_named_too(n):
    prices = np.linspace(2, 8, n)
    prices[1] = 1e30
    with pytest.warns(UserWarning, match=r"its value 1e\+30 dwarfs its other .* but [12] of"):
        TableEncoder.fit(pd.DataFrame({"price": prices}))


def test_values_far_outside_the_training_range_are_named_once_per_column():
    enc = TableEncoder.fit(pd.DataFrame({"price": [2.0, 5.0, 8.0], "q": [0.0, 0.5, 1.0]}))
    new = pd.DataFrame({"price": [1e30, 20.0, 14.0, 5.0], "q": [0.5, 0.5, -3.0, 0.5]})
    with pytest.warns(UserWarning) as caught:
        enc.transform(new)
    messages = sorted(str(w.message) for w in caught)
    assert len(messages) == 2
    assert messages[0].startswith("column 'price': 2 rows have a value beyond the training range")
    assert "(2 to 8) by more than its width (up to 1e+30)" in messages[0]
    assert messages[1].startswith("column 'q': 1 row has a value beyond")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc.transform(pd.DataFrame({"price": [14.0, -4.0], "q": [2.0, 0.5]}))


def test_a_value_too_large_once_scaled_names_its_column_and_row():
    enc = TableEncoder.fit(pd.DataFrame({"x": [1.0, 1.0 + 1e-9, 1.0 + 2e-9]}))
    new = pd.DataFrame({"x": [1.0, 1e36]}, index=[7, 9])
    with (
        pytest.raises(ValueError, match=r"column 'x': the value 1e\+36 \(row 9\) is too large"),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        enc.transform(new)


def _target_table(n=400):
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"price": rng.uniform(1, 10, n), "q": rng.normal(size=n)})
    return X, (20 - 0.8 * X["price"] + X["q"]).to_numpy().copy()


def test_a_target_value_dwarfing_the_others_is_named_unless_its_row_weighs_nothing():
    import deepctrl as dc

    X, y = _target_table()
    y[7] *= 1e5  # a typo
    kw = {"max_epochs": 1, "n_seeds": 1, "random_state": 0}
    with pytest.warns(UserWarning, match=r"target 'y': its value 1\.\d+e\+06 dwarfs its other"):
        dc.DeepCTRLRegressor(loss="mae", **kw).fit(X, y)
    weights = np.ones(len(y))
    weights[7] = 0.0  # as if the row were not there
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dc.DeepCTRLRegressor(**kw).fit(X, y, sample_weight=weights)
        sold = np.where(np.arange(len(y)) % 100 == 0, 250.0, 0.0)  # mostly one value
        dc.DeepCTRLRegressor(**kw).fit(X, sold)


def test_a_typo_in_the_target_of_a_small_table_is_named():
    import deepctrl as dc

    X, y = _target_table(80)
    y[3] = 20e5
    with pytest.warns(UserWarning, match=r"target 'y': its value 2e\+06 dwarfs .* all but 1 of"):
        dc.DeepCTRLRegressor(loss="mae", max_epochs=1, n_seeds=1).fit(X, y)


def test_a_tiny_spread_on_a_large_target_is_learned_and_a_tiny_constant_predicted_near_itself():
    import deepctrl as dc

    X, y = _target_table()
    kw = {"max_epochs": 30, "n_seeds": 1, "random_state": 0}
    offset = 1e10 + 1e-3 * (y - y.mean())  # float64 resolves about 1e-6 here
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # not called constant
        est = dc.DeepCTRLRegressor(**kw).fit(X, offset)
    assert est.score(X, offset) > 0.9
    with pytest.warns(UserWarning, match=r"target 'y' is constant \(1e-06\)"):
        flat = dc.DeepCTRLRegressor(**kw).fit(X, np.full(len(y), 1e-6))
    assert flat.target_scale_.tolist() == [1e-6]
    assert np.abs(flat.predict(X) - 1e-6).max() < 1e-7
