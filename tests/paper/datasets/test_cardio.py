"""The cardio loader, encoding, threshold discovery and partition, on small hand-made files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from deepctrl.paper.datasets.cardio import (
    AP_HI_INDEX,
    FEATURES,
    PAPER_SIZES,
    CardioTask,
    Domain,
    Encoder,
    discover_threshold,
    load_cardio_csv,
    partition_sizes,
    prepare,
    split_source,
    usual_mask,
    validate_cardio,
)
from deepctrl.paper.datasets.cardio_synthetic import COLUMNS

HEADER = ";".join(COLUMNS)


def _row(i: int, ap_hi: int, cardio: int, **over: object) -> dict[str, object]:
    """One patient; the other columns vary with i so that no column is constant."""
    row = {
        "id": i,
        "age": 15000 + 37 * i,
        "gender": 1 + i % 2,
        "height": 150 + i % 31,
        "weight": 55.0 + (i % 17) * 1.5,
        "ap_hi": ap_hi,
        "ap_lo": 70 + i % 3 * 10,
        "cholesterol": 1 + i % 3,
        "gluc": 1 + (i // 3) % 3,
        "smoke": i % 2,
        "alco": (i // 2) % 2,
        "active": (i // 5) % 2,
        "cardio": cardio,
    }
    row.update(over)
    return row


def _write(path, rows: list[dict[str, object]]) -> None:
    pd.DataFrame(rows, columns=list(COLUMNS)).to_csv(path, sep=";", index=False)


def _groups_frame(n_usual: int, n_unusual: int) -> pd.DataFrame:
    """Pressures 110 or 150 only: Usual = (110, healthy) or (150, ill)."""
    rows = []
    for i in range(n_usual):
        rows.append(_row(i, 110 if i % 2 else 150, 0 if i % 2 else 1))
    for j in range(n_unusual):
        i = n_usual + j
        rows.append(_row(i, 110 if j % 2 else 150, 1 if j % 2 else 0))
    return pd.DataFrame(rows, columns=list(COLUMNS))


def test_loader_reads_semicolon_file(tmp_path):
    path = tmp_path / "cardio_train.csv"
    rows = [_row(0, 120, 0), _row(1, 140, 1), _row(2, 130, 1, weight=70.5)]
    _write(path, rows)
    frame = load_cardio_csv(path)
    assert list(frame.columns) == list(COLUMNS)
    assert frame["ap_hi"].tolist() == [120, 140, 130]
    assert frame["weight"].tolist() == [55.0, 56.5, 70.5]
    assert frame["cholesterol"].dtype == np.int64 and frame["cardio"].tolist() == [0, 1, 1]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"gluc": [4, 0]}, "column 'gluc' has 2 rows outside {1, 2, 3}"),
        ({"gender": [3]}, "column 'gender' has 1 row outside {1, 2}"),
        ({"smoke": [2]}, "column 'smoke' has 1 row outside {0, 1}"),
        (
            {"age": [0, -5, 60000]},
            "column 'age' has 3 rows outside (0, 54787.5] (age must be in days)",
        ),
        ({"height": [350]}, "column 'height' has 1 row outside (0, 300]"),
        (
            {"weight": ["heavy", ""]},
            "column 'weight' has 2 rows with a value that is empty or not a finite",
        ),
        ({"id": [1]}, "column 'id' has 1 row with repeated ids"),
        ({"age": [50] * 6}, "column age looks like years (median 50); the Kaggle file gives"),
    ],
)
def test_loader_errors_name_column_and_count(tmp_path, change, message):
    rows = [_row(i, 120 + 10 * (i % 3), i % 2) for i in range(6)]
    for column, values in change.items():
        for k, v in enumerate(values):
            rows[k][column] = v
    path = tmp_path / "cardio_train.csv"
    _write(path, rows)
    with pytest.raises(ValueError, match=r"^.*cardio_train\.csv: ") as err:
        load_cardio_csv(path)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_loader_file_level_errors(tmp_path):
    with pytest.raises(ValueError, match="no such file"):
        load_cardio_csv(tmp_path / "missing.csv")
    comma = tmp_path / "comma.csv"
    pd.DataFrame([_row(0, 120, 0)]).to_csv(comma, index=False)
    with pytest.raises(ValueError, match="header looks ','-separated"):
        load_cardio_csv(comma)
    pd.DataFrame([_row(0, 120, 0)]).to_csv(comma, index=False, sep="\t")
    with pytest.raises(ValueError, match="header looks '\\\\t'-separated"):
        load_cardio_csv(comma)
    header_only = tmp_path / "header.csv"
    header_only.write_text(HEADER + "\n")
    with pytest.raises(ValueError, match="no rows"):
        load_cardio_csv(header_only)
    missing = tmp_path / "missing_cols.csv"
    pd.DataFrame([_row(0, 120, 0)]).drop(columns=["ap_lo", "alco"]).to_csv(
        missing, sep=";", index=False
    )
    with pytest.raises(ValueError, match=r"missing columns ap_lo, alco$"):
        load_cardio_csv(missing)
    one_class = tmp_path / "one_class.csv"
    _write(one_class, [_row(i, 120, 1) for i in range(3)])
    with pytest.raises(ValueError, match="'cardio' holds only one class"):
        load_cardio_csv(one_class)
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match="not a readable"):
        load_cardio_csv(empty)


KAGGLE_FILE = """id;age;gender;height;weight;ap_hi;ap_lo;cholesterol;gluc;smoke;alco;active;cardio
0;20000;2;175;80.0;110;70;1;1;0;0;1;0
1;20000;1;165;60.0;150;70;3;1;1;0;1;1
2;16000;1;175;60.0;110;90;2;3;0;1;0;0
3;16000;2;165;80.0;150;90;1;2;0;0;1;1
"""


def test_kaggle_file_encodes_each_feature_under_its_name(tmp_path):
    """A file as Kaggle ships it (age in days) is read, and every one of the 19 encoded
    columns holds what its name in FEATURES says; AP_HI_INDEX is the systolic pressure."""
    path = tmp_path / "cardio_train.csv"
    path.write_text(KAGGLE_FILE)
    frame = load_cardio_csv(path)
    assert frame["age"].tolist() == [20000, 20000, 16000, 16000]
    assert frame["weight"].tolist() == [80.0, 60.0, 60.0, 80.0]
    enc = Encoder.fit(frame)
    # population statistics: each column takes two values, twice each
    assert enc.mean == (18000.0, 170.0, 70.0, 130.0, 80.0)
    assert enc.std == (2000.0, 5.0, 10.0, 20.0, 10.0)
    X = enc.transform(frame)
    expected = {
        "age": [1, 1, -1, -1],
        "height": [1, -1, 1, -1],
        "weight": [1, -1, -1, 1],
        "ap_hi": [-1, 1, -1, 1],
        "ap_lo": [-1, -1, 1, 1],
        "gender_1": [0, 1, 1, 0],
        "gender_2": [1, 0, 0, 1],
        "cholesterol_1": [1, 0, 0, 1],
        "cholesterol_2": [0, 0, 1, 0],
        "cholesterol_3": [0, 1, 0, 0],
        "gluc_1": [1, 1, 0, 0],
        "gluc_2": [0, 0, 0, 1],
        "gluc_3": [0, 0, 1, 0],
        "smoke_0": [1, 0, 1, 1],
        "smoke_1": [0, 1, 0, 0],
        "alco_0": [1, 1, 0, 1],
        "alco_1": [0, 0, 1, 0],
        "active_0": [0, 0, 1, 0],
        "active_1": [1, 1, 0, 1],
    }
    assert sorted(FEATURES) == sorted(expected) and X.shape == (4, len(expected))
    for name, column in expected.items():
        np.testing.assert_array_equal(X[:, FEATURES.index(name)], column, err_msg=name)
    mean, std = enc.stats("ap_hi")
    np.testing.assert_array_equal(X[:, AP_HI_INDEX] * std + mean, [110, 150, 110, 150])
    # the rule raises the pressure column and no other
    source = Domain("Source", X, X[:, :1], np.ones(4, dtype=bool), np.arange(4))
    rule = CardioTask(source, source, source, {}, 130.0, enc, 4, 0).rule(u=0.1)
    x = torch.from_numpy(X)
    moved = (rule.perturb(x, torch.Generator().manual_seed(0)) != x).any(dim=0)
    assert moved.nonzero().flatten().tolist() == [FEATURES.index("ap_hi")]


def test_encoder_by_hand():
    frame = validate_cardio(
        pd.DataFrame(
            [
                _row(
                    0,
                    100,
                    0,
                    age=10000,
                    height=150,
                    weight=50.0,
                    ap_lo=60,
                    gender=1,
                    cholesterol=3,
                    gluc=2,
                    smoke=0,
                    alco=1,
                    active=0,
                ),
                _row(
                    1,
                    140,
                    1,
                    age=20000,
                    height=170,
                    weight=90.0,
                    ap_lo=100,
                    gender=2,
                    cholesterol=1,
                    gluc=1,
                    smoke=1,
                    alco=0,
                    active=1,
                ),
            ]
        )
    )
    enc = Encoder.fit(frame)
    assert enc.mean == (15000.0, 160.0, 70.0, 120.0, 80.0)
    assert enc.std == (5000.0, 10.0, 20.0, 20.0, 20.0)
    X = enc.transform(frame)
    assert X.dtype == np.float32 and X.shape == (2, 19)
    np.testing.assert_array_equal(
        X[0], [-1, -1, -1, -1, -1, 1, 0, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 0]
    )
    np.testing.assert_array_equal(X[1], [1, 1, 1, 1, 1, 0, 1, 1, 0, 0, 1, 0, 0, 0, 1, 1, 0, 0, 1])
    with pytest.raises(ValueError, match="column 'height' is constant"):
        Encoder.fit(frame.assign(height=160))


def test_threshold_and_usual_mask():
    frame = pd.DataFrame(
        {"ap_hi": [100, 110, 120, 130, 140, 150, 160], "cardio": [0, 0, 0, 1, 1, 1, 0]}
    )
    assert discover_threshold(frame) == 125.0
    assert usual_mask(frame, 125.0).tolist() == [True] * 6 + [False]
    with pytest.raises(ValueError, match="does not separate"):
        discover_threshold(pd.DataFrame({"ap_hi": [120, 120], "cardio": [0, 1]}))


def test_partition_sizes_paper_and_scaled():
    assert partition_sizes(49973, 20027) == PAPER_SIZES
    assert partition_sizes(10**6, 10**6) == PAPER_SIZES
    # s = min(1, 100 / 20027, 200 / 36007) = 0.0049933: 14018 s = 69.995 -> 70, 6009 s -> 30,
    # 6007 s = 29.995 -> 30, 20000 s = 99.87 -> 100, 6000 s -> 30, 4000 s -> 20.
    assert partition_sizes(200, 100) == {
        "Source": (30, 70),
        "Target 1": (100, 30),
        "Target 2": (30, 30),
        "Target 3": (20, 30),
    }
    # s = 360.07 / 36007 = 0.01 by the Usual count: 14018 s -> 140, 6009 s -> 60.
    assert partition_sizes(360, 10_000)["Source"] == (60, 140)
    with pytest.raises(ValueError, match="too few patients"):
        partition_sizes(5, 3)


def test_split_source_sizes():
    assert split_source(100) == (70, 10, 20)
    assert split_source(20025) == (14017, 2002, 4006)
    assert split_source(7) == (4, 0, 3)


def test_prepare_hand_counted_partition(tmp_path):
    path = tmp_path / "cardio_train.csv"
    _groups_frame(n_usual=200, n_unusual=100).to_csv(path, sep=";", index=False)
    frame = load_cardio_csv(path)
    task = prepare(frame, seed=0)
    assert task.threshold == 130.0
    assert task.n_rows == 300 and task.implausible_bp == 0
    counts = {k: (d.counts()["usual"], d.counts()["unusual"]) for k, d in task.targets.items()}
    assert counts == {"Target 1": (100, 30), "Target 2": (30, 30), "Target 3": (20, 30)}
    assert [len(task.train.y), len(task.val.y), len(task.test.y)] == [70, 10, 20]
    source = np.concatenate([task.train.rows, task.val.rows, task.test.rows])
    assert len(set(source)) == 100 and frame["id"].iloc[source].lt(200).sum() == 30
    usual_sets = [set(d.rows[d.usual]) for d in task.targets.values()]
    assert not set.union(*usual_sets) & set(source)
    assert sum(len(u) for u in usual_sets) == len(set.union(*usual_sets)) == 150
    unusual = [set(d.rows[~d.usual]) for d in task.targets.values()]
    assert unusual[0] == unusual[1] == unusual[2] and not unusual[0] & set(source)
    assert set(source) | unusual[0] >= set(range(200, 300))
    # labels and Usual flags agree with the frame
    t1 = task.targets["Target 1"]
    np.testing.assert_array_equal(t1.y[:, 0], frame["cardio"].to_numpy()[t1.rows])
    np.testing.assert_array_equal(t1.usual, frame["id"].to_numpy()[t1.rows] < 200)


def test_encoder_fitted_on_source_train_only():
    frame = _groups_frame(n_usual=200, n_unusual=100)
    task = prepare(frame, seed=1)
    train_raw = frame.iloc[task.train.rows]
    assert task.encoder.mean[0] == pytest.approx(train_raw["age"].mean())
    assert task.encoder.std[2] == pytest.approx(train_raw["weight"].std(ddof=0))
    np.testing.assert_allclose(task.train.X[:, :5].mean(axis=0), 0.0, atol=1e-5)
    assert abs(float(task.val.X[:, 0].mean())) > 1e-3
    assert task.encoder.mean[0] != pytest.approx(frame["age"].mean())


def test_prepare_is_deterministic_per_seed():
    frame = _groups_frame(n_usual=200, n_unusual=100)
    a, b, c = prepare(frame, seed=3), prepare(frame, seed=3), prepare(frame, seed=4)
    np.testing.assert_array_equal(a.train.rows, b.train.rows)
    assert not np.array_equal(a.train.rows, c.train.rows)


def test_rule_perturbs_raw_pressure_by_at_most_u():
    frame = _groups_frame(n_usual=200, n_unusual=100)
    task = prepare(frame, seed=0)
    rule = task.rule(u=0.2)
    mean, std = task.encoder.stats("ap_hi")
    x = torch.from_numpy(task.targets["Target 1"].X)
    x_p = rule.perturb(x, torch.Generator().manual_seed(0))
    raw = x[:, AP_HI_INDEX] * std + mean
    shift = (x_p[:, AP_HI_INDEX] - x[:, AP_HI_INDEX]) * std
    assert torch.equal(
        torch.cat([x_p[:, :AP_HI_INDEX], x_p[:, AP_HI_INDEX + 1 :]], 1),
        torch.cat([x[:, :AP_HI_INDEX], x[:, AP_HI_INDEX + 1 :]], 1),
    )
    gamma = shift / raw
    assert float(gamma.min()) >= 0.0 and float(gamma.max()) <= 0.2 + 1e-5
    assert float(gamma.max()) > 0.15
    assert rule.direction == "increasing" and rule.feature == AP_HI_INDEX


def test_implausible_pressures_are_kept_and_counted(tmp_path):
    """The real file holds readings such as -150 or 16020 mmHg: kept, as in the paper."""
    frame = _groups_frame(n_usual=200, n_unusual=100)
    frame.loc[5, "ap_hi"], frame.loc[8, "ap_hi"], frame.loc[9, "ap_lo"] = -150, 16020, 1000
    path = tmp_path / "cardio_train.csv"
    frame.to_csv(path, sep=";", index=False)
    task = prepare(load_cardio_csv(path))
    assert task.implausible_bp == 3 and task.n_rows == 300
    assert task.summary()["implausible_bp_rows"] == 3


def test_a_set_with_one_class_is_refused_naming_it():
    frame = _groups_frame(n_usual=40, n_unusual=20)
    with pytest.raises(ValueError) as caught:
        prepare(frame, seed=0)
    assert str(caught.value) == (
        "too few patients: the Source val set has 2 patients, all of one class of 'cardio', "
        "so its AUC is undefined (60 patients in the file; the paper's sets hold thousands, "
        "and a few hundred are needed at the least)"
    )
    with pytest.raises(
        ValueError, match=r"the Source val set has no patients, so its AUC .* \(18 "
    ):
        prepare(_groups_frame(n_usual=12, n_unusual=6), seed=0)
