"""``deepctrl reproduce cardio --csv`` through the installed command, as a user would run it on
the Kaggle file (here a small file in its format)."""

from __future__ import annotations

import json

import pytest

from deepctrl.paper.datasets.cardio import discover_threshold, load_cardio_csv
from deepctrl.paper.datasets.cardio_synthetic import synthetic_cohort, write_cardio_csv


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kaggle") / "cardio_train.csv"
    write_cardio_csv(synthetic_cohort(2500, seed=11), path)
    return path


@pytest.mark.slow
def test_reproduce_cardio_on_a_csv_file(cli, csv_file, tmp_path):
    out = tmp_path / "cardio"
    done = cli(
        "reproduce",
        "cardio",
        "--csv",
        str(csv_file),
        "--quick",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["data"] == {"source": "csv", "csv": str(csv_file)}
    assert results["dataset"]["rows"] == 2500
    assert results["dataset"]["threshold"] == discover_threshold(load_cardio_csv(csv_file))
    assert list(results["domains"]) == ["Source", "Target 1", "Target 2", "Target 3"]
    assert f"the file `{csv_file}`" in (out / "report.md").read_text()
    assert (out / "bce_vs_alpha.png").is_file()


@pytest.mark.slow
def test_reproduce_cardio_perturbation_on_a_csv_file(cli, csv_file, tmp_path):
    out = tmp_path / "pert"
    done = cli(
        "reproduce",
        "cardio-perturbation",
        "--csv",
        str(csv_file),
        "--quick",
        "--seeds",
        "1",
        "--out",
        str(out),
        "--no-progress",
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((out / "results.json").read_text())
    assert results["perturbations"] == [0.01, 0.05, 0.1, 0.2, 0.5]
    assert (out / "perturbation.png").is_file()


def test_bad_csv_gives_one_line_error(cli, tmp_path):
    frame = synthetic_cohort(50, seed=0)
    frame.loc[[3, 7], "cholesterol"] = 4
    path = write_cardio_csv(frame, tmp_path / "cardio_train.csv")
    done = cli(
        "reproduce",
        "cardio",
        "--csv",
        str(path),
        "--quick",
        "--seeds",
        "1",
        "--out",
        str(tmp_path / "out"),
        "--no-progress",
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"deepctrl: error: {path}: column 'cholesterol' has 2 rows outside {{1, 2, 3}}"
    )
    assert not (tmp_path / "out" / "results.json").exists()
