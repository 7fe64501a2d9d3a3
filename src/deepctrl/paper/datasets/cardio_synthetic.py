"""A synthetic cohort in the format of the Kaggle ``cardio_train.csv``, so the healthcare use
case runs offline.

Same 12 columns plus ``id`` (age in days, gender 1/2, height cm, weight kg, systolic and
diastolic pressure in mmHg, cholesterol and glucose 1-3, smoke/alco/active 0/1, cardio
0/1), with ranges close to the real file: ages 30-65 years, about two thirds women, most
pressures rounded to 10 mmHg as clinicians write them. Disease risk is a logistic model of
age, weight, cholesterol, glucose and systolic pressure; ``bp_effect`` sets how strongly
systolic pressure raises the risk, the rest is the other factors and chance. With the
defaults about half the cohort is ill and a depth-1 tree on systolic pressure splits at
129.5, as on the real data.

>>> frame = synthetic_cohort(1000, seed=0)
>>> list(frame.columns) == list(COLUMNS)
True
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pandas as pd

from deepctrl.io.file_format import write_atomic

COLUMNS = (
    "id",
    "age",
    "gender",
    "height",
    "weight",
    "ap_hi",
    "ap_lo",
    "cholesterol",
    "gluc",
    "smoke",
    "alco",
    "active",
    "cardio",
)

DAYS_PER_YEAR = 365.25


def _round_like_clinicians(
    rng: np.random.Generator, values: np.ndarray, share_rounded: float
) -> np.ndarray:
    """Round a share of the readings to 10 mmHg, the rest to 1 mmHg."""
    tens = np.round(values / 10.0) * 10.0
    ones = np.round(values)
    return np.where(rng.random(values.shape) < share_rounded, tens, ones).astype(np.int64)


def _levels(rng: np.random.Generator, logit_2: np.ndarray, logit_3: np.ndarray) -> np.ndarray:
    """Draw 1, 2 or 3 with probabilities softmax(0, logit_2, logit_3) per row."""
    weights = np.stack([np.ones_like(logit_2), np.exp(logit_2), np.exp(logit_3)], axis=1)
    cumulative = np.cumsum(weights / weights.sum(axis=1, keepdims=True), axis=1)
    return 1 + (rng.random(len(logit_2))[:, None] > cumulative[:, :2]).sum(axis=1)


def synthetic_cohort(
    n: int = 70_000, seed: int = 0, bp_effect: float = 0.8, noise: float = 1.0
) -> pd.DataFrame:
    """A cohort of ``n`` patients, deterministic per ``seed``.

    ``bp_effect`` is the rise of the log-odds of disease per 10 mmHg of systolic pressure
    (0 makes pressure irrelevant); ``noise`` scales a per-patient random log-odds term
    (unobserved causes), so larger values make every factor less decisive.

    >>> a, b = synthetic_cohort(200, seed=3), synthetic_cohort(200, seed=3)
    >>> bool(a.equals(b)), int(a["cardio"].isin([0, 1]).sum())
    (True, 200)
    """
    if n < 1:
        raise ValueError(f"the cohort needs at least one patient, got n={n}")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    rng = np.random.default_rng(seed)
    age_years = np.clip(rng.normal(53.3, 6.8, n), 29.6, 64.9)
    male = rng.random(n) < 0.35
    height = np.clip(np.round(rng.normal(np.where(male, 170.0, 161.5), 7.0)), 140, 205)
    bmi = np.clip(rng.lognormal(np.log(26.8), 0.17, n), 16.0, 55.0)
    weight = np.clip(np.round(bmi * (height / 100.0) ** 2, 1), 40.0, 190.0)
    bmi = weight / (height / 100.0) ** 2
    age_z, bmi_z = (age_years - 53.3) / 6.8, (bmi - 26.8) / 4.6
    cholesterol = _levels(rng, -2.1 + 0.3 * age_z + 0.3 * bmi_z, -2.4 + 0.4 * age_z + 0.3 * bmi_z)
    gluc = _levels(rng, -2.6 + 0.2 * age_z + 0.4 * bmi_z, -2.6 + 0.3 * age_z + 0.5 * bmi_z)
    smoke = (rng.random(n) < np.where(male, 0.22, 0.02)).astype(np.int64)
    alco = (rng.random(n) < np.where(male, 0.11, 0.025)).astype(np.int64)
    active = (rng.random(n) < 0.80).astype(np.int64)
    ap_hi_raw = (
        123.0
        + 5.0 * age_z
        + 4.5 * bmi_z
        + 3.0 * male
        + 3.0 * (cholesterol - 1)
        + rng.normal(0.0, 15.0, n)
    )
    ap_hi = np.clip(_round_like_clinicians(rng, ap_hi_raw, 0.8), 85, 240)
    # Many normal readings are written down as 120 (the spike of the real file).
    ap_hi = np.where((np.abs(ap_hi_raw - 120.0) < 12.0) & (rng.random(n) < 0.45), 120, ap_hi)
    ap_lo_raw = 0.55 * ap_hi + 12.0 + rng.normal(0.0, 6.0, n)
    ap_lo = np.clip(_round_like_clinicians(rng, ap_lo_raw, 0.8), 50, 150)
    # Risk rises with pressure and jumps at 130 mmHg (stage-1 hypertension).
    pressure_score = 0.5 * (ap_hi - 130.0) / 10.0 + (ap_hi >= 130) - 0.5
    logit = (
        bp_effect * pressure_score
        + 0.55 * age_z
        + 0.25 * bmi_z
        + 0.55 * (cholesterol - 1)
        + 0.2 * (gluc - 1)
        + 0.1 * smoke
        - 0.25 * (active - 0.8)
        + noise * rng.normal(0.0, 0.8, n)
    )
    cardio = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return pd.DataFrame(
        {
            "id": np.arange(n, dtype=np.int64),
            "age": np.round(age_years * DAYS_PER_YEAR).astype(np.int64),
            "gender": np.where(male, 2, 1).astype(np.int64),
            "height": height.astype(np.int64),
            "weight": weight,
            "ap_hi": ap_hi,
            "ap_lo": ap_lo,
            "cholesterol": cholesterol.astype(np.int64),
            "gluc": gluc.astype(np.int64),
            "smoke": smoke,
            "alco": alco,
            "active": active,
            "cardio": cardio,
        },
        columns=list(COLUMNS),
    )


def write_cardio_csv(frame: pd.DataFrame, path: str | os.PathLike[str]) -> Path:
    """Write ``frame`` in the ``;``-separated format of ``cardio_train.csv`` (atomically).

    >>> import tempfile, pathlib
    >>> p = pathlib.Path(tempfile.mkdtemp()) / "cardio_train.csv"
    >>> _ = write_cardio_csv(synthetic_cohort(3), p)
    >>> p.read_text().splitlines()[0]
    'id;age;gender;height;weight;ap_hi;ap_lo;cholesterol;gluc;smoke;alco;active;cardio'
    """
    return write_atomic(path, frame.to_csv(sep=";", index=False).encode())
