"""`deepctrl reproduce retail` run as a user would, in a subprocess."""

import json

import pytest

from deepctrl.cli.main import main
from deepctrl.paper.datasets.retail_m5 import write_m5
from deepctrl.paper.datasets.retail_synthetic import synthetic_market


def test_missing_m5_folder_is_one_clean_line(tmp_path, capsys):
    code = main(["reproduce", "retail", "--m5-dir", str(tmp_path / "m5"), "--quick"])
    assert code == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"deepctrl: error: M5 folder {tmp_path / 'm5'} does not exist"
    ]


def test_m5_folder_without_prices(tmp_path, capsys):
    folder = write_m5(synthetic_market(seed=0, n_items=3).market, tmp_path / "m5")
    (folder / "sell_prices.csv").unlink()
    code = main(
        ["reproduce", "retail", "--m5-dir", str(folder), "--quick", "--out", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert code == 2 and "lacks sell_prices.csv" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_quick_offline_run(cli, tmp_path):
    done = cli("reproduce", "retail", "--quick", "--no-progress", "--out", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["data"]["source"] == "synthetic" and results["quick"] is True
    assert {"groups", "transfer", "alphas", "checks"} <= set(results)
    assert (tmp_path / "out" / "report.md").exists()
    assert (tmp_path / "out" / "fig6_candidate_models.png").exists()


@pytest.mark.slow
def test_quick_run_on_m5_files(cli, tmp_path):
    folder = write_m5(synthetic_market(seed=1, n_items=80).market, tmp_path / "m5")
    done = cli(
        "reproduce",
        "retail",
        "--m5-dir",
        str(folder),
        "--quick",
        "--seeds",
        "1",
        "--no-progress",
        "--out",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert results["data"]["source"] == "m5" and results["seeds"] == [0]
    assert results["data"]["group_sizes"]["NEG0.2"]["test"] > 0
