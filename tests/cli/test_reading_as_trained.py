"""A file to score is read as the model's training file was: a row's numbers and categories
read the same whatever the other rows of its file hold."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.io.file_format import table_model_columns
from deepctrl.tabular.estimators import load_any

FAST = ["--max-epochs", "5", "--no-progress"]


def run(args: list[object], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def predictions(model: Path, path: Path, text: str, capsys) -> tuple[list[float], str]:
    """The predictions for the rows of ``text`` written to ``path``, and what was said."""
    path.write_text(text)
    code, out, err = run(["predict", model, path, "--out", "-"], capsys)
    assert code == 0, err
    return [float(v) for v in out.splitlines()[1:]], err


def _german(n: int = 200) -> str:
    """Whole numbers 1 to 5000 written 3.279, a rate written 4,25 and a target."""
    rng = np.random.default_rng(1)
    qty = np.exp(rng.uniform(0, np.log(5000), n)).round().astype(int)
    rate = rng.choice([3, 3.5, 4, 4.25, 5], n)
    y = 10 + 0.002 * qty + 2 * rate + rng.normal(0, 1, n)
    lines = ["qty;rate;y"]
    for q, r, t in zip(qty, rate, y, strict=True):
        grouped = f"{q:,}".replace(",", ".")
        lines.append(f"{grouped};{str(r).replace('.', ',')};{f'{t:.2f}'.replace('.', ',')}")
    return "\n".join(lines) + "\n"


def test_a_semicolon_file_to_score_reads_dots_as_its_training_file_did(tmp_path, capsys):
    (tmp_path / "train.csv").write_text(_german())
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "train.csv", "--target", "y", "--out", model, *FAST]
    assert run(fit, capsys)[0] == 0
    assert table_model_columns(model).dots == {"qty": "thousands", "rate": "thousands"}
    # alone, no decimal comma tells how 3.789 is written: the training file does (3789)
    one, err = predictions(model, tmp_path / "one.csv", "qty;rate\n3.789;4\n", capsys)
    assert "read column 'qty' as numbers written with thousands separators ('3.789')" in err
    two, _ = predictions(model, tmp_path / "two.csv", "qty;rate\n3.789;4\n10;3,50\n", capsys)
    plain, _ = predictions(model, tmp_path / "plain.csv", "qty;rate\n3789;4\n", capsys)
    assert one[0] == pytest.approx(two[0], abs=1e-6) and one[0] == pytest.approx(plain[0], abs=1e-6)
    # a model file without these facts (an older deepctrl's) reads as before: by the range
    old = tmp_path / "old.deepctrl"
    est = load_any(model)
    est.encoder_.dots = {}
    est.save(old)
    assert table_model_columns(old).dots == {}
    before, err = predictions(old, tmp_path / "one.csv", "qty;rate\n3.789;4\n", capsys)
    three, _ = predictions(old, tmp_path / "three.csv", "qty;rate\n3.789;4\n", capsys)
    assert "read column 'qty' with decimal points ('3.789' as 3.789, not 3789)" in err
    assert before[0] == pytest.approx(three[0]) and before[0] != pytest.approx(one[0], abs=1e-3)


def test_a_column_whose_dots_were_decimal_points_stays_so_beside_decimal_commas(tmp_path, capsys):
    rng = np.random.default_rng(2)
    weight = rng.uniform(5, 40, 150)
    lines = ["weight;count;y"] + [
        f"{w:.3f};{c};{w + c:.2f}" for w, c in zip(weight, rng.integers(0, 9, 150), strict=True)
    ]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")  # pandas' float_format="%.3f"
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "train.csv", "--target", "y", "--out", model, *FAST]
    assert run(fit, capsys)[0] == 0
    assert table_model_columns(model).dots == {"weight": "decimal"}
    # a decimal comma in another column does not make 10.482 kilograms 10482
    comma, err = predictions(model, tmp_path / "c.csv", "weight;count\n10.482;2,5\n", capsys)
    point, _ = predictions(model, tmp_path / "p.csv", "weight;count\n10.482;2.5\n", capsys)
    assert comma[0] == pytest.approx(point[0], abs=1e-6)
    assert "as the model's training file wrote them" in err


def test_a_category_is_matched_by_its_text_whatever_the_other_rows(tmp_path, capsys):
    rng = np.random.default_rng(0)
    size = rng.choice(["S", "M", "L", "36,5", "40,5"], 200)
    x = rng.uniform(0, 10, 200).round(2)
    effect = {"S": 0, "M": 1, "L": 2, "36,5": 3, "40,5": 4}
    lines = ["x;size;y"] + [
        f"{str(a).replace('.', ',')};{s};{str(round(a + effect[s], 2)).replace('.', ',')}"
        for a, s in zip(x, size, strict=True)
    ]
    (tmp_path / "shoes.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "shoes.csv", "--target", "y", "--out", model, *FAST]
    assert run(fit, capsys)[0] == 0
    # alone, "36,5" looks like the number 36.5: it is the training category 36,5 all the same
    one, err = predictions(model, tmp_path / "one.csv", "x;size\n5,0;36,5\n", capsys)
    assert "not seen in training" not in err
    three, _ = predictions(model, tmp_path / "three.csv", "x;size\n5,0;36,5\n5,0;S\n", capsys)
    assert one[0] == pytest.approx(three[0], abs=1e-6)
    _, err = predictions(model, tmp_path / "new.csv", "x;size\n5,0;38,5\n", capsys)
    assert "1 row has a category not seen in training (such as '38,5')" in err


def _category_model(
    tmp_path: Path, name: str, effect: dict[str, float], p: list[float] | None, capsys
) -> Path:
    """A model fitted with ``--categorical name`` on 200 rows whose target is a number x
    plus the effect of the row's category (drawn with probabilities ``p``)."""
    rng = np.random.default_rng(3)
    values = rng.choice(list(effect), 200, p=p)
    x = rng.uniform(0, 1, 200)
    lines = [f"{name},x,y"] + [
        f"{v},{a:.3f},{a + effect[v]:.3f}" for v, a in zip(values, x, strict=True)
    ]
    (tmp_path / "train.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "train.csv", "--target", "y", "--categorical", name]
    assert run([*fit, "--out", model, *FAST], capsys)[0] == 0
    return model


def test_a_category_read_as_numbers_in_training_finds_them_alone_or_beside_text(tmp_path, capsys):
    effect = {"$5": 1, "$10": 2, "$20": 3, "none": 0}
    model = _category_model(tmp_path, "tier", effect, [0.3, 0.3, 0.2, 0.2], capsys)
    assert sorted(map(str, table_model_columns(model).categories["tier"])) == [
        "10",
        "20",
        "5",
        "none",
    ]
    # "$5" is the training category 5 alone, and beside as many "none" rows as numbers,
    # written "5" or "$5.00" too
    alone, err = predictions(model, tmp_path / "a.csv", "tier,x\n$5,0.5\n", capsys)
    rows = "tier,x\n$5,0.5\nnone,0.5\nnone,0.5\nnone,0.5\n5,0.5\n$5.00,0.5\n"
    beside, err2 = predictions(model, tmp_path / "b.csv", rows, capsys)
    assert "not seen in training" not in err + err2
    assert beside[0] == pytest.approx(alone[0], abs=1e-6)
    assert beside[4:] == pytest.approx([alone[0]] * 2, abs=1e-6)
    assert beside[1] != pytest.approx(alone[0], abs=1e-3)


def test_a_code_with_leading_zeros_is_not_another_code_by_number(tmp_path, capsys):
    model = _category_model(tmp_path, "code", {"1": 2, "2": 4, "3": 6}, None, capsys)
    rows = "code,x\n1,0.5\n0001,0.5\nnew,0.5\n1.0,0.5\n"
    got, err = predictions(model, tmp_path / "a.csv", rows, capsys)
    assert "'0001'" in err and "not seen in training" in err
    assert got[1] == pytest.approx(got[2], abs=1e-6)  # scored as a new code, as 'new' is
    assert got[1] != pytest.approx(got[0], abs=1e-3)
    assert got[3] == pytest.approx(got[0], abs=1e-6)  # 1.0 is still the number 1


def test_codes_with_leading_zeros_beside_decimals_are_found_as_written(tmp_path, capsys):
    effect = {"012": 2, "2.5": 4, "7": 6}
    model = _category_model(tmp_path, "code", effect, None, capsys)
    rows = "code,x\n012,0.5\n2.5,0.5\n7,0.5\n2.50,0.5\n12,0.5\n"
    got, err = predictions(model, tmp_path / "a.csv", rows, capsys)
    assert "'012'" not in err and "'12'" in err  # 12 is a new code, 012 a training one
    assert got[0] != pytest.approx(got[4], abs=1e-3)
    assert got[3] == pytest.approx(got[1], abs=1e-6)  # 2.50 is the number 2.5


def test_text_left_among_a_model_columns_numbers_is_named_with_its_line(tmp_path, capsys):
    rng = np.random.default_rng(0)
    w = rng.uniform(1, 12, 120)
    v = rng.uniform(1, 9, 120)
    lines = ["w;v;y"] + [
        f"{a:.3f}".replace(".", ",")
        + ";"
        + f"{b:.2f}".replace(".", ",")
        + ";"
        + f"{a + b:.2f}".replace(".", ",")
        for a, b in zip(w, v, strict=True)
    ]
    (tmp_path / "dec.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "dec.deepctrl"
    fit = ["fit", tmp_path / "dec.csv", "--target", "y", "--out", model, "--max-epochs", "2"]
    assert main([str(a) for a in [*fit, "--no-progress"]]) == 0
    (tmp_path / "mixed.csv").write_text("w;v\n1;4,5\n2;4.25\n")
    capsys.readouterr()
    assert main(["predict", str(model), str(tmp_path / "mixed.csv"), "--out", "-"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith("column 'v' has text in 1 of 2 rows (line 3: '4.25')"), err


def test_an_unseen_category_is_not_read_as_missing_when_training_had_missing_ones(tmp_path, capsys):
    """A shop column with empty cells in training: a new shop is unseen (all zeros, with a
    warning), as in Python and the ONNX file, not the missing shop's category."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=300).round(3)
    shop = rng.choice(["a", "b", "c", ""], 300)
    y = x + 2 * (shop == "a") - 3 * (shop == "") + rng.normal(0, 0.1, 300)
    lines = ["x,shop,y"] + [f"{a},{s},{t:.3f}" for a, s, t in zip(x, shop, y, strict=True)]
    (tmp_path / "shops.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "shops.csv", "--target", "y", "--out", model, *FAST]
    assert run(fit, capsys)[0] == 0
    got, err = predictions(model, tmp_path / "new.csv", "x,shop\n0,zzz\n0,\n", capsys)
    assert "1 row has a category not seen in training (such as 'zzz')" in err
    est = load_any(model)
    with pytest.warns(UserWarning, match="not seen in training"):
        want = est.predict(pd.DataFrame({"x": [0.0, 0.0], "shop": ["zzz", None]}))
    assert got == pytest.approx(want.tolist(), abs=1e-5)
    assert abs(got[0] - got[1]) > 0.1


def test_text_in_a_model_number_column_is_named_whatever_else_is_missing(tmp_path, capsys):
    """An empty cell beside one stray text must not make the other numbers text: the error
    names the text's line, and --drop-missing drops that row and the empty one only."""
    rng = np.random.default_rng(0)
    x, z = rng.uniform(0, 10, 200).round(2), rng.uniform(0, 1, 200).round(3)
    lines = ["x,z,y"] + [f"{a},{b},{a + b:.3f}" for a, b in zip(x, z, strict=True)]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    assert run(["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    rows = "x,z,y\n5.5,0.1,5.6\n,0.2,1\nabc,0.3,2\n4,0.4,4.4\n6,0.5,6.5\n"
    (tmp_path / "new.csv").write_text(rows)
    code, _, err = run(["predict", model, tmp_path / "new.csv", "--out", "-"], capsys)
    assert code == 2 and "column 'x' has text in 1 of 5 rows (line 4: 'abc')" in err, err
    sweep = ["sweep", model, tmp_path / "new.csv", "--drop-missing", "--alphas", "0"]
    code, _, err = run(sweep, capsys)
    assert code == 0 and "dropped 2 of 5 rows" in err, err


def test_a_model_fitted_on_an_array_scores_a_file_by_position_without_a_warning(tmp_path, capsys):
    import deepctrl as dc

    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 2))
    y = 2 * X[:, 0] + rng.normal(size=150)
    est = dc.DeepCTRLRegressor(rules=[dc.Monotonic(0, "increasing")], max_epochs=3, random_state=0)
    model = est.fit(X, y).save(tmp_path / "array.deepctrl")
    rows = pd.DataFrame(X[:40].round(6), columns=["x0", "x1"])
    scored, err = predictions(model, tmp_path / "rows.csv", rows.to_csv(index=False), capsys)
    assert "warning" not in err
    np.testing.assert_allclose(scored, est.predict(rows.to_numpy()), rtol=1e-6)
    code, out, err = run(["sweep", model, tmp_path / "rows.csv", "--alphas", "0,1"], capsys)
    assert code == 0 and "warning" not in err
    code, out, err = run(
        ["export", model, "--check", tmp_path / "rows.csv", "--out", tmp_path / "m.onnx"], capsys
    )
    assert code == 0 and "warning" not in err and "checked: on the 40 rows" in out


def test_day_numbers_in_a_date_column_name_the_file_line_and_the_form(tmp_path, capsys):
    rng = np.random.default_rng(5)
    day = pd.Timestamp("2024-01-01") + pd.to_timedelta(rng.integers(0, 300, 120), "D")
    frame = pd.DataFrame({"day": day.strftime("%Y-%m-%d"), "x": rng.uniform(0, 1, 120)})
    frame["y"] = frame["x"] + rng.normal(0, 0.1, 120)
    frame.to_csv(tmp_path / "dated.csv", index=False)
    model = tmp_path / "m.deepctrl"
    assert (
        run(["fit", tmp_path / "dated.csv", "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    )
    (tmp_path / "serial.csv").write_text("day,x\n45433,0.5\n")
    for command in (
        ["predict", model, tmp_path / "serial.csv", "--out", "-"],
        ["sweep", model, tmp_path / "serial.csv"],
    ):
        code, _, err = run(command, capsys)
        assert code == 2
        assert err.strip() == (
            f"deepctrl: error: {tmp_path / 'serial.csv'}: column 'day' holds dates, but "
            "numbers in 1 of 1 rows (line 2: '45433'); write dates as YYYY-MM-DD (a "
            "spreadsheet's day numbers are not read as dates)"
        )


def test_a_city_written_with_a_separate_accent_mark_is_the_training_city(tmp_path, capsys):
    # the same city typed on Windows (one ö) and exported on macOS (o and a combining mark)
    composed, marks = "K\u00f6ln", "Ko\u0308ln"
    rng = np.random.default_rng(0)
    city = rng.choice([composed, marks, "Bonn"], 150)
    x = rng.normal(size=150)
    y = x + 3.0 * (city != "Bonn") + rng.normal(0, 0.1, 150)
    train = tmp_path / "train.csv"
    pd.DataFrame({"x": x, "city": city, "y": y}).to_csv(train, index=False)
    model = tmp_path / "m.deepctrl"
    assert run(["fit", train, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    assert load_any(model).encoder_.column("city").categories == ["Bonn", composed]
    rows = f"x,city\n0,{marks}\n0,{composed}\n"
    got, err = predictions(model, tmp_path / "new.csv", rows, capsys)
    assert "not seen in training" not in err
    assert got[0] == got[1]
