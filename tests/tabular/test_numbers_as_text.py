"""The estimators on text columns of numbers that pandas left unparsed (a decimal comma
read without ``decimal=","``, a currency code): a warning naming the column, a value and how
to parse it, at the caller's line; a rule naming a column with spaces around its name, or
with its accents written otherwise, says so."""

from __future__ import annotations

import unicodedata
import warnings

import numpy as np
import pandas as pd
import pytest

import deepctrl as dc
from deepctrl.tabular.encoding import TableEncoder


def _table(write) -> tuple[pd.DataFrame, np.ndarray]:
    rng = np.random.default_rng(0)
    price = rng.uniform(2, 8, 200).round(2)
    X = pd.DataFrame({"Preis": [write(v) for v in price], "Menge": rng.integers(1, 9, 200)})
    return X, 20 - price


@pytest.mark.parametrize(
    ("write", "tip"),
    [
        (lambda v: f"{v:.2f}".replace(".", ","), "pd.read_csv(..., decimal=',')"),
        (lambda v: f"{1000 * v:,.2f}", "pd.read_csv(..., thousands=',')"),
        (
            lambda v: f"{1000 * v:,.2f}".replace(",", "#").replace(".", ",").replace("#", "."),
            "pd.read_csv(..., decimal=',', thousands='.')",
        ),
        (
            lambda v: f"R$ {v:.2f}".replace(".", ","),
            "write them as 1234.5 or -1234.5, then pd.to_numeric",
        ),
    ],
)
def test_numbers_left_as_text_are_named_at_the_callers_line(write, tip):
    X, y = _table(write)
    est = dc.DeepCTRLRegressor(max_epochs=1, random_state=0, verbose=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    hints = [w for w in caught if "looks like numbers" in str(w.message)]
    assert len(hints) == 1, [str(w.message) for w in caught]
    distinct = sorted(set(X["Preis"]))
    assert str(hints[0].message) == (
        f"column 'Preis' looks like numbers, but {len(distinct)} of its {len(distinct)} "
        f"distinct values are written in a form not read as numbers (such as {distinct[0]!r}), "
        f"so it is read as categories, one input per value; parse them first (in Python: "
        f"{tip}), or on the command line write them as plain numbers (1234.5, -1234.5)"
    )
    assert hints[0].filename == __file__
    assert est.encoder_.column("Preis").kind == "categorical"


def test_codes_and_words_are_categories_without_a_warning():
    codes = pd.DataFrame(
        {
            "plz": ["01067", "04109", "10115", "80331"] * 10,
            "size": ["36", "38", "40", "S"] * 10,
            "city": ["Bonn", "Köln", "Kiel", "Jena"] * 10,
            "version": ["1.2.3", "1.10.0", "2.0.1", "3.1.4"] * 10,
            "shirt": ["S", "XL", "2XL", "3XL"] * 10,
            "room": ["A1", "A2", "B1", "B12"] * 10,
            "month": ["May", "June", "July", "Mar 3"] * 10,
        }
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        enc = TableEncoder.fit(codes)
    assert [c.kind for c in enc.columns] == ["categorical"] * 7


def test_numbers_with_a_unit_are_named_at_the_callers_line():
    X, y = _table(lambda v: f"{v:.2f} kg" if v > 2.5 else f"{v:.2f}kg")
    est = dc.DeepCTRLRegressor(max_epochs=1, random_state=0, verbose=False)
    with pytest.warns(UserWarning) as caught:
        est.fit(X, y)
    first = sorted(set(X["Preis"]))[0]
    assert [str(w.message) for w in caught] == [
        f"column 'Preis' looks like numbers with a unit ({first!r}), so it is read as "
        "categories, one input per value; to use it as numbers (and let a rule name it), write "
        "them without the unit and name the unit in the column's name ('Preis_kg')"
    ]
    assert caught[0].filename == __file__


@pytest.mark.parametrize(
    "form", ["%B %d, %Y", "%d-%b-%Y", "%a, %b %d %Y", "%d %B %y", "%b. %d, %Y %I:%M %p"]
)
def test_dates_with_the_months_name_are_named_as_dates(form):
    days = pd.Series(pd.date_range("2024-01-01", periods=40, freq="9D")).dt.strftime(form)
    with pytest.warns(UserWarning) as caught:
        TableEncoder.fit(pd.DataFrame({"day": days}))
    assert [str(w.message)[:75] for w in caught] == [
        "column 'day' looks like dates, but 40 of its 40 distinct values are not ISO"
    ]


def test_dates_keep_their_own_warning():
    days = pd.Series(pd.date_range("2024-01-01", periods=40)).dt.strftime("%d.%m.%Y")
    with pytest.warns(UserWarning) as caught:
        TableEncoder.fit(pd.DataFrame({"day": days}))
    assert [str(w.message)[:32] for w in caught] == ["column 'day' looks like dates, b"]


def test_a_rule_names_a_column_differing_by_spaces_or_accents(tmp_path):
    rng = np.random.default_rng(0)
    q = rng.uniform(0, 1, 60)
    decomposed = unicodedata.normalize("NFD", "Qualität")
    for name, hint in (
        ("Qualität ", "; column 'Qualität ' has spaces around its name"),
        (
            decomposed,
            f"; column {decomposed!r} is this name with its accents written otherwise (as "
            "separate marks, as macOS may write names, or the other way): write both as "
            "unicodedata.normalize('NFC', name)",
        ),
    ):
        X = pd.DataFrame({"Preis": q[::-1], name: q})
        est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("Qualität", "increasing")], max_epochs=1)
        with pytest.raises(ValueError) as error:
            est.fit(X, 3 * q)
        assert str(error.value).endswith(
            f"unknown column 'Qualität'; the table has: 'Preis', {name!r}{hint}"
        ), str(error.value)
