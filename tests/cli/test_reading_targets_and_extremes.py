"""How the command line reads a target column (labels spelled like missing values, class
codes with leading zeros) and numbers too large for the model."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.cli.table_cleaning import clean_columns
from deepctrl.cli.table_reading import read_table

FAST = ["--max-epochs", "2", "--no-progress"]


def _cleaned(tmp_path: Path, text: str, target: str, drop: bool = False) -> pd.DataFrame:
    path = tmp_path / "t.csv"
    path.write_text(text)
    frame = read_table(path)
    return clean_columns(frame, list(frame.columns), path, drop, targets=[target])


def test_a_text_target_keeps_labels_spelled_like_missing_values(tmp_path, capsys):
    rows = "x,severity\n1,None\n2,Mild\n3,NA\n4,  \n5,N/A\n6,null\n7,NaN\n8,\n"
    frame = _cleaned(tmp_path, rows, "severity")
    assert frame["severity"].tolist() == ["None", "Mild", "NA", "N/A", "null", "NaN"]
    assert "dropped 2 of 8 rows with a missing target" in capsys.readouterr().err


def test_a_number_target_reads_nan_text_as_missing(tmp_path, capsys):
    frame = _cleaned(tmp_path, "x,sales\n1,1.5\n2,NaN\n3,NA\n4,2.5\n", "sales")
    assert frame["sales"].tolist() == [1.5, 2.5]
    assert "dropped 2 of 4 rows" in capsys.readouterr().err


def test_class_codes_with_leading_zeros_stay_as_written(tmp_path):
    frame = _cleaned(tmp_path, "x,code\n1,001\n2,010\n3,002\n4,\n", "code")
    assert frame["code"].tolist() == ["001", "010", "002"]
    plain = _cleaned(tmp_path, "x,code\n1,1\n2,10\n3,0\n", "code")
    assert plain["code"].tolist() == [1, 10, 0]


@pytest.mark.parametrize("value", ["1e308", "-5e39"])
def test_a_number_beyond_float32_is_refused_with_its_line(tmp_path, value):
    rows = f"x,y\n1,2\n{value},3\n2,4\n"
    with pytest.raises(ValueError, match=r"column 'x' has a number too large for float32 .*line 3"):
        _cleaned(tmp_path, rows, "y")
    assert _cleaned(tmp_path, rows, "y", drop=True)["x"].tolist() == [1, 2]


def test_export_check_notes_text_read_as_missing_that_a_server_would_send(tmp_path, capsys):
    rng = np.random.default_rng(0)
    plan = rng.choice(["None", "Basic", "Pro"], 120)
    x = rng.normal(size=120)
    y = np.where(x + (plan == "Pro") > 0.5, "yes", "no")
    pd.DataFrame({"x": x, "plan": plan, "y": y}).to_csv(tmp_path / "t.csv", index=False)
    model, onnx = tmp_path / "t.deepctrl", tmp_path / "t.onnx"
    assert main(["fit", str(tmp_path / "t.csv"), "--target", "y", *FAST, "--out", str(model)]) == 0
    rows = int((plan == "None").sum())
    assert (
        capsys.readouterr().err.count(
            f"note: {tmp_path / 't.csv'}: column 'plan' has {rows} row(s) written 'None', read as "
            "missing like empty cells"
        )
        == 1
    )  # a region "NA" is lost the same way: fit says so
    assert main(["export", str(model), "--check", str(tmp_path / "t.csv"), "--out", str(onnx)]) == 0
    err = capsys.readouterr().err
    assert f"column 'plan' has {rows} row(s) written 'None', read as missing" in err


def test_export_check_notes_categories_the_file_writes_otherwise(tmp_path, capsys):
    rng = np.random.default_rng(0)
    tier = rng.choice(["$5", "$10", "$20"], 120)  # read as the numbers 5, 10, 20
    x = rng.normal(size=120)
    frame = pd.DataFrame({"x": x, "tier": tier, "code": rng.choice(["a", "b"], 120)})
    frame["y"] = x + (tier == "$20") + rng.normal(0, 0.1, 120)
    frame.to_csv(tmp_path / "t.csv", index=False)
    model, onnx = tmp_path / "t.deepctrl", tmp_path / "t.onnx"
    fit = ["fit", str(tmp_path / "t.csv"), "--target", "y", "--categorical", "tier", *FAST]
    assert main([*fit, "--out", str(model)]) == 0
    capsys.readouterr()
    assert main(["export", str(model), "--check", str(tmp_path / "t.csv"), "--out", str(onnx)]) == 0
    err = capsys.readouterr().err
    first = str(tier[0])
    assert (
        f"note: {tmp_path / 't.csv'}: column 'tier' has 120 row(s) whose text is not the "
        f"category's ({first!r} is the category {first[1:]!r}); sent as written, the ONNX "
        "file takes them for an unseen category: send the category's text"
    ) in err
    assert "column 'code'" not in err  # written as its categories


def test_each_missing_spelling_of_a_feature_is_counted_on_its_own(tmp_path, capsys):
    rng = np.random.default_rng(0)
    region = np.array(["n/a"] * 20 + ["NA"] * 10 + ["NULL"] * 5 + ["EU"] * 85, dtype=object)
    rng.shuffle(region)
    x = rng.normal(size=120)
    pd.DataFrame({"x": x, "region": region, "y": x + rng.normal(size=120)}).to_csv(
        tmp_path / "t.csv", index=False
    )
    out = tmp_path / "t.deepctrl"
    assert main(["fit", str(tmp_path / "t.csv"), "--target", "y", *FAST, "--out", str(out)]) == 0
    assert (
        "column 'region' has 35 row(s) written 'n/a' (20), 'NA' (10), 'NULL' (5), read as "
        "missing like empty cells"
    ) in capsys.readouterr().err
