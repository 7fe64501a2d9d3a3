"""ONNX files of the table estimators: onnxruntime, in a process that never imports
deepctrl, gives the estimators' predictions on tables with numbers, categories, missing
values and dates, at several alphas and at one alpha per row."""

from __future__ import annotations

import importlib
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pandas as pd
import pytest

import deepctrl as dc
from deepctrl.io.onnx_export import EXPORTER_READY
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.onnx_inputs import input_type_name, onnx_feed
from deepctrl.tabular.onnx_preprocessing import NAT, preprocessing_graph

needs_exporter = pytest.mark.skipif(not EXPORTER_READY, reason="torch.onnx.export is too old")

SMALL = {"max_epochs": 12, "hidden_size": 16, "n_seeds": 2}

RUN_ONNX = """
import sys
import numpy as np
import onnxruntime as ort

jobs = np.load(sys.argv[1])
results = {}
for i in range(int(jobs["count"])):
    model = str(jobs[f"{i}/model"])
    feed = {key.split("/", 2)[2]: jobs[key] for key in jobs.files
            if key.startswith(f"{i}/in/")}
    feed = {k: v.astype(object) if v.dtype.kind == "U" else v for k, v in feed.items()}
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    for out, value in zip(session.get_outputs(), session.run(None, feed)):
        results[f"{i}/{out.name}"] = value.astype(str) if value.dtype == object else value
assert not any(name.startswith("deepctrl") for name in sys.modules)
np.savez(sys.argv[2], **results)
"""


