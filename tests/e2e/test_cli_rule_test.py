"""``deepctrl test-rule`` through the INSTALLED command: verdicts on a small table whose truth
is known, the files it writes, and bad input (one line on stderr, exit code 2)."""

from __future__ import annotations

import json

import pytest

from deepctrl.tabular.known_truth import known_truth_table


@pytest.fixture(scope="module")
def known(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rule-test")
    table = known_truth_table(
        {"north": "follows", "south": "contradicts", "lone": "follows"},
        rows=[300, 300, 1],
        effect=1.0,
        noise=0.5,
        seed=5,
    )
    data = folder / "shops.csv"
    table.round(4).to_csv(data, index=False)
    return folder, data


@pytest.mark.slow
def test_verdicts_and_files_on_a_known_truth_table(cli, known):
    folder, data = known
    out = folder / "out"
    done = cli(
        "test-rule",
        str(data),
        "--target",
        "sales",
        "--group",
        "segment",
        "--monotonic",
        "price=decreasing",
        "--seeds",
        "3",
        "--max-epochs",
        "60",
        "--no-progress",
        "--out",
        str(out),
    )
    assert done.returncode == 0, done.stderr
    result = json.loads((out / "rule_test.json").read_text())
    assert result["rule"] == "monotonic(price, decreasing)" and result["target"] == "sales"
    groups = result["groups"]
    assert groups["north"]["verdict"] == "consistent"
    assert groups["south"]["verdict"] == "contradicted"
    assert groups["lone"] == {
        "rows": 1,
        "verdict": "inconclusive",
        "metric": "mse",
        "reason": "1 row: too few to judge (50 needed)",
    }
    assert result["all"]["rows"] == 601
    for key in (
        "best_alpha",
        "best_alpha_interval",
        "verification_alpha0",
        "error_alpha0",
        "error_best",
        "error_alpha1",
        "enforcement_cost",
        "enforcement_cost_interval",
    ):
        assert key in groups["south"] and key in result["all"]
    assert groups["south"]["enforcement_cost"] > groups["north"]["enforcement_cost"]
    assert (out / "report.md").read_text().startswith("# Rule test: monotonic(price")
    assert (out / "rule_test.png").stat().st_size > 10_000
    assert "south" in done.stdout and "contradicted" in done.stdout
    assert f"wrote {out / 'rule_test.json'}" in done.stdout
    assert "the verdicts judge the data, not cause and effect" in done.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--group", "region", "--monotonic", "price=decreasing"],
            "has no group column 'region' (columns: 'segment', 'price'",
        ),
        (["--group", "segment", "--monotonic", "cost=decreasing"], "cost"),
        (["--group", "segment"], "give the rule to test"),
        (["--group", "sales", "--monotonic", "price=decreasing"], "cannot be the target"),
        (
            ["--group", "segment", "--monotonic", "price=decreasing", "--seeds", "1"],
            "--seeds must be an integer from 2 to 100, got '1'",
        ),
        (
            ["--group", "price", "--monotonic", "price=decreasing"],
            "'price' is the --group column; a rule names a feature",
        ),
        (
            ["--group", "segment", "--monotonic", "price=decreasing", "--rule-class", "high"],
            "--rule-class is for classification, and the task was taken to be regression",
        ),
        (["--group", "segment", "--rules", "nowhere.toml"], "nowhere.toml does not exist"),
        (
            ["--group", "segment", "--monotonic", "price=decreasing", "--class-weight", "balanced"],
            "--class-weight is for classification; the task is regression",
        ),
    ],
)
def test_bad_input_is_one_line(cli, known, args, message):
    folder, data = known
    done = cli("test-rule", str(data), "--target", "sales", *args, "--out", str(folder / "bad"))
    assert done.returncode == 2
    assert done.stderr.startswith("deepctrl: error: ") and message in done.stderr
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert not (folder / "bad").exists()


