"""The Kaggle M5 files as a :class:`~deepctrl.paper.datasets.retail.Market` and weekly table.

A folder needs ``calendar.csv`` (columns ``d``, ``wm_yr_wk``), ``sell_prices.csv``
(``store_id``, ``item_id``, ``wm_yr_wk``, ``sell_price``) and ``sales_train_evaluation.csv``
or ``sales_train_validation.csv`` (``id``, ``item_id``, ``store_id`` and the day columns
``d_1 .. d_N``; the evaluation file is preferred). If the matching
``sales_test_evaluation.csv`` / ``sales_test_validation.csv`` is there too, its days are
appended: with all 1969 days of the M5 calendar there are 281 full weeks and the split is
the paper's 273 / 4 / 4 weeks; with ``sales_train_evaluation.csv`` alone (1941 days, 277
weeks) it is 269 / 4 / 4.

Days are grouped by ``wm_yr_wk``; a first or last week with fewer than 7 days of sales is
dropped, and a calendar whose other weeks are not 7 days in a row is refused. The
sales file is read in chunks of rows (float32), the features are built a few thousand ids
at a time: the full M5 data (30,490 ids x 1,969 days) needs about 3 GB of memory.

>>> import tempfile
>>> from deepctrl.paper.datasets.retail_synthetic import synthetic_market
>>> folder = write_m5(synthetic_market(seed=0, n_items=3).market, tempfile.mkdtemp())
>>> load_m5(folder).n_weeks
281
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from deepctrl.engine.progress import progress_bar
from deepctrl.paper.datasets.retail import Market, RetailTable, build_table

SALES_FILES = ("sales_train_evaluation.csv", "sales_train_validation.csv")
ID_COLUMNS = ("id", "item_id", "store_id")
CALENDAR_COLUMNS = ("d", "wm_yr_wk")
PRICE_COLUMNS = ("store_id", "item_id", "wm_yr_wk", "sell_price")
START_DATE = "2011-01-29"  # d_1 of M5, a Saturday: Walmart weeks start on Saturday


def _header(path: Path, required: tuple[str, ...]) -> list[str]:
    try:
        columns = list(pd.read_csv(path, nrows=0).columns)
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path.name} is not a readable CSV file: {exc}") from None
    other = [sep for sep in (";", "\t", "|") if sep in str(columns[0])]
    if len(columns) == 1 and other:
        raise ValueError(
            f"{path.name}: expected ','-separated columns (the M5 files' format), the header "
            f"looks {other[0]!r}-separated"
        )
    missing = [c for c in required if c not in columns]
    if missing:
        raise ValueError(f"{path.name} lacks the column(s) {missing}")
    return columns


def _count(n: int, thing: str) -> str:
    """``1 row``, ``2 rows``."""
    return f"{n} {thing}{'' if n == 1 else 's'}"


def _files(folder: Path) -> tuple[Path, Path, Path, Path | None]:
    if folder.is_file():
        raise ValueError(f"--m5-dir {folder} is a file; give the folder that holds the M5 files")
    if not folder.is_dir():
        raise ValueError(f"M5 folder {folder} does not exist")
    missing = [n for n in ("calendar.csv", "sell_prices.csv") if not (folder / n).is_file()]
    sales = next((folder / n for n in SALES_FILES if (folder / n).is_file()), None)
    if sales is None:
        missing.append(" or ".join(SALES_FILES))
    if missing or sales is None:
        raise ValueError(f"M5 folder {folder} lacks {', '.join(missing)}")
    extra = folder / sales.name.replace("_train_", "_test_")
    return (
        folder / "calendar.csv",
        folder / "sell_prices.csv",
        sales,
        (extra if extra.is_file() else None),
    )


def _day_numbers(columns: list[str], path: Path) -> list[str]:
    days = [c for c in columns if c.startswith("d_")]
    if not days:
        raise ValueError(f"{path.name} has no day columns d_1, d_2, ...")
    return days


def _read_sales(
    path: Path, days: list[str], progress: bool, chunk_rows: int
) -> tuple[pd.DataFrame, np.ndarray]:
    """Id columns and the (rows, days) float32 demand matrix, read in chunks."""
    with open(path, "rb") as fh:
        n_rows = sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 24), b"")) - 1
    bar = progress_bar(max(n_rows, 1), f"reading {path.name}", progress)
    dtypes = dict.fromkeys(ID_COLUMNS, str) | dict.fromkeys(days, np.float32)
    ids, values = [], []
    try:
        for chunk in pd.read_csv(
            path, usecols=[*ID_COLUMNS, *days], dtype=dtypes, chunksize=chunk_rows
        ):
            ids.append(chunk[list(ID_COLUMNS)])
            values.append(chunk[days].to_numpy(dtype=np.float32))
            bar.update(len(chunk))
    except ValueError as exc:
        raise ValueError(f"{path.name} has a non-numeric sales value: {exc}") from None
    bar.close()
    if not sum(len(v) for v in values):  # a header alone still reads as one empty chunk
        raise ValueError(f"{path.name} has no rows")
    demand = np.concatenate(values)
    if not np.isfinite(demand).all():
        raise ValueError(f"{path.name} has empty or non-finite sales values")
    meta = pd.concat(ids, ignore_index=True)
    stripped = meta[list(ID_COLUMNS)].apply(lambda column: column.str.strip())
    blank = (stripped.isna() | (stripped == "")).to_numpy()
    if blank.any():
        first = int(np.flatnonzero(blank.any(axis=1))[0])
        line, column = first + 2, ID_COLUMNS[int(np.argmax(blank[first]))]  # header: line 1
        raise ValueError(
            f"{path.name} has {_count(int(blank.any(axis=1).sum()), 'row')} with an empty id, "
            f"item_id or store_id (first: line {line}, {column})"
        )
    repeated = int(meta["id"].duplicated().sum())
    if repeated:
        first = meta["id"][meta["id"].duplicated()].iloc[0]
        raise ValueError(f"{path.name} has {repeated} repeated ids (first: {first!r})")
    pair = meta["item_id"] + " in " + meta["store_id"]
    if pair.duplicated().any():
        first = pair[pair.duplicated()].iloc[0]
        raise ValueError(
            f"{path.name} has {_count(int(pair.duplicated().sum()), 'item')} sold in one store "
            f"under two ids (first: {first}); keep one sales file's rows (the evaluation file "
            "holds every day of the validation file)"
        )
    return meta, demand


def _append_days(
    meta: pd.DataFrame,
    demand: np.ndarray,
    days: list[str],
    extra: Path,
    progress: bool,
    chunk_rows: int,
) -> tuple[np.ndarray, list[str]]:
    """Append the days of a ``sales_test_*`` file, rows matched by id."""
    extra_days = _day_numbers(_header(extra, ID_COLUMNS), extra)
    new = [d for d in extra_days if d not in set(days)]
    if not new:
        return demand, days
    extra_meta, extra_demand = _read_sales(extra, extra_days, progress, chunk_rows)
    row = pd.Index(extra_meta["id"]).get_indexer(meta["id"])
    if (row < 0).any():
        raise ValueError(f"{extra.name} lacks {int((row < 0).sum())} ids of the sales file")
    keep = [extra_days.index(d) for d in new]
    return np.concatenate([demand, extra_demand[row][:, keep]], axis=1), days + new


def _weeks(calendar: Path, days: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Week index of every day (-1 in partial weeks) and the full weeks' wm_yr_wk codes."""
    _header(calendar, CALENDAR_COLUMNS)
    cal = pd.read_csv(calendar, usecols=list(CALENDAR_COLUMNS), dtype=str, keep_default_na=False)
    code_of = dict(zip(cal["d"].str.strip(), cal["wm_yr_wk"].str.strip(), strict=True))
    unknown = [d for d in days if d not in code_of]
    if unknown:
        raise ValueError(f"calendar.csv lacks the day(s) {unknown[:3]} of the sales file")
    numbers = [int(d[2:]) for d in days]
    if numbers != list(range(numbers[0], numbers[0] + len(numbers))):
        raise ValueError("the sales day columns must be consecutive (d_1, d_2, ...)")
    codes = np.array([_week_code(code_of[d], d) for d in days])
    starts = np.r_[0, np.flatnonzero(codes[1:] != codes[:-1]) + 1]
    lengths = np.diff(np.r_[starts, len(codes)])
    runs = codes[starts]
    begun: dict[int, int] = {}  # each week's first day
    for code, start in zip(runs.tolist(), starts.tolist(), strict=True):
        if code in begun:
            raise ValueError(
                f"calendar.csv gives the week {code} to days apart ({days[begun[code]]} and "
                f"{days[start]}); a week's days must follow one another"
            )
        begun[code] = start
    for i, (start, length) in enumerate(zip(starts, lengths, strict=True)):
        if length > 7 or (length < 7 and 0 < i < len(runs) - 1):
            raise ValueError(
                f"calendar.csv's week {runs[i]} has {length} days ({days[start]} to "
                f"{days[start + length - 1]}); a week has 7 (only the first and the last "
                "may have fewer)"
            )
    full = runs[lengths == 7]
    index = pd.Index(full).get_indexer(codes)
    return index.astype(np.int64), full


