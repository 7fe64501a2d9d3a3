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
    dwarfed = r"column 'price': its value 1e\+30 dwarfs its other values \(2.06 to 7.95 for 98 %"
    with pytest.warns(UserWarning, match=dwarfed):
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
