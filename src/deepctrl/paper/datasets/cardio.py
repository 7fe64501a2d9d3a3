"""Cardiovascular disease data (paper Sec. 4.3, Appendix A.1): the Kaggle file
``cardio_train.csv`` or the synthetic cohort of :mod:`deepctrl.paper.datasets.cardio_synthetic`,
the rule discovery, the Usual/Unusual partition and the Source/Target sets.

The systolic pressure threshold comes from a depth-1 decision tree (129.5 mmHg on the real
file). A patient is Usual when the threshold "predicts" the label (pressure above it and
ill, or at most it and healthy), Unusual otherwise. Source mixes 70 % of the Unusual
patients with Usual ones for a Usual ratio of 0.30 and is split 70/10/20; Targets 1-3 share
the remaining Unusual patients and take disjoint Usual ones (ratios 0.77, 0.50, 0.40). On
smaller data every count of the paper's table is scaled by the same factor.

>>> from deepctrl.paper.datasets.cardio_synthetic import synthetic_cohort
>>> task = prepare(synthetic_cohort(7000, seed=0))
>>> task.threshold, task.train.X.shape[1], task.ap_hi_index
(129.5, 19, 3)
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import deepctrl as dc
from deepctrl.paper.datasets.cardio_synthetic import COLUMNS

NUMERIC = ("age", "height", "weight", "ap_hi", "ap_lo")
CATEGORIES: dict[str, tuple[int, ...]] = {
    "gender": (1, 2),
    "cholesterol": (1, 2, 3),
    "gluc": (1, 2, 3),
    "smoke": (0, 1),
    "alco": (0, 1),
    "active": (0, 1),
}
FEATURES = (*NUMERIC, *(f"{c}_{v}" for c, vs in CATEGORIES.items() for v in vs))
AP_HI_INDEX = FEATURES.index("ap_hi")

# Open ranges the loader accepts: age in days up to 150 years, height in cm, weight in kg.
RANGES: dict[str, tuple[float, float]] = {
    "age": (0.0, 150 * 365.25),
    "height": (0.0, 300.0),
    "weight": (0.0, 500.0),
}
# Pressures are only required to be finite: the real file holds readings such as -150 or
# 16020 mmHg, which the paper kept. They are counted as implausible outside these bounds.
PLAUSIBLE_BP: dict[str, tuple[float, float]] = {"ap_hi": (50.0, 300.0), "ap_lo": (20.0, 200.0)}

# The paper's Appendix table: (Usual, Unusual) patients per set.
PAPER_SIZES: dict[str, tuple[int, int]] = {
    "Source": (6007, 14018),
    "Target 1": (20000, 6009),
    "Target 2": (6000, 6009),
    "Target 3": (4000, 6009),
}
TARGETS = ("Target 1", "Target 2", "Target 3")


def _bad_rows_error(where: str, column: str, count: int, what: str) -> ValueError:
    rows = "row" if count == 1 else "rows"
    return ValueError(f"{where}: column '{column}' has {count} {rows} {what}")


def validate_cardio(frame: pd.DataFrame, where: str = "data") -> pd.DataFrame:
    """Check the 13 columns of ``cardio_train.csv`` and their values; return them as numbers.

    Errors are one line naming the column and the number of bad rows.

    >>> validate_cardio(pd.DataFrame({c: [1] for c in COLUMNS if c not in ("gluc", "smoke")}))
    Traceback (most recent call last):
    ...
    ValueError: data: missing columns gluc, smoke
    """
    missing = [c for c in COLUMNS if c not in frame.columns]
    if missing:
        raise ValueError(f"{where}: missing columns {', '.join(missing)}")
    if len(frame) == 0:
        raise ValueError(f"{where}: no rows")
    out = pd.DataFrame(index=pd.RangeIndex(len(frame)))
    for column in COLUMNS:
        values = pd.to_numeric(frame[column].reset_index(drop=True), errors="coerce")
        bad = int((~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))).sum())
        if bad:
            raise _bad_rows_error(
                where, column, bad, "with a value that is empty or not a finite number"
            )
        out[column] = values.astype(float)
    if out["id"].duplicated().any():
        raise _bad_rows_error(where, "id", int(out["id"].duplicated().sum()), "with repeated ids")
    if out["age"].median() < 150:
        raise ValueError(
            f"{where}: column age looks like years (median {out['age'].median():g}); the Kaggle "
            "file gives the age in days: multiply by 365.25"
        )
    for column, (low, high) in RANGES.items():
        bad = int(((out[column] <= low) | (out[column] > high)).sum())
        if bad:
            raise _bad_rows_error(
                where,
                column,
                bad,
                f"outside ({low:g}, {high:g}]"
                + (" (age must be in days)" if column == "age" else ""),
            )
    for column, codes in {**CATEGORIES, "cardio": (0, 1)}.items():
        bad = int((~out[column].isin(codes)).sum())
        if bad:
            allowed = ", ".join(str(c) for c in codes)
            raise _bad_rows_error(where, column, bad, f"outside {{{allowed}}}")
        out[column] = out[column].astype(np.int64)
    out["id"] = out["id"].astype(np.int64)
    if out["cardio"].nunique() < 2:
        raise ValueError(f"{where}: column 'cardio' holds only one class")
    return out


def load_cardio_csv(path: str | os.PathLike[str]) -> pd.DataFrame:
    """Read and validate a ``;``-separated ``cardio_train.csv``.

    >>> load_cardio_csv("no/such/cardio_train.csv")
    Traceback (most recent call last):
    ...
    ValueError: no such file: no/such/cardio_train.csv
    """
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no such file: {path}")
    try:
        frame = pd.read_csv(path, sep=";")
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"{path}: not a readable ';'-separated file ({reason})") from None
    other = [sep for sep in (",", "\t", "|") if sep in str(frame.columns[0])]
    if len(frame.columns) == 1 and other:
        raise ValueError(
            f"{path}: expected ';'-separated columns (cardio_train.csv format), "
            f"the header looks {other[0]!r}-separated"
        )
    return validate_cardio(frame, where=str(path))


def discover_threshold(frame: pd.DataFrame) -> float:
    """The systolic pressure split of a depth-1 decision tree predicting ``cardio``.

    >>> frame = pd.DataFrame({"ap_hi": [110, 120, 140, 150], "cardio": [0, 0, 1, 1]})
    >>> discover_threshold(frame)
    130.0
    """
    from sklearn.tree import DecisionTreeClassifier

    tree = DecisionTreeClassifier(max_depth=1, random_state=0)
    tree.fit(frame[["ap_hi"]].to_numpy(dtype=float), frame["cardio"].to_numpy())
    if tree.tree_.node_count < 3:
        raise ValueError(
            "systolic pressure (ap_hi) does not separate the cardio classes: no threshold found"
        )
    return float(tree.tree_.threshold[0])


def usual_mask(frame: pd.DataFrame, threshold: float) -> np.ndarray:
    """True where the threshold rule agrees with the label (the paper's Usual group).

    >>> f = pd.DataFrame({"ap_hi": [120, 120, 140, 140], "cardio": [0, 1, 0, 1]})
    >>> usual_mask(f, 129.5).tolist()
    [True, False, False, True]
    """
    high = frame["ap_hi"].to_numpy(dtype=float) > threshold
    ill = frame["cardio"].to_numpy() == 1
    return high == ill


def partition_sizes(n_usual: int, n_unusual: int) -> dict[str, tuple[int, int]]:
    """(Usual, Unusual) counts per set: the paper's table times one factor
    ``s = min(1, n_unusual / 20027, n_usual / 36007)`` (rounded; never more than exist).

    >>> partition_sizes(49973, 20027)["Target 1"]
    (20000, 6009)
    >>> partition_sizes(200, 100)
    {'Source': (30, 70), 'Target 1': (100, 30), 'Target 2': (30, 30), 'Target 3': (20, 30)}
    """
    need_usual = sum(u for u, _ in PAPER_SIZES.values())
    need_unusual = PAPER_SIZES["Source"][1] + PAPER_SIZES["Target 1"][1]
    scale = min(1.0, n_unusual / need_unusual, n_usual / need_usual)
    source_unusual = min(round(PAPER_SIZES["Source"][1] * scale), n_unusual)
    target_unusual = min(round(PAPER_SIZES["Target 1"][1] * scale), n_unusual - source_unusual)
    sizes, usual_left = {}, n_usual
    for name, (usual, _) in PAPER_SIZES.items():
        take = min(round(usual * scale), usual_left)
        usual_left -= take
        sizes[name] = (take, source_unusual if name == "Source" else target_unusual)
    if any(u == 0 or v == 0 for u, v in sizes.values()):
        raise ValueError(
            f"too few patients for the Source/Target sets ({n_usual} Usual, {n_unusual} Unusual)"
        )
    return sizes


def split_source(n: int) -> tuple[int, int, int]:
    """Train/validation/test sizes of Source: 70/10/20, the test set takes the remainder.

    >>> split_source(20025)
    (14017, 2002, 4006)
    """
    train, val = n * 7 // 10, n // 10
    return train, val, n - train - val


@dataclass(frozen=True)
class Encoder:
    """Standardize the 5 numeric columns (statistics of the Source training split) and
    one-hot the 6 categorical ones into the 19 features of :data:`FEATURES`."""

    mean: tuple[float, ...]
    std: tuple[float, ...]

    @classmethod
    def fit(cls, frame: pd.DataFrame) -> Encoder:
        values = frame[list(NUMERIC)].to_numpy(dtype=float)
        mean, std = values.mean(axis=0), values.std(axis=0)
        for column, s in zip(NUMERIC, std, strict=True):
            if not s > 0:
                raise ValueError(f"column '{column}' is constant in the Source training split")
        return cls(tuple(mean.tolist()), tuple(std.tolist()))

    def transform(self, frame: pd.DataFrame) -> np.ndarray:
        numeric = (frame[list(NUMERIC)].to_numpy(dtype=float) - self.mean) / self.std
        onehot = [
            (frame[c].to_numpy()[:, None] == np.array(vs)[None, :]) for c, vs in CATEGORIES.items()
        ]
        return np.concatenate([numeric, *onehot], axis=1).astype(np.float32)

    def stats(self, column: str) -> tuple[float, float]:
        """(mean, std) of a numeric column."""
        k = NUMERIC.index(column)
        return self.mean[k], self.std[k]


@dataclass(frozen=True)
class Domain:
    """One labelled set: 19 encoded features, labels (n, 1), Usual flags and the positions of
    its patients in the validated data."""

    name: str
    X: np.ndarray
    y: np.ndarray
    usual: np.ndarray
    rows: np.ndarray

    @property
    def usual_ratio(self) -> float:
        return float(self.usual.mean())

    def counts(self) -> dict[str, Any]:
        return {
            "rows": len(self.y),
            "usual": int(self.usual.sum()),
            "unusual": int((~self.usual).sum()),
            "usual_ratio": round(self.usual_ratio, 4),
        }


@dataclass(frozen=True)
class CardioTask:
    """Source splits and Targets, encoded, with the discovered threshold and the encoder."""

    train: Domain
    val: Domain
    test: Domain
    targets: dict[str, Domain]
    threshold: float
    encoder: Encoder
    n_rows: int
    implausible_bp: int
    ap_hi_index: int = AP_HI_INDEX

    def rule(self, u: float = 0.1) -> dc.rules.Monotonic:
        """Risk rises with systolic pressure: ap_hi raised by gamma |ap_hi| mmHg,
        gamma ~ U[0, u], in raw units before scaling; satisfied when y_hat_p > y_hat."""
        mean, std = self.encoder.stats("ap_hi")
        raw = dc.rules.Standardized(dc.rules.Relative(u), mean, std)
        return dc.rules.Monotonic(self.ap_hi_index, "increasing", perturbation=raw)

    def domains(self) -> dict[str, Domain]:
        """Source (its test split) and the Targets, in the paper's order."""
        return {"Source": self.test, **self.targets}

    def summary(self) -> dict[str, Any]:
        source = {k: getattr(self, k).counts() for k in ("train", "val", "test")}
        return {
            "rows": self.n_rows,
            "threshold": self.threshold,
            "implausible_bp_rows": self.implausible_bp,
            "source": source,
            "targets": {k: d.counts() for k, d in self.targets.items()},
            "features": list(FEATURES),
            "ap_hi_index": self.ap_hi_index,
            "ap_hi_mean": self.encoder.stats("ap_hi")[0],
            "ap_hi_std": self.encoder.stats("ap_hi")[1],
        }


def prepare(frame: pd.DataFrame, seed: int = 0, threshold: float | None = None) -> CardioTask:
    """Validate, discover the threshold (unless given), partition and encode.

    ``seed`` fixes which patients go to which set (the same for every training seed).
    """
    frame = validate_cardio(frame)
    threshold = discover_threshold(frame) if threshold is None else float(threshold)
    usual = usual_mask(frame, threshold)
    sizes = partition_sizes(int(usual.sum()), int((~usual).sum()))
    rng = np.random.default_rng(seed)
    usual_rows = rng.permutation(np.flatnonzero(usual))
    unusual_rows = rng.permutation(np.flatnonzero(~usual))
    n_src_usual, n_src_unusual = sizes["Source"]
    source = rng.permutation(
        np.concatenate([usual_rows[:n_src_usual], unusual_rows[:n_src_unusual]])
    )
    n_train, n_val, _ = split_source(len(source))
    parts = {
        "train": source[:n_train],
        "val": source[n_train : n_train + n_val],
        "test": source[n_train + n_val :],
    }
    shared_unusual = unusual_rows[n_src_unusual : n_src_unusual + sizes["Target 1"][1]]
    start = n_src_usual
    for name in TARGETS:
        take = usual_rows[start : start + sizes[name][0]]
        start += sizes[name][0]
        parts[name] = np.sort(np.concatenate([take, shared_unusual]))
    labels = frame["cardio"].to_numpy()
    for name, rows in parts.items():
        if len(np.unique(labels[rows])) < 2:
            where = f"Source {name}" if name in ("train", "val", "test") else name
            held = (
                "no patients"
                if len(rows) == 0
                else f"{len(rows)} patient{'s' if len(rows) > 1 else ''}, all of one class "
                "of 'cardio'"
            )
            raise ValueError(
                f"too few patients: the {where} set has {held}, so its AUC is "
                f"undefined ({len(frame)} patients in the file; the paper's sets hold "
                "thousands, and a few hundred are needed at the least)"
            )
    encoder = Encoder.fit(frame.iloc[parts["train"]])

    def domain(name: str, rows: np.ndarray) -> Domain:
        sub = frame.iloc[rows]
        y = sub["cardio"].to_numpy(dtype=np.float32)[:, None]
        return Domain(name, encoder.transform(sub), y, usual[rows], rows)

    implausible = np.zeros(len(frame), dtype=bool)
    for column, (low, high) in PLAUSIBLE_BP.items():
        implausible |= (frame[column] < low).to_numpy() | (frame[column] > high).to_numpy()
    return CardioTask(
        train=domain("Source train", parts["train"]),
        val=domain("Source val", parts["val"]),
        test=domain("Source", parts["test"]),
        targets={name: domain(name, parts[name]) for name in TARGETS},
        threshold=threshold,
        encoder=encoder,
        n_rows=len(frame),
        implausible_bp=int(implausible.sum()),
    )