def _week_code(text: str, day: str) -> int:
    """A calendar.csv week code (wm_yr_wk) as a number, or an error naming the day.

    >>> _week_code("11101", "d_1")
    11101
    >>> _week_code("", "d_300")
    Traceback (most recent call last):
    ...
    ValueError: calendar.csv has no week code (wm_yr_wk) for day d_300
    """
    if not text:
        raise ValueError(f"calendar.csv has no week code (wm_yr_wk) for day {day}")
    try:
        return int(text)
    except ValueError:
        raise ValueError(
            f"calendar.csv has a week code (wm_yr_wk) that is not a whole number for day "
            f"{day}: {text!r}"
        ) from None


def _prices(path: Path, meta: pd.DataFrame, week_codes: np.ndarray) -> np.ndarray:
    """(ids, weeks) sell prices, NaN where the id has none."""
    _header(path, PRICE_COLUMNS)
    try:
        sp = pd.read_csv(
            path,
            usecols=list(PRICE_COLUMNS),
            dtype={"store_id": str, "item_id": str, "wm_yr_wk": np.int64, "sell_price": np.float64},
        )
    except ValueError as exc:
        raise ValueError(f"sell_prices.csv has a non-numeric value: {exc}") from None
    keys = pd.Index(meta["item_id"] + "|" + meta["store_id"])
    row = keys.get_indexer(sp["item_id"] + "|" + sp["store_id"])
    week = pd.Index(week_codes).get_indexer(sp["wm_yr_wk"])
    ok = (row >= 0) & (week >= 0) & np.isfinite(sp["sell_price"].to_numpy())
    if not (row >= 0).any():
        raise ValueError(
            "sell_prices.csv has no price for any item of the sales file: its store_id and "
            "item_id pairs match none of the sales rows"
        )
    if not ok.any():
        raise ValueError(
            "sell_prices.csv has no price in the weeks of the sales file: its wm_yr_wk codes "
            "match none of calendar.csv's weeks for those days"
        )
    used = sp[ok]  # the prices the table takes
    repeated = used.duplicated(list(PRICE_COLUMNS[:3]))
    if repeated.any():
        first = used[repeated].iloc[0]
        raise ValueError(
            f"sell_prices.csv has {_count(int(repeated.sum()), 'repeated price')} of an item in "
            f"a store and week (first: {first['item_id']} in {first['store_id']}, week "
            f"{first['wm_yr_wk']}); give each one price"
        )
    prices = np.full((len(meta), len(week_codes)), np.nan, dtype=np.float32)
    prices[row[ok], week[ok]] = sp["sell_price"].to_numpy()[ok]
    if (prices <= 0).any():
        raise ValueError("sell_prices.csv has prices <= 0")
    return prices