@pytest.mark.slow
def test_a_class_rule_names_its_class_and_the_option_chooses_it(cli, known):
    import pandas as pd

    folder, data = known
    frame = pd.read_csv(data)  # the same rows, with the target as two classes
    sales = frame.pop("sales")
    frame["level"] = (sales > sales.median()).map({True: "high", False: "low"})
    classes = folder / "levels.csv"
    frame.to_csv(classes, index=False)
    args = ["--target", "level", "--group", "segment", "--monotonic", "price=decreasing"]
    args += ["--seeds", "2", "--max-epochs", "2", "--no-progress"]
    done = cli("test-rule", str(classes), *args, "--out", str(folder / "levels"))
    assert done.returncode == 0, done.stderr
    assert "constrain P('low'), the second of 2 classes in sorted order" in done.stderr
    result = json.loads((folder / "levels" / "rule_test.json").read_text())
    assert result["rule"] == "monotonic(price, decreasing, on 'low')"
    done = cli("test-rule", str(classes), *args, "--rule-class", "high", "--out", str(folder / "h"))
    assert done.returncode == 0 and "constrain P(" not in done.stderr
    result = json.loads((folder / "h" / "rule_test.json").read_text())
    assert result["rule"] == "monotonic(price, decreasing, on 'high')"
    done = cli("test-rule", str(classes), *args, "--loss", "mae", "--out", str(folder / "m"))
    assert done.returncode == 2
    assert "--loss is for regression; a classifier trains on the log loss" in done.stderr
    weighed = [*args, "--class-weight", "balanced", "--out", str(folder / "w")]
    assert cli("test-rule", str(classes), *weighed).returncode == 0


def test_the_loss_option_is_the_error_the_verdicts_compare(cli, known):
    folder, data = known
    args = ["--target", "sales", "--group", "segment", "--monotonic", "price=decreasing"]
    args += ["--seeds", "2", "--max-epochs", "2", "--no-progress", "--loss", "mae"]
    done = cli("test-rule", str(data), *args, "--out", str(folder / "mae"))
    assert done.returncode == 0, done.stderr
    result = json.loads((folder / "mae" / "rule_test.json").read_text())
    assert {g["metric"] for g in result["groups"].values()} == {"mae"}
    report = (folder / "mae" / "report.md").read_text()
    assert "mae at alpha 0" in report and "thresholds were measured with squared errors" in report


def test_an_out_folder_under_a_file_is_refused_before_training(cli, known):
    folder, data = known
    (folder / "afile.txt").write_text("x")
    args = ["--target", "sales", "--group", "segment", "--monotonic", "price=decreasing"]
    done = cli("test-rule", str(data), *args, "--out", str(folder / "afile.txt" / "sub"))
    assert done.returncode == 2
    assert "afile.txt is a file, so the folder cannot be made" in done.stderr


def test_rows_without_a_group_are_dropped_on_request(cli, known):
    import pandas as pd

    folder, data = known
    frame = pd.read_csv(data)
    frame.loc[:1, "segment"] = None
    frame.loc[2, "segment"] = "   "  # spaces only: missing too
    gaps = folder / "gaps.csv"
    frame.to_csv(gaps, index=False)
    args = ["--target", "sales", "--group", "segment", "--monotonic", "price=decreasing"]
    args += ["--seeds", "2", "--max-epochs", "2", "--no-progress"]
    done = cli("test-rule", str(gaps), *args, "--out", str(folder / "gaps"))
    assert done.returncode == 2 and "or drop those rows (--drop-missing)" in done.stderr
    done = cli("test-rule", str(gaps), *args, "--drop-missing", "--out", str(folder / "gaps"))
    assert done.returncode == 0, done.stderr
    assert "dropped 3 rows with a missing group" in done.stderr
    result = json.loads((folder / "gaps" / "rule_test.json").read_text())
    assert result["all"]["rows"] == 598
