"""Codes written with leading zeros (`00126`): group labels as written, and a note for
features read as numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

from deepctrl.cli.main import main

FAST = ["--seeds", "2", "--max-epochs", "2", "--no-progress", "--min-rows", "20"]


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def items_csv(tmp_path, codes: list[str], seed: int) -> pd.DataFrame:
    """items.csv: 120 rows of an item code, a price and units that fall with it."""
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({"item": rng.choice(codes, 120), "price": rng.uniform(1, 9, 120)})
    frame["units"] = 20 - frame["price"] + rng.normal(0, 0.3, 120)
    frame.to_csv(tmp_path / "items.csv", index=False)
    return frame


def test_group_codes_keep_their_leading_zeros(tmp_path, capsys):
    items_csv(tmp_path, ["00126", "00787", "01863"], seed=0)
    args = ["test-rule", tmp_path / "items.csv", "--target", "units", "--group", "item"]
    rule = ["--monotonic", "price=decreasing", "--out", tmp_path / "r"]
    code, _, err = run([*args, *rule, *FAST], capsys)
    assert code == 0, err
    groups = json.loads((tmp_path / "r" / "rule_test.json").read_text())["groups"]
    assert sorted(groups) == ["00126", "00787", "01863"]
    assert "| 00126 |" in (tmp_path / "r" / "report.md").read_text()
    items_csv(tmp_path, ["2", "02", "2.5"], seed=1)  # "02" is not "2", beside 2.5 too
    code, _, err = run(
        [*args, "--monotonic", "price=decreasing", "--out", tmp_path / "z", *FAST], capsys
    )
    assert code == 0, err
    groups = json.loads((tmp_path / "z" / "rule_test.json").read_text())["groups"]
    assert sorted(groups) == ["02", "2", "2.5"]
    items_csv(tmp_path, ["00126", "00787", "01863"], seed=0)
    code, _, err = run([*args, *rule, *FAST, "--categorical", "item"], capsys)
    assert code == 2
    assert err.strip() == (
        "deepctrl: error: --categorical item: 'item' is the --group column, whose values are "
        "labels kept as written (codes such as 007 keep their zeros)"
    )


def test_zero_padded_codes_among_the_features_get_a_note(tmp_path, capsys):
    frame = items_csv(tmp_path, ["00126", "00787", "09461"], seed=1)
    fit = ["fit", tmp_path / "items.csv", "--target", "units", "--out", tmp_path / "m.deepctrl"]
    quick = ["--max-epochs", "2", "--no-progress"]
    code, _, err = run([*fit, *quick], capsys)
    assert code == 0, err
    assert (
        f"note: column 'item' holds whole numbers written with leading zeros (such as "
        f"{frame['item'].iloc[0]}), read as numbers; if they are codes, give --categorical item"
    ) in err
    code, _, err = run([*fit, *quick, "--categorical", "item"], capsys)
    assert code == 0 and "leading zeros" not in err, err


def test_categorical_codes_keep_their_zeros_apart(tmp_path, capsys):
    rng = np.random.default_rng(0)
    codes = np.array(["01", "1", "001"] * 100)
    effect = {"01": 0.0, "1": 5.0, "001": 10.0}
    x = rng.uniform(0, 1, 300)
    frame = pd.DataFrame({"code": codes, "x": x, "y": [effect[c] for c in codes] + x})
    frame.to_csv(tmp_path / "codes.csv", index=False)
    model = tmp_path / "codes.deepctrl"
    args = ["fit", tmp_path / "codes.csv", "--target", "y", "--categorical", "code"]
    code, out, err = run([*args, "--out", model, "--max-epochs", "30", "--no-progress"], capsys)
    assert code == 0, err
    assert "one value in every row" not in err and ", 4 inputs after encoding" in out
    pd.DataFrame({"code": ["01", "1", "001"], "x": [0.5] * 3}).to_csv(
        tmp_path / "new.csv", index=False
    )
    code, out, err = run(["predict", model, tmp_path / "new.csv", "--out", "-"], capsys)
    assert code == 0, err
    predicted = [float(v) for v in out.split()[1:]]
    assert predicted[1] - predicted[0] > 3 and predicted[2] - predicted[1] > 3  # three codes


def test_codes_that_are_one_value_as_written_still_get_the_note(tmp_path, capsys):
    pd.DataFrame({"code": ["01"] * 60, "x": np.arange(60), "y": np.arange(60)}).to_csv(
        tmp_path / "one.csv", index=False
    )
    args = ["fit", tmp_path / "one.csv", "--target", "y", "--categorical", "code"]
    code, _, err = run(
        [*args, "--out", tmp_path / "m", "--max-epochs", "2", "--no-progress"], capsys
    )
    assert code == 0, err
    assert "column 'code' holds one value in every row ('01'), from which" in err