def read_m5_market(
    folder: str | os.PathLike[str], progress: bool = False, chunk_rows: int = 2000
) -> Market:
    """The raw market of an M5 folder (daily demand, weeks, weekly prices)."""
    calendar, prices, sales, extra = _files(Path(folder))
    days = _day_numbers(_header(sales, ID_COLUMNS), sales)
    meta, demand = _read_sales(sales, days, progress, chunk_rows)
    if extra is not None:
        demand, days = _append_days(meta, demand, days, extra, progress, chunk_rows)
    week_of_day, codes = _weeks(calendar, days)
    return Market(list(meta["id"]), demand, week_of_day, _prices(prices, meta, codes))


def load_m5(
    folder: str | os.PathLike[str], progress: bool = False, chunk_rows: int = 2000
) -> RetailTable:
    """The weekly table (features, target, groups, split) of an M5 folder."""
    market = read_m5_market(folder, progress, chunk_rows)
    return build_table(market, progress=progress)


def _week_codes(n_weeks: int) -> np.ndarray:
    """M5-style wm_yr_wk codes (1YYWW, 52 weeks a year) for weeks 0, 1, ..."""
    w = np.arange(n_weeks)
    return 10000 + (11 + w // 52) * 100 + w % 52 + 1


def write_m5(
    market: Market, folder: str | os.PathLike[str], store: str = "CA_1", suffix: str = "evaluation"
) -> Path:
    """Write ``market`` as M5 files (calendar, sell_prices, sales_train_<suffix>) in ``folder``.

    Days after the last full week get the next week's code (a partial week, as in M5).
    """
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    n_ids, n_days = market.demand.shape
    n_weeks = market.prices.shape[1]
    codes = _week_codes(n_weeks + 1)
    week = np.where(market.week_of_day >= 0, market.week_of_day, n_weeks)
    dates = pd.date_range(START_DATE, periods=n_days, freq="D")
    calendar = pd.DataFrame(
        {
            "date": dates.strftime("%Y-%m-%d"),
            "wm_yr_wk": codes[week],
            "weekday": dates.day_name(),
            "wday": (dates.day_of_week + 2) % 7 + 1,
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
    )
    calendar.to_csv(out / "calendar.csv", index=False)
    items = [f"ITEM_{i:05d}" for i in range(n_ids)]
    sales = pd.DataFrame(
        {
            "id": [f"{it}_{store}_{suffix}" for it in items],
            "item_id": items,
            "dept_id": "DEPT_1",
            "cat_id": "CAT",
            "store_id": store,
            "state_id": store.split("_")[0],
        }
    )
    days = pd.DataFrame(
        market.demand.astype(np.int64), columns=[f"d_{i + 1}" for i in range(n_days)]
    )
    pd.concat([sales, days], axis=1).to_csv(out / f"sales_train_{suffix}.csv", index=False)
    row, wk = np.nonzero(np.isfinite(market.prices))
    pd.DataFrame(
        {
            "store_id": store,
            "item_id": np.array(items)[row],
            "wm_yr_wk": codes[wk],
            "sell_price": np.round(market.prices[row, wk].astype(np.float64), 2),
        }
    ).to_csv(out / "sell_prices.csv", index=False)
    return out
