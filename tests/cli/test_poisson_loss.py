"""``--loss poisson`` on the command line: a count target is fitted as counts (also one of few
values, which would otherwise read as classes), the summary names the loss, and a negative
count or a classification task is refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import deepctrl as dc
from deepctrl.cli.main import main

FAST = ["--max-epochs", "5", "--no-progress"]


def run(args: list[object], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def defects_csv(folder: Path, n: int = 300) -> Path:
    """Defects per batch, 0 to about 8: whole numbers of few values."""
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {"speed": rng.uniform(1, 5, n).round(2), "line": rng.choice(["a", "b"], n)}
    )
    frame["defects"] = rng.poisson(np.exp(-1.0 + 0.5 * frame["speed"]))
    path = folder / "defects.csv"
    frame.to_csv(path, index=False)
    return path


def test_fit_trains_counts_with_the_poisson_loss(tmp_path, capsys):
    data, model = defects_csv(tmp_path), tmp_path / "defects.deepctrl"
    args = ["fit", data, "--target", "defects", "--monotonic", "speed=increasing", *FAST]
    code, out, err = run([*args, "--loss", "poisson", "--out", model], capsys)
    assert code == 0, err
    assert "task: regression (--loss poisson is a regression loss; set --task to choose)" in err
    assert "loss: poisson (predictions are exp of the networks' log-rate" in out
    assert "validation at alpha 0: mae" in out and ", poisson " in out
    est = dc.DeepCTRLRegressor.load(model)
    assert est.loss == "poisson" and est.primary_metric == "poisson"
    frame = pd.read_csv(data)
    assert est.predict(frame[["speed", "line"]]).min() > 0
    code, _, err = run([*args, "--out", tmp_path / "classes.deepctrl"], capsys)
    assert code == 0 and "task: classification (from target column 'defects'" in err


def test_a_negative_count_or_a_classification_is_refused_in_one_line(tmp_path, capsys):
    data = defects_csv(tmp_path)
    frame = pd.read_csv(data)
    frame.loc[6, "defects"] = -1
    frame.to_csv(tmp_path / "negative.csv", index=False)
    model = tmp_path / "m.deepctrl"
    for path, extra, message in (
        (
            tmp_path / "negative.csv",
            [],
            f"{tmp_path / 'negative.csv'}: target column 'defects' has a negative value in 1 of "
            "300 rows (line 8: -1); --loss poisson needs counts or other values >= 0",
        ),
        (data, ["--task", "classification"], "--loss is for regression"),
    ):
        for command in (
            ["fit", path, "--target", "defects", "--out", model],
            ["test-rule", path, "--target", "defects", "--monotonic", "speed=increasing"],
        ):
            code, _, err = run([*command, "--loss", "poisson", *extra, *FAST], capsys)
            lines = err.strip().splitlines()
            assert code == 2 and message in lines[-1] and len(lines) == 1, err
    assert not model.exists()


def test_test_rule_compares_deviances(tmp_path, capsys):
    data = defects_csv(tmp_path)
    args = ["test-rule", data, "--target", "defects", "--monotonic", "speed=increasing"]
    more = ["--loss", "poisson", "--seeds", "2", "--max-epochs", "3", "--no-progress"]
    code, _, err = run([*args, *more, "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    result = json.loads((tmp_path / "r" / "rule_test.json").read_text())
    assert result["all"]["metric"] == "poisson"
    assert "mean Poisson deviances" in (tmp_path / "r" / "report.md").read_text()


def test_sweep_names_a_negative_count_by_its_line(tmp_path, capsys):
    data, model = defects_csv(tmp_path), tmp_path / "defects.deepctrl"
    args = ["fit", data, "--target", "defects", *FAST, "--loss", "poisson", "--out", model]
    assert run(args, capsys)[0] == 0
    frame = pd.read_csv(data)
    frame.loc[2, "speed"] = np.nan  # dropped with --drop-missing: lines and rows part
    frame.loc[40, "defects"] = -3
    bad = tmp_path / "bad.csv"
    frame.to_csv(bad, index=False)
    code, _, err = run(["sweep", model, bad, "--drop-missing"], capsys)
    assert code == 2
    assert "target column 'defects' has a negative value in 1 of 299 rows (line 42: -3)" in err