def messy_table(n: int, seed: int) -> pd.DataFrame:
    """Numbers with NaN, text with empty and missing values, booleans, and timestamps over
    two years (with times of day and NaT)."""
    rng = np.random.default_rng(seed)
    start = pd.Timestamp("2023-01-01")
    frame = pd.DataFrame(
        {
            "dist": rng.uniform(1, 50, n),
            "carrier": rng.choice(["north", "south", "east", ""], n).astype(object),
            "day": start + pd.to_timedelta(rng.uniform(0, 730, n), unit="D"),
            "express": rng.choice([True, False], n),
        }
    )
    frame.loc[rng.choice(n, n // 10, replace=False), "dist"] = np.nan
    frame.loc[rng.choice(n, n // 20, replace=False), "day"] = pd.NaT
    frame.loc[rng.choice(n, n // 20, replace=False), "carrier"] = None
    return frame


def target(frame: pd.DataFrame, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    days = (frame["day"] - pd.Timestamp("2023-01-01")).dt.days.fillna(365).to_numpy()
    return (
        0.1 * frame["dist"].fillna(25).to_numpy()
        + (frame["carrier"] == "north")
        + 0.5 * frame["express"]
        + days / 365
        + rng.normal(0, 0.2, len(frame))
    )


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A regressor, a binary classifier with text labels and a rule on the class 'late',
    and a three-class classifier, each with its ONNX file (checked on training rows)."""
    folder = tmp_path_factory.mktemp("onnx")
    X = messy_table(400, seed=0)
    y = target(X, seed=0)
    rule = [dc.Monotonic("dist", "increasing")]
    models = {
        "regressor": dc.DeepCTRLRegressor(rules=rule, random_state=0, **SMALL).fit(X, y),
        "binary": dc.DeepCTRLClassifier(
            rules=[dc.Monotonic("dist", "increasing", output="late")], random_state=0, **SMALL
        ).fit(X, np.where(y > 4, "late", "ontime")),
        "three": dc.DeepCTRLClassifier(
            rules=[dc.Monotonic("dist", "increasing", output=2)], random_state=0, **SMALL
        ).fit(X, np.digitize(y, [3.5, 4.5])),
    }
    paths = {
        name: est.to_onnx(folder / f"{name}.onnx", X.iloc[:60]) for name, est in models.items()
    }
    return models, paths


def new_rows() -> pd.DataFrame:
    """Rows the models never saw: a category unseen in training, dates after the training
    range, and a row with every value missing."""
    X = messy_table(150, seed=1)
    X.loc[0, "carrier"] = "west"
    X.loc[1:4, "day"] = pd.Timestamp("2026-07-14 18:30")
    X.loc[5, ["dist", "day", "carrier"]] = [np.nan, pd.NaT, ""]
    return X


def run_onnxruntime(
    folder: Path, jobs: list[tuple[Path, dict[str, np.ndarray]]]
) -> list[dict[str, np.ndarray]]:
    """Outputs of each (file, inputs) job, run in a fresh Python that imports only numpy
    and onnxruntime."""
    packed: dict[str, object] = {"count": len(jobs)}
    for i, (model, feed) in enumerate(jobs):
        packed[f"{i}/model"] = str(model)
        for name, value in feed.items():
            packed[f"{i}/in/{name}"] = value.astype(str) if value.dtype == object else value
    np.savez(folder / "jobs.npz", **packed)
    done = subprocess.run(
        [sys.executable, "-c", RUN_ONNX, str(folder / "jobs.npz"), str(folder / "out.npz")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    out = np.load(folder / "out.npz")
    return [
        {key.split("/", 1)[1]: out[key] for key in out.files if key.startswith(f"{i}/")}
        for i in range(len(jobs))
    ]


@needs_exporter
def test_onnxruntime_alone_gives_the_estimators_predictions(fitted, tmp_path):
    models, paths = fitted
    X = new_rows()
    per_row = np.random.default_rng(2).permutation(np.linspace(0.0, 1.0, len(X)))
    alphas = [0.0, 0.5, 1.0, per_row]
    jobs = [
        (paths[name], est.onnx_inputs(X, alpha=a)) for name, est in models.items() for a in alphas
    ]
    results = iter(run_onnxruntime(tmp_path, jobs))
    for name, est in models.items():
        for a in alphas:
            got = next(results)
            if name == "regressor":
                want = est.predict(X, alpha=a)
                assert got["prediction"].shape == want.shape
                assert np.abs(got["prediction"] - want).max() <= 1e-4 * max(1, np.abs(want).max())
                continue
            proba = est.predict_proba(X, alpha=a)
            assert np.abs(got["probabilities"] - proba).max() <= 1e-4
            top2 = np.sort(proba, axis=1)[:, -2:]
            clear = top2[:, 1] - top2[:, 0] > 1e-4  # a near tie may fall either way
            labels = est.predict(X, alpha=a).astype(str)
            assert np.array_equal(got["label"][clear].astype(str), labels[clear])
            assert len(set(labels)) > 1  # the models tell classes apart
    # the rule-strength input matters: alpha 0 and 1 give different regressions
    assert (
        len(
            np.unique(
                np.round(
                    models["regressor"].predict(X, alpha=0.0)
                    - models["regressor"].predict(X, alpha=1.0),
                    6,
                )
            )
        )
        > 1
    )


@needs_exporter
def test_the_inputs_are_typed_by_column_kind(fitted):
    models, paths = fitted
    est = models["binary"]
    X = new_rows()
    feed = est.onnx_inputs(X, alpha=0.3)
    assert feed["dist"].dtype == np.float32 and np.isnan(feed["dist"][5])
    assert feed["carrier"].dtype == object and feed["carrier"][5] == ""
    assert feed["carrier"][0] == "west"
    assert feed["express"].tolist()[:3] == [str(v) for v in X["express"][:3]]
    assert feed["day"].dtype == np.int64 and feed["day"][5] == NAT
    assert feed["day"][1] == pd.Timestamp("2026-07-14 18:30").value
    assert feed["alpha"].dtype == np.float32 and set(feed["alpha"].tolist()) == {np.float32(0.3)}
    session = ort.InferenceSession(str(paths["binary"]))
    assert [i.name for i in session.get_inputs()] == ["dist", "carrier", "day", "express", "alpha"]
    assert [o.name for o in session.get_outputs()] == ["label", "probabilities"]
    assert set(session.run(None, feed)[0].tolist()) <= {"late", "ontime"}
    meta = session.get_modelmeta().custom_metadata_map
    assert float(meta["default_alpha"]) == est.alpha_
    assert float(meta["min_error_alpha"]) == est.min_error_alpha_
    assert meta["estimator"] == "DeepCTRLClassifier"
    assert meta["input day"] == "int64 ns of the wall-clock time"
    assert meta["input dist"] == "float32" and meta["input carrier"] == "string"
    for path in paths.values():  # one name for the row axis of every input and output
        session = ort.InferenceSession(str(path))
        assert {v.shape[0] for v in (*session.get_inputs(), *session.get_outputs())} == {"rows"}


def test_preprocessing_follows_the_calendar_at_its_edges():
    """Leap years (2000 is one, 1900 and 2100 are not), dates before 1970, the last second
    of a year and a missing date give the encoder's inputs (year, week and day cycles)."""
    stamps = [
        "1899-12-31 23:59",
        "1900-03-01 06:00",
        "1969-12-31 12:00",
        "1970-01-01",
        "1999-12-31 23:00",
        "2000-02-29 12:00",
        "2000-12-31 00:00",
        "2024-12-31 23:59:59",
        "2025-01-01 00:00:01",
        "2100-03-01 08:00",
        None,
    ]
    frame = pd.DataFrame(
        {"when": pd.to_datetime(stamps, format="ISO8601"), "size": np.arange(11.0)}
    )
    encoder = TableEncoder.fit(frame)
    assert encoder.columns[0].parts == ["year", "week", "day"]
    session = ort.InferenceSession(preprocessing_graph(encoder).SerializeToString())
    feed = {
        "when": frame["when"].to_numpy("datetime64[ns]").astype(np.int64),
        "size": frame["size"].to_numpy(np.float32),
    }
    got = session.run(None, feed)[0]
    want = encoder.transform(frame)
    assert got.shape == want.shape == (11, 1 + 6 + 1 + 1)
    assert np.abs(got - want).max() < 2e-5
    # by hand: 1 January 1970 00:00 starts its year and its day (sin 0, cos 1), a Thursday
    assert got[3, 1:3].tolist() == pytest.approx([0.0, 1.0], abs=1e-6)
    assert got[3, 5:7].tolist() == pytest.approx([0.0, 1.0], abs=1e-6)
    thursday = 2 * np.pi * 3 / 7
    assert got[3, 3:5].tolist() == pytest.approx([np.sin(thursday), np.cos(thursday)], abs=1e-6)
    assert got[10, 1:8].tolist() == [0.0] * 6 + [1.0]  # missing: no cycles, indicator 1


def test_zoned_dates_enter_at_their_wall_clock_time():
    """A column fitted on zoned dates takes the local time as written (what `onnx_feed`
    builds): 08:00 in Paris gives the day-cycle inputs of 08:00 in winter and in summer."""
    hours = pd.date_range("2024-03-20", periods=24 * 20, freq="h", tz="Europe/Paris")
    frame = pd.DataFrame({"when": hours.strftime("%Y-%m-%dT%H:%M%z")})
    encoder = TableEncoder.fit(frame)
    feed = onnx_feed(encoder, frame, 1.0)
    assert feed["when"][0] == np.datetime64("2024-03-20T00:00", "ns").astype(np.int64)
    session = ort.InferenceSession(preprocessing_graph(encoder).SerializeToString())
    got = session.run(None, {"when": feed["when"]})[0]
    assert np.abs(got - encoder.transform(frame)).max() < 2e-5
    angle = 2 * np.pi * 8 / 24
    eight = got[hours.hour == 8][:, -2:]
    assert np.abs(eight - [np.sin(angle), np.cos(angle)]).max() < 1e-6


@needs_exporter
def test_a_check_on_one_row_covers_alpha_0_and_1(fitted, tmp_path, monkeypatch):
    models, _ = fitted
    est = models["regressor"]
    row = messy_table(1, seed=5)
    est.to_onnx(tmp_path / "one.onnx", row)  # the file matches predict at both ends
    served = est.predict

    def off_at_strong_rules(X, alpha=None):
        return served(X, alpha=alpha) + 0.1 * (np.asarray(alpha) > 0.5)

    monkeypatch.setattr(est, "predict", off_at_strong_rules)
    with pytest.raises(ValueError, match="differs from the model's"):
        est.to_onnx(tmp_path / "two.onnx", row)
    assert not (tmp_path / "two.onnx").exists()


@needs_exporter
def test_export_errors_say_what_to_do(fitted, tmp_path, monkeypatch):
    frame = pd.DataFrame({"alpha": np.arange(30.0), "x": np.linspace(0, 1, 30)})
    est = dc.DeepCTRLRegressor(max_epochs=1, hidden_size=8, n_seeds=1, random_state=0).fit(
        frame, np.arange(30.0)
    )
    with pytest.raises(ValueError, match="column named 'alpha'.*rename the column"):
        est.to_onnx(tmp_path / "a.onnx")
    labelled = frame.rename(columns={"alpha": "label"})
    kinds = np.arange(30) % 2
    named = dc.DeepCTRLClassifier(max_epochs=1, hidden_size=8, n_seeds=1, random_state=0)
    with pytest.raises(ValueError, match="column named 'label'.*rename the column"):
        named.fit(labelled, kinds).to_onnx(tmp_path / "a.onnx")
    unnamed = frame.rename(columns={"alpha": ""})  # a frame may have one; an ONNX input not
    est = dc.DeepCTRLRegressor(max_epochs=1, hidden_size=8, n_seeds=1, random_state=0)
    with pytest.raises(ValueError, match=r"a column with an empty name \(''\), which an ONNX"):
        est.fit(unnamed, np.arange(30.0)).to_onnx(tmp_path / "a.onnx")
    with pytest.raises(ValueError, match="not fitted"):
        dc.DeepCTRLRegressor().to_onnx(tmp_path / "b.onnx")
    models, _ = fitted
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "onnxscript" else real(name, *a),
    )
    with pytest.raises(ModuleNotFoundError, match=r'needs onnxscript: pip install "deepctrl\[onnx'):
        models["regressor"].to_onnx(tmp_path / "c.onnx")
    assert not (tmp_path / "c.onnx").exists()


@needs_exporter
def test_a_regressor_exports_columns_named_like_a_classifiers_outputs(tmp_path):
    X = pd.DataFrame({"label": np.linspace(0, 1, 40), "encoded": np.cos(np.arange(40.0))})
    y = 3 * X["label"] - X["encoded"]
    est = dc.DeepCTRLRegressor(max_epochs=2, hidden_size=8, n_seeds=1, random_state=0)
    est.fit(X, y)
    session = ort.InferenceSession(str(est.to_onnx(tmp_path / "named.onnx", X)))
    assert [i.name for i in session.get_inputs()] == ["label", "encoded", "alpha"]
    got = session.run(None, est.onnx_inputs(X, alpha=0.5))[0]
    assert np.abs(got - est.predict(X, alpha=0.5)).max() <= 1e-4 * max(1, np.abs(got).max())


@needs_exporter
def test_a_boolean_column_takes_true_and_false_in_lower_and_upper_case(fitted):
    models, paths = fitted
    est = models["regressor"]
    X = messy_table(40, seed=2)
    spelled = X.assign(express=np.where(X["express"], "true", "FALSE").astype(object))
    want = est.predict(X, alpha=0.3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "category not seen in training"
        np.testing.assert_array_equal(est.predict(spelled, alpha=0.3), want)
    session = ort.InferenceSession(str(paths["regressor"]))
    feed = est.onnx_inputs(X, alpha=0.3)
    feed["express"] = spelled["express"].to_numpy(object)
    (got,) = session.run(None, feed)
    np.testing.assert_allclose(got, want, rtol=0, atol=2e-5)
    feed["express"][:] = "yes"  # not a boolean's spelling: unseen, as in predict
    (unseen,) = session.run(None, feed)
    with pytest.warns(UserWarning, match="not seen in training"):
        np.testing.assert_allclose(
            unseen, est.predict(X.assign(express="yes"), alpha=0.3), rtol=0, atol=2e-5
        )


@needs_exporter
def test_a_model_without_rules_ignores_alpha_in_the_file(tmp_path):
    X = messy_table(120, seed=3)
    est = dc.DeepCTRLRegressor(max_epochs=2, hidden_size=8, n_seeds=1, random_state=0).fit(
        X, target(X, 3)
    )
    session = ort.InferenceSession(str(est.to_onnx(tmp_path / "plain.onnx", X)))
    at0, at1 = (session.run(None, est.onnx_inputs(X, alpha=a))[0] for a in (0.0, 1.0))
    assert np.array_equal(at0, at1)
    assert np.abs(at0 - est.predict(X)).max() <= 1e-4 * max(1, np.abs(at0).max())


@needs_exporter
def test_numbers_far_from_zero_enter_as_float64(tmp_path):
    # a latitude of 40.71 +- 0.02: float32 would round it by 2e-4 of its standard deviation
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"lat": 40.71 + 0.02 * rng.normal(size=300), "size": rng.uniform(1, 9, 300)})
    y = 50 * (X["lat"] - 40.71) + X["size"] + rng.normal(0, 0.1, 300)
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("size", "increasing")], random_state=0)
    est.set_params(**SMALL).fit(X, y)
    path = est.to_onnx(tmp_path / "lat.onnx", X.iloc[:50])
    feed = est.onnx_inputs(X, alpha=0.5)
    assert (feed["lat"].dtype, feed["size"].dtype) == (np.float64, np.float32)
    # as deepctrl export prints them
    named = [input_type_name(est.encoder_.column(c)) for c in ("lat", "size")]
    assert named == ["float64", "float32"]
    flags = TableEncoder.fit(pd.DataFrame({"promo": [True, False, None]})).column("promo")
    assert input_type_name(flags) == 'string "True"/"False" (or true/TRUE, false/FALSE)'
    (out,) = run_onnxruntime(tmp_path, [(path, feed)])
    np.testing.assert_allclose(
        out["prediction"].ravel(), est.predict(X, alpha=0.5), rtol=0, atol=2e-5
    )


def test_the_file_says_which_clock_each_date_column_takes(tmp_path):
    rng = np.random.default_rng(1)
    when = pd.Timestamp("2024-01-01", tz="UTC") + pd.to_timedelta(rng.uniform(0, 300, 200), "D")
    X = pd.DataFrame({"when": when.strftime("%Y-%m-%dT%H:%M:%SZ"), "size": rng.uniform(1, 9, 200)})
    y = X["size"] + rng.normal(0, 0.1, 200)
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic("size", "increasing")], random_state=0)
    est.set_params(**SMALL).fit(X, y)
    path = est.to_onnx(tmp_path / "utc.onnx")
    meta = ort.InferenceSession(str(path)).get_modelmeta().custom_metadata_map
    assert meta["input when"] == "int64 ns, UTC" == input_type_name(est.encoder_.column("when"))
    assert meta["input size"] == "float32"


def test_a_series_of_alphas_is_matched_to_the_rows_by_index_as_in_predict(fitted):
    est = fitted[0]["regressor"]
    X = new_rows().iloc[[7, 3, 9, 5]]  # labels 7, 3, 9, 5
    by_label = pd.Series([0.1, 0.3, 0.5, 0.7], index=[3, 5, 7, 9])
    feed = est.onnx_inputs(X, alpha=by_label)
    np.testing.assert_allclose(feed["alpha"], [0.5, 0.1, 0.7, 0.3], rtol=1e-7)
    with pytest.raises(ValueError, match="index"):
        est.onnx_inputs(X, alpha=pd.Series([0.1, 0.3, 0.5, 0.7], index=list("abcd")))


def test_a_category_written_with_its_accents_as_separate_marks_finds_its_category():
    composed, marks = "K\u00f6ln", "Ko\u0308ln"
    frame = pd.DataFrame({"city": [composed, "Bonn", marks], "size": [1.0, 2.0, 3.0]})
    encoder = TableEncoder.fit(frame)
    session = ort.InferenceSession(preprocessing_graph(encoder).SerializeToString())
    rows = pd.DataFrame({"city": [marks, composed, "Bonn", "Bonn\u0301"], "size": [1.0] * 4})
    feed = {"city": rows["city"].to_numpy(object), "size": rows["size"].to_numpy(np.float32)}
    (got,) = session.run(None, feed)
    assert got[:, :2].tolist() == [[0, 1], [0, 1], [1, 0], [0, 0]]  # the last one unseen
    with pytest.warns(UserWarning, match="1 row has a category not seen in training"):
        np.testing.assert_array_equal(got, encoder.transform(rows))


def test_a_number_category_sent_as_its_float_text_finds_its_category():
    """`astype(str)` writes the category 20.0 as "20.0" (and 4 as "4"): both find theirs, in
    Python as in the ONNX file."""
    grade = pd.Categorical([10.0, 20.0, 30.5, 20.0])
    frame = pd.DataFrame({"grade": grade, "size": [1.0, 2.0, 3.0, 4.0]})
    encoder = TableEncoder.fit(frame)
    rows = pd.DataFrame({"grade": ["20.0", "10", "30.5", "10.0"], "size": [2.0, 1.0, 3.0, 1.0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # none is unseen
        python = encoder.transform(rows)
    np.testing.assert_array_equal(python, encoder.transform(frame.iloc[[1, 0, 2, 0]]))
    session = ort.InferenceSession(preprocessing_graph(encoder).SerializeToString())
    feed = {"grade": rows["grade"].to_numpy(object), "size": rows["size"].to_numpy(np.float32)}
    np.testing.assert_array_equal(session.run(None, feed)[0], python)


def test_a_declared_category_no_training_row_holds_is_encoded_as_unseen():
    """Its input never trained: like a category the model never saw it encodes as all
    zeros, with the warning, in Python, after saving the encoder, and in the ONNX file."""
    sizes = ["S", "M", "L", "XL"]
    frame = pd.DataFrame({"size": pd.Categorical(["S", "M", "S"], categories=sizes)})
    encoder = TableEncoder.fit(frame)
    assert encoder.columns[0].untrained == [2, 3]
    rows = pd.DataFrame({"size": pd.Categorical(["M", "L", "XL", "S"], categories=sizes)})
    with pytest.warns(UserWarning, match="2 rows have a category not seen in training"):
        python = encoder.transform(rows)
    assert python.tolist() == [[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0], [1, 0, 0, 0]]
    with pytest.warns(UserWarning, match="not seen in training"):
        again = TableEncoder.from_config(encoder.config()).transform(rows)
    np.testing.assert_array_equal(again, python)
    session = ort.InferenceSession(preprocessing_graph(encoder).SerializeToString())
    (got,) = session.run(None, {"size": rows["size"].astype(str).to_numpy(object)})
    np.testing.assert_array_equal(got, python)
