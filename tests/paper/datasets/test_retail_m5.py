"""M5 loader on tiny M5-format files written in tmp_path."""

import re

import numpy as np
import pandas as pd
import pytest

from deepctrl.paper.datasets.retail import build_table
from deepctrl.paper.datasets.retail_m5 import load_m5, read_m5_market, write_m5
from deepctrl.paper.datasets.retail_synthetic import synthetic_market

CAL_COLUMNS = [
    "date",
    "wm_yr_wk",
    "weekday",
    "wday",
    "month",
    "year",
    "d",
    "event_name_1",
    "event_type_1",
    "event_name_2",
    "event_type_2",
    "snap_CA",
    "snap_TX",
    "snap_WI",
]


def _write_tiny(folder, n_days=23, codes=None, sales_name="sales_train_validation.csv"):
    """3 weeks + 2 days with real-looking wm_yr_wk codes (a year break after week 1)."""
    codes = codes or [11151, 11152, 11201, 11202]
    dates = pd.date_range("2011-01-29", periods=n_days, freq="D")
    pd.DataFrame(
        {
            "date": dates.strftime("%Y-%m-%d"),
            "wm_yr_wk": [codes[i // 7] for i in range(n_days)],
            "weekday": dates.day_name(),
            "wday": 1,
            "month": dates.month,
            "year": dates.year,
            "d": [f"d_{i + 1}" for i in range(n_days)],
            "event_name_1": "",
            "event_type_1": "",
            "event_name_2": "",
            "event_type_2": "",
            "snap_CA": 0,
            "snap_TX": 0,
            "snap_WI": 0,
        }
    )[CAL_COLUMNS].to_csv(folder / "calendar.csv", index=False)
    sales = pd.DataFrame(
        {
            "id": ["A_1_CA_1_validation", "B_1_TX_1_validation"],
            "item_id": ["A_1", "B_1"],
            "dept_id": ["A", "B"],
            "cat_id": ["A", "B"],
            "store_id": ["CA_1", "TX_1"],
            "state_id": ["CA", "TX"],
        }
    )
    days = pd.DataFrame(
        [np.arange(n_days), np.arange(n_days) * 2], columns=[f"d_{i + 1}" for i in range(n_days)]
    )
    pd.concat([sales, days], axis=1).to_csv(folder / sales_name, index=False)
    pd.DataFrame(
        {
            "store_id": ["CA_1", "CA_1", "TX_1", "TX_1", "WI_1"],
            "item_id": ["A_1", "A_1", "B_1", "A_1", "A_1"],
            "wm_yr_wk": [11152, 11201, 11201, 11151, 11151],
            "sell_price": [1.5, 1.25, 9.99, 4.0, 7.0],
        }
    ).to_csv(folder / "sell_prices.csv", index=False)
    return folder


def test_reads_demand_weeks_and_prices(tmp_path):
    market = read_m5_market(_write_tiny(tmp_path))
    assert market.ids == ["A_1_CA_1_validation", "B_1_TX_1_validation"]
    assert market.demand.dtype == np.float32
    assert market.demand[1, :4].tolist() == [0, 2, 4, 6]
    # 3 full weeks; the 2 days of the 4th (partial) week are dropped
    assert market.week_of_day.tolist() == [0] * 7 + [1] * 7 + [2] * 7 + [-1, -1]
    expected = np.array([[np.nan, 1.5, 1.25], [np.nan, np.nan, 9.99]], dtype=np.float32)
    np.testing.assert_array_equal(market.prices, expected)  # A_1 at TX_1 / WI_1 ignored


def test_loads_the_same_table_as_the_market(tmp_path):
    sm = synthetic_market(seed=2, n_items=12)
    table = load_m5(write_m5(sm.market, tmp_path))
    direct = build_table(sm.market)
    assert table.n_weeks == 281 and table.features.shape[1] == 13
    np.testing.assert_allclose(table.features, direct.features, rtol=1e-6)
    np.testing.assert_array_equal(table.target, direct.target)
    np.testing.assert_allclose(table.correlation, direct.correlation, equal_nan=True)
    assert table.ids[0] == "ITEM_00000_CA_1_evaluation"


def test_appends_the_matching_test_file(tmp_path):
    sm = synthetic_market(seed=1, n_items=4)
    folder = write_m5(sm.market, tmp_path)
    sales = pd.read_csv(folder / "sales_train_evaluation.csv")
    days = [c for c in sales.columns if c.startswith("d_")]
    sales.drop(columns=days[-30:]).to_csv(folder / "sales_train_evaluation.csv", index=False)
    # the test file lists its ids in another order and repeats 2 known days
    sales[["id", "item_id", "store_id", *days[-32:]]].iloc[::-1].to_csv(
        folder / "sales_test_evaluation.csv", index=False
    )
    market = read_m5_market(folder)
    np.testing.assert_array_equal(market.demand, sm.market.demand)


def test_prefers_the_evaluation_file(tmp_path):
    _write_tiny(tmp_path)
    _write_tiny(tmp_path, sales_name="sales_train_evaluation.csv")
    df = pd.read_csv(tmp_path / "sales_train_evaluation.csv")
    df["d_1"] = 100
    df.to_csv(tmp_path / "sales_train_evaluation.csv", index=False)
    assert read_m5_market(tmp_path).demand[0, 0] == 100


def test_missing_folder_and_files(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        load_m5(tmp_path / "nope")
    (tmp_path / "sales.csv").write_text("id\n")
    with pytest.raises(ValueError, match="is a file; give the folder that holds the M5 files"):
        load_m5(tmp_path / "sales.csv")
    (tmp_path / "sales.csv").unlink()
    with pytest.raises(ValueError, match=r"lacks calendar.csv, sell_prices.csv, sales_train"):
        load_m5(tmp_path)
    _write_tiny(tmp_path)
    (tmp_path / "sell_prices.csv").unlink()
    with pytest.raises(ValueError, match="lacks sell_prices.csv"):
        load_m5(tmp_path)


@pytest.mark.parametrize(
    ("name", "drop"),
    [
        ("sell_prices.csv", "sell_price"),
        ("calendar.csv", "wm_yr_wk"),
        ("sales_train_validation.csv", "store_id"),
    ],
)
def test_missing_columns(tmp_path, name, drop):
    _write_tiny(tmp_path)
    df = pd.read_csv(tmp_path / name)
    df.drop(columns=[drop]).to_csv(tmp_path / name, index=False)
    with pytest.raises(ValueError, match=rf"{name} lacks the column\(s\) \['{drop}'\]"):
        read_m5_market(tmp_path)


def test_bad_values(tmp_path):
    _write_tiny(tmp_path)
    df = pd.read_csv(tmp_path / "sales_train_validation.csv")
    df["d_3"] = df["d_3"].astype(object)
    df.loc[0, "d_3"] = "many"
    df.to_csv(tmp_path / "sales_train_validation.csv", index=False)
    with pytest.raises(ValueError, match="non-numeric sales value"):
        read_m5_market(tmp_path)


def test_repeated_ids_are_refused(tmp_path):
    _write_tiny(tmp_path)
    df = pd.read_csv(tmp_path / "sales_train_validation.csv")
    pd.concat([df, df.iloc[:2]]).to_csv(tmp_path / "sales_train_validation.csv", index=False)
    with pytest.raises(ValueError, match="sales_train_validation.csv has 2 repeated ids"):
        read_m5_market(tmp_path)


def test_calendar_must_cover_the_sales_days(tmp_path):
    _write_tiny(tmp_path)
    cal = pd.read_csv(tmp_path / "calendar.csv")
    cal.iloc[:-3].to_csv(tmp_path / "calendar.csv", index=False)
    with pytest.raises(ValueError, match="calendar.csv lacks the day"):
        read_m5_market(tmp_path)


def test_empty_sales_file(tmp_path):
    _write_tiny(tmp_path)
    (tmp_path / "sales_train_validation.csv").write_text("")
    with pytest.raises(ValueError, match="not a readable CSV"):
        read_m5_market(tmp_path)


def test_prices_that_match_no_item_or_week_are_named(tmp_path):
    _write_tiny(tmp_path)
    prices = pd.read_csv(tmp_path / "sell_prices.csv")
    prices.assign(store_id="XX_9").to_csv(tmp_path / "sell_prices.csv", index=False)
    with pytest.raises(ValueError, match="no price for any item of the sales file"):
        load_m5(tmp_path)
    prices.assign(wm_yr_wk=99999).to_csv(tmp_path / "sell_prices.csv", index=False)
    with pytest.raises(ValueError, match="no price in the weeks of the sales file"):
        load_m5(tmp_path)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (
            lambda cal: cal.assign(wm_yr_wk=cal["wm_yr_wk"].astype(object).where(cal.d != "d_9")),
            r"^calendar.csv has no week code \(wm_yr_wk\) for day d_9$",
        ),
        (
            lambda cal: cal.assign(
                wm_yr_wk=cal["wm_yr_wk"].astype(object).where(cal.d != "d_9", "wk2")
            ),
            r"^calendar.csv has a week code \(wm_yr_wk\) that is not a whole number for day "
            r"d_9: 'wk2'$",
        ),
        (  # a week's code on a day of the next week: week 11152 has 6 days in the middle
            lambda cal: cal.assign(wm_yr_wk=cal["wm_yr_wk"].where(cal.d != "d_14", 11201)),
            r"^calendar.csv's week 11152 has 6 days \(d_8 to d_13\); a week has 7 \(only the "
            r"first and the last may have fewer\)$",
        ),
        (
            lambda cal: cal.assign(
                wm_yr_wk=cal["wm_yr_wk"].where(~cal.d.isin(["d_19", "d_20", "d_21"]), 11152)
            ),
            r"^calendar.csv gives the week 11152 to days apart \(d_8 and d_19\); a week's days "
            r"must follow one another$",
        ),
    ],
)
def test_a_calendar_whose_weeks_do_not_follow_one_another_is_refused(tmp_path, edit, said):
    # a blank week code once dropped its week from the middle, and the price change of the
    # next week was taken against the week before the gap
    _write_tiny(tmp_path)
    cal = pd.read_csv(tmp_path / "calendar.csv")
    edit(cal).to_csv(tmp_path / "calendar.csv", index=False)
    with pytest.raises(ValueError, match=said):
        read_m5_market(tmp_path)


def test_too_short_a_history_says_how_many_days_the_features_need(tmp_path):
    sm = synthetic_market(seed=1, n_items=4)
    folder = write_m5(sm.market, tmp_path)
    sales = pd.read_csv(folder / "sales_train_evaluation.csv")
    days = [c for c in sales.columns if c.startswith("d_")]
    sales.drop(columns=days[250:]).to_csv(folder / "sales_train_evaluation.csv", index=False)
    with pytest.raises(
        ValueError,
        match=r"^the sales cover 250 days, and only 5 full weeks come after the 207 days of "
        r"history .* the split needs 9 \(4 to test, 4 to validate, at least one to train\): "
        r"give 277 days of sales \(enough whichever weekday they start on\)$",
    ):
        load_m5(folder)


@pytest.mark.parametrize(("n_days", "loads"), [(272, False), (273, True)])
def test_an_extract_from_the_first_day_of_a_week_needs_273_days(tmp_path, n_days, loads):
    folder = write_m5(synthetic_market(seed=1, n_items=4).market, tmp_path)
    sales = pd.read_csv(folder / "sales_train_evaluation.csv")
    days = [c for c in sales.columns if c.startswith("d_")]
    sales.drop(columns=days[n_days:]).to_csv(folder / "sales_train_evaluation.csv", index=False)
    if loads:
        assert load_m5(folder).n_weeks == 39
    else:
        with pytest.raises(ValueError, match="the sales cover 272 days, and only 8 full weeks"):
            load_m5(folder)


@pytest.mark.parametrize("sep", [";", "\t"])
def test_a_file_with_another_separator_is_named(tmp_path, sep):
    _write_tiny(tmp_path)
    prices = pd.read_csv(tmp_path / "sell_prices.csv")
    prices.to_csv(tmp_path / "sell_prices.csv", index=False, sep=sep)
    with pytest.raises(
        ValueError,
        match=rf"^sell_prices.csv: expected ','-separated columns \(the M5 files' format\), the "
        rf"header looks {re.escape(repr(sep))}-separated$",
    ):
        read_m5_market(tmp_path)


def test_a_sales_file_of_a_header_alone_says_so(tmp_path):
    _write_tiny(tmp_path)
    header = (tmp_path / "sales_train_validation.csv").read_text().splitlines()[0]
    (tmp_path / "sales_train_validation.csv").write_text(header + "\n")
    with pytest.raises(ValueError, match="^sales_train_validation.csv has no rows$"):
        read_m5_market(tmp_path)


def test_a_sales_row_without_its_store_is_refused(tmp_path):
    _write_tiny(tmp_path)
    df = pd.read_csv(tmp_path / "sales_train_validation.csv")
    df.loc[1, "store_id"] = None
    df.to_csv(tmp_path / "sales_train_validation.csv", index=False)
    with pytest.raises(
        ValueError, match=r"has 1 row with an empty id, .* \(first: line 3, store_id\)"
    ):
        read_m5_market(tmp_path)


def test_an_item_of_a_store_under_two_ids_is_refused(tmp_path):
    _write_tiny(tmp_path)
    df = pd.read_csv(tmp_path / "sales_train_validation.csv")
    again = df.iloc[:1].assign(id="A_1_CA_1_evaluation")  # rows of both M5 sales files
    pd.concat([df, again]).to_csv(tmp_path / "sales_train_validation.csv", index=False)
    with pytest.raises(
        ValueError, match="has 1 item sold in one store under two ids .*A_1 in CA_1"
    ):
        read_m5_market(tmp_path)


def test_two_prices_of_an_item_in_a_store_and_week_are_refused(tmp_path):
    _write_tiny(tmp_path)
    prices = pd.read_csv(tmp_path / "sell_prices.csv")
    again = prices.iloc[:1].assign(sell_price=999.0)
    pd.concat([prices, again]).to_csv(tmp_path / "sell_prices.csv", index=False)
    with pytest.raises(
        ValueError, match=r"has 1 repeated price of an item .*\(first: A_1 in CA_1, week 11152\)"
    ):
        read_m5_market(tmp_path)
