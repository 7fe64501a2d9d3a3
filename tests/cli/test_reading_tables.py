"""How the command line reads the user's files: categories that look like numbers, stray
values, whole-number classes with gaps, decimal commas, thousands separators, currency and
percent signs, repeated column names, files that are not UTF-8 text, outputs that would
replace an input, and the notes a model without rules or a many-class rule gets."""

from __future__ import annotations

import gzip
import json
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.cli.table_cleaning import IDENTIFIER, left_out_columns
from deepctrl.cli.table_reading import read_table
from deepctrl.tabular.encoding import TableEncoder
from helpers import stores_csv

FAST = ["--max-epochs", "5", "--no-progress"]


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_category_is_found_by_its_text_when_read_as_another_type():
    enc = TableEncoder.fit(
        pd.DataFrame({"store": ["north", "10", "south"], "open": [True, False, True]})
    )
    again = pd.DataFrame({"store": [10, 10.0, "north"], "open": ["True", "False", "maybe"]})
    with pytest.warns(UserWarning, match="column 'open': 1 row has a category not seen"):
        out = enc.transform(again)
    # store: 10, 10 (north, 10, south sorted as training saw them), then north
    store = out[:, : len(enc.column("store").categories)]
    cats = enc.column("store").categories
    assert [cats[i] for i in store.argmax(axis=1)] == ["10", "10", "north"]
    assert store.sum() == 3
    flags = out[:, len(cats) :]
    assert flags.sum(axis=1).tolist() == [1.0, 1.0, 0.0]


def _stores(folder: Path) -> tuple[Path, Path]:
    stores_csv(folder / "stores.csv")
    new = pd.DataFrame({"store": ["10", "10", "north"], "x": [0.5] * 3})
    new.iloc[:2].to_csv(folder / "tens.csv", index=False)
    new.to_csv(folder / "mixed.csv", index=False)
    return folder / "stores.csv", folder / "stores.deepctrl"


def test_predict_reads_categories_that_look_like_numbers_as_the_model_does(tmp_path, capsys):
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    for name in ("tens", "mixed"):
        code, _, err = run(
            ["predict", model, tmp_path / f"{name}.csv", "--out", tmp_path / f"{name}_p.csv"],
            capsys,
        )
        assert code == 0 and "not seen" not in err, err
    tens = pd.read_csv(tmp_path / "tens_p.csv")["y"].to_numpy()
    mixed = pd.read_csv(tmp_path / "mixed_p.csv")["y"].to_numpy()
    np.testing.assert_allclose(mixed[:2], tens, rtol=1e-6)
    assert tens[0] - mixed[2] > 1.5  # the store "10" sells 3 more than "north"


def test_categorical_reads_codes_that_look_like_numbers(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 200
    size = rng.choice(["1", "2", "2", "XL"], n)
    frame = pd.DataFrame({"size": size, "x": rng.uniform(0, 1, n)})
    frame["y"] = frame["x"] + (frame["size"] == "XL") + rng.normal(0, 0.1, n)
    frame.to_csv(tmp_path / "sizes.csv", index=False)
    code, _, err = run(["fit", tmp_path / "sizes.csv", "--target", "y", "--out", "m"], capsys)
    assert code == 2
    assert "column 'size' has text in" in err and "or --categorical size if its values" in err
    model = tmp_path / "sizes.deepctrl"
    args = ["fit", tmp_path / "sizes.csv", "--target", "y", "--categorical", "size"]
    code, out, err = run([*args, "--out", model, *FAST], capsys)
    assert code == 0, err
    assert "trained DeepCTRLRegressor on 160 rows (validated on 40), 4 inputs" in out
    code, _, err = run([*args[:-1], "nope", "--out", model], capsys)
    assert err.strip().endswith(
        f"--categorical nope: {tmp_path / 'sizes.csv'} has no feature column 'nope'"
    )


def test_categorical_on_the_target_weight_or_id_column_names_its_role(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 100
    frame = pd.DataFrame({"id": range(n), "x": rng.uniform(0, 1, n), "w": rng.integers(1, 3, n)})
    frame["y"] = frame["x"] + rng.normal(0, 0.1, n)
    frame.to_csv(tmp_path / "t.csv", index=False)
    fit = ["fit", tmp_path / "t.csv", "--target", "y", "--weight-column", "w"]
    fit += ["--id-column", "id", "--out", tmp_path / "m", *FAST]
    roles = {"w": "the --weight-column", "y": "the target", "id": "an --id-column"}
    for name, role in roles.items():
        code, _, err = run([*fit, "--categorical", name], capsys)
        assert code == 2
        assert (
            err.strip()
            == f"deepctrl: error: --categorical {name}: {name!r} is {role}, not a feature"
        )
    rule_test = ["test-rule", tmp_path / "t.csv", "--target", "y", "--monotonic", "x=increasing"]
    code, _, err = run([*rule_test, "--categorical", "y"], capsys)
    assert err.strip() == "deepctrl: error: --categorical y: 'y' is the target, not a feature"


def test_test_rule_reads_codes_that_look_like_numbers_with_categorical(tmp_path, capsys):
    rng = np.random.default_rng(1)
    n = 200
    frame = pd.DataFrame({"size": rng.choice(["1", "2", "XL"], n), "x": rng.uniform(0, 1, n)})
    frame["y"] = 2 * frame["x"] + (frame["size"] == "XL") + rng.normal(0, 0.1, n)
    frame.to_csv(tmp_path / "sizes.csv", index=False)
    args = ["test-rule", tmp_path / "sizes.csv", "--target", "y", "--monotonic", "x=increasing"]
    code, _, err = run([*args, "--out", tmp_path / "r"], capsys)
    assert code == 2 and "or --categorical size if its values" in err
    more = ["--categorical", "size", "--seeds", "2", "--max-epochs", "3", "--no-progress"]
    code, out, err = run([*args, *more, "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    assert (tmp_path / "r" / "rule_test.json").is_file() and "all" in out


def test_an_empty_column_is_left_out_with_a_note(tmp_path, capsys):
    frame = pd.DataFrame({"x": np.arange(60) / 60, "blank": np.nan, "none": ""})
    frame["y"] = 2 * frame["x"]
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "t.deepctrl"
    code, out, err = run(
        ["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST], capsys
    )
    assert code == 0, err
    for name in ("blank", "none"):  # an empty CSV column reads as NaN, whatever was meant
        assert f"left out column {name!r}, which has no values" in err
    assert "1 inputs" in out


def test_whole_number_classes_stay_whole_when_some_are_missing(tmp_path, capsys):
    rng = np.random.default_rng(2)
    n = 240
    x = rng.uniform(0, 1, n)
    cls = np.digitize(x, [0.33, 0.66]).astype(float)
    cls[::20] = np.nan
    pd.DataFrame({"x": x, "z": rng.uniform(0, 1, n), "cls": cls}).to_csv(
        tmp_path / "c.csv", index=False
    )
    model = tmp_path / "c.deepctrl"
    args = ["fit", tmp_path / "c.csv", "--target", "cls", "--monotonic", "x=increasing"]
    code, out, err = run([*args, "--rule-class", "2", "--out", model, *FAST], capsys)
    assert code == 0, err
    assert "dropped 12 of 240 rows with a missing target" in err
    assert "rules: monotonic(x, increasing, on 2): P('2')" in out
    code, out, err = run([*args, "--out", model, *FAST], capsys)
    assert (
        "deepctrl: warning: rule monotonic(x, increasing) names no class, so it acts on "
        "P('0'), the first of 3 classes in sorted order; name the class to choose another "
        "(output=LABEL, or --rule-class LABEL on the command line); if the target is a "
        "quantity, a regressor (--task regression) fits it\n"
    ) in err
    run(["predict", model, tmp_path / "c.csv", "--out", tmp_path / "p.csv"], capsys)
    assert pd.read_csv(tmp_path / "p.csv").columns.tolist() == [
        "cls",
        "proba_0",
        "proba_1",
        "proba_2",
    ]


def test_a_semicolon_file_with_decimal_commas_reads_as_numbers(tmp_path):
    path = tmp_path / "eu.csv"
    path.write_text("price;name;qty\n1,5;a;3\n-2,25;b;4\n;c,d;5\n10;e;6\n", encoding="utf-8")
    frame = read_table(path)
    assert frame["price"].tolist()[:2] == [1.5, -2.25] and np.isnan(frame["price"][2])
    assert frame["price"][3] == 10.0
    assert frame["name"].tolist() == ["a", "b", "c,d", "e"]  # text stays text
    assert frame["qty"].dtype.kind == "i"


def test_thousands_separators_and_a_trailing_separator_read_as_a_user_means(tmp_path, capsys):
    comma = tmp_path / "c.csv"
    comma.write_text('price,qty,\n"1,234.5",3,\n56,4,\n"2,000",5,\n')
    frame = read_table(comma)
    assert frame.columns.tolist() == ["price", "qty"]
    assert frame["price"].tolist() == [1234.5, 56.0, 2000.0]
    semicolon = tmp_path / "s.csv"
    semicolon.write_text("price;code\n1.234,5;a\n56;b\n2.000;c\n")
    assert read_table(semicolon)["price"].tolist() == [1234.5, 56.0, 2000.0]
    err = capsys.readouterr().err
    assert "left out 1 empty column(s) without a name" in err
    assert "read column 'price' as numbers written with thousands separators ('1,234.5')" in err
    text = tmp_path / "t.csv"  # a comma inside text is no thousands separator
    text.write_text('name,n\n"Smith, J",1\n"1,234",2\n')
    assert read_table(text)["name"].tolist() == ["Smith, J", "1,234"]


def test_decimal_commas_in_scientific_notation_read_as_numbers(tmp_path):
    """German and French spreadsheets write 0.0000131 as 1,31E-05 in a semicolon file."""
    path = tmp_path / "lab.csv"
    path.write_text("conc;dose\n0,25;1\n1,31E-05;2\n0,4;3\n2E3;4\n", encoding="utf-8")
    assert read_table(path)["conc"].tolist() == [0.25, 1.31e-05, 0.4, 2000.0]


def test_a_semicolon_file_reads_grouped_whole_numbers_as_thousands(tmp_path, capsys):
    # a German spreadsheet writes 1927 as "1.927" and 0.25 as "0,25": pandas alone reads 1.927
    german = tmp_path / "de.csv"
    german.write_text("sqft;price;share\n1.927;297.004;0,25\n850;1.003.500;1,5\n;99;2\n")
    frame = read_table(german)
    assert frame["sqft"].tolist()[:2] == [1927.0, 850.0] and np.isnan(frame["sqft"][2])
    assert frame["price"].tolist() == [297004.0, 1003500.0, 99.0]
    assert frame["share"].tolist() == [0.25, 1.5, 2.0]
    err = capsys.readouterr().err
    assert "read column 'sqft' as numbers written with thousands separators ('1.927')" in err
    assert "'share'" not in err
    # without a decimal comma in the file, its dots are decimal points, as pandas reads them
    points = tmp_path / "points.csv"
    points.write_text("x;y\n2.125;1\n3;2\n7.375;3\n")
    assert read_table(points)["x"].tolist() == [2.125, 3.0, 7.375]
    # a dot before other than three digits says so for the whole column, "Total" kept as text
    mixed = tmp_path / "mixed.csv"
    mixed.write_text("x;y\n2.125;1\n3;2\n1.25;4\n7.375;3\nTotal;5\n")
    assert read_table(mixed)["x"].tolist() == ["2.125", "3", "1.25", "7.375", "Total"]
    # a model trained on thousands reads a file to score, with no decimal comma to tell, as
    # its training values say: 1.200 square metres are 1200 where the model saw 850 to 2100
    one = tmp_path / "one.csv"
    one.write_text("sqft;rent\n1.200;\n")
    assert read_table(one, {"sqft": (850.0, 2100.0)})["sqft"].tolist() == [1200.0]
    assert read_table(one)["sqft"].tolist() == [1.2]


def test_three_decimals_are_decimals_unless_the_column_shows_thousands(tmp_path, capsys):
    # pandas writes to_csv(sep=";", float_format="%.3f"): 10.482 is no 10482
    frame = pd.DataFrame({"weight": [10.482, 29.631, 8.8], "share": [0.897, 0.16, 0.04]})
    frame.to_csv(tmp_path / "s.csv", sep=";", index=False, float_format="%.3f")
    read = read_table(tmp_path / "s.csv")
    assert read["weight"].tolist() == [10.482, 29.631, 8.8]
    assert read["share"].tolist() == [0.897, 0.16, 0.04]
    err = capsys.readouterr().err
    assert "note: read column 'weight' with decimal points ('10.482' as 10.482, not 10482)" in err
    assert "'share'" not in err
    comma = tmp_path / "c.csv"  # a first group of 0 is no thousands grouping
    comma.write_text('x,n\n"0,436",1\n"-0,436",2\n"1,234",3\n"2,500",4\n7,5\n')
    assert read_table(comma)["x"].tolist() == ["0,436", "-0,436", 1234.0, 2500.0, 7.0]


def test_text_among_thousands_is_named_or_dropped_and_predict_reads_them(tmp_path, capsys):
    rng = np.random.default_rng(9)
    amount = rng.integers(100, 5000, 120)
    text = np.array([f"{a:,}" for a in amount], dtype=object)
    text[5] = "unknown"
    data, model = tmp_path / "t.csv", tmp_path / "t.deepctrl"
    pd.DataFrame({"amount": text, "y": amount / 1000 + rng.normal(0, 0.1, 120)}).to_csv(
        data, index=False
    )
    args = ["fit", data, "--target", "y", "--out", model, *FAST]
    code, _, err = run(args, capsys)
    assert code == 2
    assert "column 'amount' has text in 1 of 120 rows (line 7: 'unknown'); use" in err
    code, out, err = run([*args, "--drop-missing"], capsys)
    assert code == 0, err
    assert "dropped 1 of 120 rows" in err and "1 inputs after encoding" in out  # a number
    new = tmp_path / "new.csv"
    new.write_text('amount\n"2,642"\n2642\n')
    code, _, err = run(["predict", model, new, "--out", tmp_path / "p.csv"], capsys)
    assert code == 0, err
    predicted = pd.read_csv(tmp_path / "p.csv")["y"]
    assert predicted[0] == predicted[1]
    new.write_text('amount\n"2,642"\nunknown\n')  # half text: the number is read, the text named
    code, _, err = run(["predict", model, new, "--out", tmp_path / "p.csv"], capsys)
    assert code == 2 and "has text in 1 of 2 rows (line 3: 'unknown')" in err
    assert "decimal comma" not in err
    unique = [f"{1000 + i:,}" for i in range(60)]  # a number per row is no identifier
    unique[3] = "unknown"
    pd.DataFrame({"amount": unique}).to_csv(new, index=False)
    assert left_out_columns(read_table(new), ["amount"], new) == {}


def test_percent_and_currency_signs_are_left_out_with_a_note(tmp_path, capsys):
    comma = tmp_path / "c.csv"
    comma.write_text(
        'off,price,fee,note\n12%,$3.50,$5,50% off\n5.5 %,€4,$7,a\n0%,"£1,234.50",free,b\n'
        ",3.50 €,-$2,c\n"
    )
    frame = read_table(comma)
    assert frame["off"].tolist()[:3] == [12.0, 5.5, 0.0] and np.isnan(frame["off"][3])
    assert frame["price"].tolist() == [3.5, 4.0, 1234.5, 3.5]
    assert frame["fee"].tolist() == [5.0, 7.0, "free", -2.0]  # the text stays, to be named
    assert frame["note"].tolist() == ["50% off", "a", "b", "c"]  # text stays text
    semicolon = tmp_path / "s.csv"
    semicolon.write_text("price;off\n3,50 €;12,5%\n1.234,50 €;7%\n")
    frame = read_table(semicolon)
    assert frame["price"].tolist() == [3.5, 1234.5] and frame["off"].tolist() == [12.5, 7.0]
    err = capsys.readouterr().err
    assert (
        "note: read column 'off' as numbers written with a percent sign: '12%' read as 12\n" in err
    )
    assert (
        "note: read column 'price' as numbers written with a currency sign ($, £, €): '$3.50' "
        "read as 3.5\n"
    ) in err
    assert "'note'" not in err
    rng = np.random.default_rng(10)  # a rule on such a column: a number column
    off = rng.integers(0, 30, 80)
    shop = pd.DataFrame({"off": [f"{d}%" for d in off], "y": off / 10 + rng.normal(0, 1, 80)})
    shop.to_csv(tmp_path / "shop.csv", index=False)
    args = ["fit", tmp_path / "shop.csv", "--target", "y", "--monotonic", "off=increasing"]
    code, out, err = run([*args, "--out", tmp_path / "m", *FAST], capsys)
    assert code == 0, err
    assert "rules: monotonic(off, increasing): y" in out


def test_kept_column_notes_count_missing_values_and_spot_compact_dates(capsys):
    n = 60
    frame = pd.DataFrame(
        {
            "notes": ["VIP" if i % 10 == 0 else None for i in range(n)],
            "tax": 1.0,
            "day": pd.date_range("2024-01-25", periods=n).strftime("%Y%m%d").astype(int),
            "size": np.arange(n) % 7,
        }
    )
    assert left_out_columns(frame, list(frame.columns), Path("t.csv")) == {}
    err = capsys.readouterr().err
    assert "'notes'" not in err  # one value, or none: the model tells them apart
    assert "column 'tax' holds one value in every row (1.0)" in err
    assert (
        "note: t.csv: column 'day' holds whole numbers that look like dates written YYYYMMDD "
        "(20240125), which the model reads as numbers; written YYYY-MM-DD (2024-05-31) they "
        "are read as dates\n"
    ) in err
    assert "'size'" not in err


def test_hints_quote_column_names_as_a_shell_reads_them(tmp_path, capsys):
    n = 60
    frame = pd.DataFrame({"Order No": [f"A{i}" for i in range(n)], "Customer ID": np.arange(n)})
    assert left_out_columns(frame, list(frame.columns), Path("t.csv")) == {"Order No": IDENTIFIER}
    err = capsys.readouterr().err
    assert "--id-column 'Order No' says so and silences this note" in err
    assert "--id-column 'Customer ID' leaves it out" in err
    prices = pd.DataFrame({"Unit Price ($)": [f"p{i}" for i in range(n)]})
    with pytest.warns(UserWarning, match=r"command line: --id-column 'Unit Price \(\$\)'\)"):
        TableEncoder.fit(prices)
    sizes = tmp_path / "sizes.csv"
    pd.DataFrame({"Size Code": ["1", "2", "XL"] * 20, "y": np.arange(n) / n}).to_csv(
        sizes, index=False
    )
    code, _, err = run(["fit", sizes, "--target", "y", "--out", tmp_path / "m"], capsys)
    assert code == 2 and "or --categorical 'Size Code' if its values are categories" in err


def test_a_column_named_but_for_spaces_around_it_says_so(tmp_path, capsys):
    path = tmp_path / "ws.csv"
    path.write_text("price ,quality, sales\n1,2,3\n4,5,6\n")
    code, _, err = run(["fit", path, "--target", "sales", "--out", tmp_path / "m"], capsys)
    assert code == 2 and err.strip() == (
        f"deepctrl: error: {path} has no target column 'sales' (columns: 'price ', 'quality', "
        "' sales'); column ' sales' has spaces around its name"
    )
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    path.write_text("store, x\nnorth,0.5\n")
    code, _, err = run(["predict", model, path, "--out", "-"], capsys)
    assert code == 2 and err.strip() == (
        f"deepctrl: error: {path} lacks column(s) the model needs: 'x'; column ' x' has spaces "
        "around its name"
    )


def test_numbers_written_with_the_typographic_minus_sign_are_numbers(tmp_path, capsys):
    minus = "\u2212"  # as reports and word processors write a negative number
    comma = tmp_path / "c.csv"
    comma.write_text(f"change,label\n{minus}1.5,{minus}5 dB\n2,a\n{minus}.25,b\n,c\n")
    frame = read_table(comma)
    assert frame["change"].tolist()[:3] == [-1.5, 2.0, -0.25] and np.isnan(frame["change"][3])
    assert frame["label"].tolist() == [f"{minus}5 dB", "a", "b", "c"]  # text stays as written
    semicolon = tmp_path / "s.csv"  # with a decimal comma and a thousands mark
    semicolon.write_text(f"change;n\n{minus}1,5;{minus}1.234\n2,25;7\n")
    frame = read_table(semicolon)
    assert frame["change"].tolist() == [-1.5, 2.25]
    assert frame["n"].tolist() == [-1234.0, 7.0]
    err = capsys.readouterr().err
    assert f"read column 'change' as numbers written with the minus sign {minus}" in err
    assert "'label'" not in err


def test_an_infinite_number_names_its_line_or_is_dropped(tmp_path, capsys):
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, 60)
    frame = pd.DataFrame({"x": x, "y": 2 * x})
    frame.loc[3, "x"] = np.inf
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    args = ["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST]
    code, _, err = run(args, capsys)
    assert code == 2
    assert (
        err.strip()
        .splitlines()[-1]
        .endswith(
            "t.csv: column 'x' has an infinite value in 1 of 60 rows (line 5: inf); leave unknown "
            "values empty; use --drop-missing to drop those rows"
        )
    )
    code, _, err = run([*args, "--drop-missing"], capsys)
    assert code == 0, err
    assert "dropped 1 of 60 rows with missing values, infinities or text" in err


def test_a_blank_class_label_is_a_missing_target(tmp_path, capsys):
    rng = np.random.default_rng(5)
    x = rng.uniform(0, 1, 120)
    label = np.where(x > 0.5, "late", "ontime").astype(object)
    label[[3, 8]] = " "
    pd.DataFrame({"x": x, "status": label}).to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    code, out, err = run(
        ["fit", tmp_path / "t.csv", "--target", "status", "--out", model, *FAST], capsys
    )
    assert code == 0, err
    assert "dropped 2 of 120 rows with a missing target" in err
    assert "trained DeepCTRLClassifier on 94 rows (validated on 24)" in out
    import deepctrl as dc

    assert dc.DeepCTRLClassifier.load(model).classes_.tolist() == ["late", "ontime"]


def test_a_text_target_with_a_value_per_row_is_not_taken_for_classes(tmp_path, capsys):
    rng = np.random.default_rng(6)
    x = rng.uniform(0, 1, 200)
    value = 250_000 + 100_000 * x + rng.normal(0, 5_000, 200)
    price = [f"({v:,.0f} €)" for v in value]  # accounting negatives: not read as numbers
    pd.DataFrame({"x": x, "price": price}).to_csv(tmp_path / "p.csv", index=False)
    args = ["fit", tmp_path / "p.csv", "--target", "price", "--out", tmp_path / "m", *FAST]
    code, _, err = run(args, capsys)
    assert code == 2 and err.count("\n") == 1
    assert "target column 'price' has 200 distinct values in 200 rows, too many to be" in err
    assert "they look like numbers written in a form not read as numbers" in err
    assert "--task classification" in err
    assert run([*args, "--task", "classification"], capsys)[0] == 0  # asked for: trained
    dollars = [f"${v:,.0f}" for v in value]  # a currency sign and a comma: read as numbers
    spaced = [f"{v:,.0f} €".replace(",", " ") for v in value]  # spaces between thousands
    for written in (dollars, spaced):
        pd.DataFrame({"x": x, "price": written}).to_csv(tmp_path / "p.csv", index=False)
        code, _, err = run(args, capsys)
        assert code == 0 and "task: regression (from target column 'price'" in err, err


def test_a_weight_column_and_a_loss_reach_the_model_as_in_python(tmp_path, capsys):
    import deepctrl as dc

    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 200)
    w = rng.choice([0.5, 1.0, 3.0], 200)
    frame = pd.DataFrame({"x": x, "w": w, "y": 3 * x + rng.standard_t(2, 200)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    args = ["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST]
    code, out, err = run([*args, "--loss", "mae", "--weight-column", "w"], capsys)
    assert code == 0, err
    assert "rows weighted by column 'w'" in out
    cli = dc.DeepCTRLRegressor.load(model)
    assert cli.loss == "mae" and cli.feature_names_in_.tolist() == ["x"]  # w is no input
    python = dc.DeepCTRLRegressor(loss="mae", max_epochs=5, random_state=0, verbose=False)
    python.fit(frame[["x"]], frame["y"], sample_weight=frame["w"].to_numpy())
    np.testing.assert_array_equal(cli.predict(frame[["x"]]), python.predict(frame[["x"]]))
    for extra, message in (
        (["--weight-column", "v"], "has no weight column 'v'"),
        (["--weight-column", "y"], "--weight-column 'y' is the target or an id column"),
        (["--task", "classification", "--loss", "mae"], "--loss is for regression"),
    ):
        code, _, err = run([*args, *extra], capsys)
        assert code == 2 and message in err, err


def test_a_row_without_a_weight_or_with_a_negative_one_is_named(tmp_path, capsys):
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 80)
    frame = pd.DataFrame({"x": x, "w": 1.0, "y": 3 * x})
    frame.loc[4, "w"] = np.nan
    frame.to_csv(tmp_path / "gap.csv", index=False)
    frame.loc[4, "w"] = -2.0
    frame.to_csv(tmp_path / "neg.csv", index=False)
    model = tmp_path / "m.deepctrl"
    for name, message in (
        (
            "gap",
            "has no weight in 1 of 80 rows (line 6); every row needs a weight >= 0 "
            "(--drop-missing drops the rows without one)",
        ),
        ("neg", "has a negative weight in 1 of 80 rows (line 6: -2); every row needs a weight"),
    ):
        args = ["fit", tmp_path / f"{name}.csv", "--target", "y", "--weight-column", "w"]
        code, _, err = run([*args, "--out", model, *FAST], capsys)
        assert code == 2 and f"{name}.csv: weight column 'w' {message}" in err, err
    args = ["fit", tmp_path / "gap.csv", "--target", "y", "--weight-column", "w"]
    code, _, err = run([*args, "--out", model, "--drop-missing", *FAST], capsys)
    assert code == 0 and "dropped 1 of 80 rows" in err, err


def test_sweep_names_the_line_of_an_infinite_weight(tmp_path, capsys):
    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 80)
    frame = pd.DataFrame({"x": x, "w": 1.0, "y": 3 * x})
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "t.csv", "--target", "y", "--weight-column", "w", "--out", model]
    assert run([*fit, *FAST], capsys)[0] == 0
    frame.loc[4, "w"] = np.inf
    frame.to_csv(tmp_path / "inf.csv", index=False)
    code, _, err = run(["sweep", model, tmp_path / "inf.csv", "--weight-column", "w"], capsys)
    assert (
        code == 2
        and ("inf.csv: weight column 'w' has an infinite weight in 1 of 80 rows (line 6: inf)")
        in err
    ), err


def test_a_column_named_like_an_onnx_input_gets_a_note_at_fit(tmp_path, capsys):
    rng = np.random.default_rng(8)
    x = rng.uniform(0, 1, 100)
    pd.DataFrame({"alpha": x, "y": 2 * x}).to_csv(tmp_path / "t.csv", index=False)
    args = ["fit", tmp_path / "t.csv", "--target", "y", "--out", tmp_path / "m", *FAST]
    code, _, err = run(args, capsys)
    assert code == 0
    assert "note: column 'alpha' has a name the ONNX file uses for its own input" in err


def test_a_model_number_column_of_text_names_its_line_and_a_decimal_comma(tmp_path, capsys):
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    frame = pd.read_csv(data).drop(columns="y")
    frame["x"] = [f"{v:.2f}".replace(".", ",") for v in frame["x"]]  # every value is text
    frame.to_csv(tmp_path / "eu.csv", index=False)
    code, _, err = run(["predict", model, tmp_path / "eu.csv", "--out", "-"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert f"column 'x' has text in {len(frame)} of {len(frame)} rows (line 2: " in err
    assert "a decimal comma is read in a semicolon-separated file (or write " in err


def test_a_header_naming_a_column_twice_is_refused(tmp_path, capsys):
    (tmp_path / "d.csv").write_text("a,a,y\n1,2,3\n4,5,6\n", encoding="utf-8")
    code, _, err = run(["fit", tmp_path / "d.csv", "--target", "y", "--out", "m"], capsys)
    assert code == 2
    assert (
        err.strip()
        == f"deepctrl: error: data file {tmp_path / 'd.csv'}: the header names column 'a' twice"
    )


def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, capsys):
    data, model = _stores(tmp_path)
    code, _, err = run(["fit", data, "--target", "y", "--out", data], capsys)
    assert code == 2 and f"--out {data} is the input file {data}; writing would" in err
    assert pd.read_csv(data).shape == (300, 3)  # untouched
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    tens = tmp_path / "tens.csv"
    code, _, err = run(["predict", model, tens, "--out", tens], capsys)
    assert code == 2 and "is the input file" in err
    code, _, err = run(["predict", model, tens, "--out", model], capsys)
    assert code == 2 and "is the input file" in err


def test_rules_on_the_target_and_spaces_around_the_direction(tmp_path, capsys):
    data, model = _stores(tmp_path)
    args = ["fit", data, "--target", "y", "--out", model]
    code, _, err = run([*args, "--monotonic", "y=increasing"], capsys)
    assert (
        err.strip()
        == "deepctrl: error: --monotonic y=increasing: 'y' is the target; name a feature"
    )
    code, out, err = run([*args, "--monotonic", "x = increasing", *FAST], capsys)
    assert code == 0, err
    assert "rules: monotonic(x, increasing): y" in out


def test_alpha_on_a_model_without_rules_gets_a_note(tmp_path, capsys):
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    out_csv = tmp_path / "p.csv"
    code, _, err = run(["predict", model, data, "--alpha", "0.5", "--out", out_csv], capsys)
    assert code == 0 and "note: the model has no rules, so alpha has no effect" in err
    code, _, err = run(["predict", model, data, "--id-column", "y", "--out", out_csv], capsys)
    assert code == 2 and "id column 'y' has the name of a column the predictions fill" in err


def test_an_unknown_option_points_to_the_commands_help(tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["fit", "d.csv", "--target", "y", "--out", "m", "--bogus"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        "deepctrl fit: error: unrecognized arguments: --bogus (see 'deepctrl fit --help')\n"
    )
    with pytest.raises(SystemExit) as stop:  # an experiment's options are its own
        main(["reproduce", "pendulum", "--quick", "--parquet"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (
        "deepctrl reproduce pendulum: error: unrecognized arguments: --parquet (see "
        "'deepctrl reproduce pendulum --help')\n"
    )


def test_a_latin1_file_names_its_first_bad_line_and_how_to_convert(tmp_path, capsys):
    path = tmp_path / "cities.csv"
    path.write_bytes("city,y\nBonn,1\nBerlin,2\nKöln,3\n".encode("latin-1"))
    code, _, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"data file {path} is not UTF-8 text: line 4 has byte 0xf6 (not UTF-8)" in err
    assert "iconv -f cp1252 -t utf-8" in err


def test_a_utf16_or_compressed_file_named_csv_says_how_to_read_it(tmp_path):
    utf16 = tmp_path / "unicode.csv"  # what a spreadsheet saves as "Unicode Text"
    utf16.write_text("x\ty\n1\t2\n", encoding="utf-16")
    with pytest.raises(ValueError) as error:
        read_table(utf16)
    assert str(error.value) == (
        f'data file {utf16} is UTF-16 text (as spreadsheets save "Unicode Text"); save it as '
        f"UTF-8: iconv -f utf-16 -t utf-8 {utf16} > {tmp_path / 'unicode-utf8.csv'}"
    )
    packed16 = tmp_path / "unicode.csv.gz"
    packed16.write_bytes(gzip.compress("x\ty\n1\t2\n".encode("utf-16")))
    with pytest.raises(ValueError, match="UTF-16") as error:
        read_table(packed16)
    command = str(error.value).split("save it as UTF-8: ")[1]
    assert (
        command
        == f"gzip -dc {packed16} | iconv -f utf-16 -t utf-8 > {tmp_path / 'unicode-utf8.csv'}"
    )
    done = subprocess.run(command, shell=True, cwd=tmp_path, capture_output=True)  # as given
    if done.returncode == 0:  # where gzip and iconv are installed
        assert read_table(tmp_path / "unicode-utf8.csv")["y"].tolist() == [2]
    packed = tmp_path / "shop.csv"
    with gzip.open(packed, "wt") as f:
        f.write("x,y\n1,2\n")
    with pytest.raises(ValueError) as error:
        read_table(packed)
    assert str(error.value) == (
        f"data file {packed} is gzip-compressed; name it shop.csv.gz to have it read"
    )


@pytest.mark.parametrize("value", [5.0, 5.3, "yes"])
def test_a_constant_target_is_refused_before_training(tmp_path, capsys, value):
    path = tmp_path / "flat.csv"
    pd.DataFrame({"x": np.arange(30.0), "sales": [value] * 30}).to_csv(path, index=False)
    code, _, err = run(["fit", path, "--target", "sales", "--out", tmp_path / "m", *FAST], capsys)
    shown = repr(value)
    assert code == 2 and err.strip() == (
        f"deepctrl: error: target column 'sales' is constant ({shown}): there is nothing to learn"
    )


def test_a_constant_target_warns_in_python():
    import deepctrl as dc

    with pytest.warns(UserWarning, match="target 'y' is constant \\(5.3\\): the model can only"):
        dc.DeepCTRLRegressor(max_epochs=1).fit(pd.DataFrame({"x": np.arange(30.0)}), [5.3] * 30)


def test_class_weight_balanced_reaches_the_model_and_predicts_the_rare_class(tmp_path, capsys):
    rng = np.random.default_rng(1)
    x = rng.normal(size=600)
    rare = rng.uniform(size=600) < 1 / (1 + np.exp(-(1.5 * x - 3.8)))  # about 5 % leave
    path = tmp_path / "churn.csv"
    pd.DataFrame({"x": x, "churn": np.where(rare, "leave", "stay")}).to_csv(path, index=False)
    args = [
        "fit",
        path,
        "--target",
        "churn",
        "--rule-class",
        "leave",
        "--monotonic",
        "x=increasing",
    ]
    model = tmp_path / "m.deepctrl"
    code, _, err = run([*args, "--class-weight", "balanced", "--out", model, *FAST[2:]], capsys)
    assert code == 0, err
    import deepctrl as dc

    assert dc.read_checkpoint(model).config["params"]["class_weight"] == "balanced"
    assert run(["predict", model, path, "--out", tmp_path / "p.csv"], capsys)[0] == 0
    predicted = pd.read_csv(tmp_path / "p.csv")["churn"]
    assert (
        predicted == "leave"
    ).mean() > 2 * rare.mean()  # weighed up, the rare class is predicted
    code, _, err = run(
        ["fit", path, "--target", "x", "--class-weight", "balanced", "--out", model], capsys
    )
    assert code == 2 and "--class-weight is for classification; the task is regression" in err


def test_an_identifier_column_is_left_out_with_a_note(tmp_path, capsys):
    rng = np.random.default_rng(3)
    n = 120
    x = rng.uniform(0, 1, n)
    frame = pd.DataFrame({"order": [f"A-{i:04d}" for i in range(n)], "x": x, "y": 2 * x})
    frame.to_csv(tmp_path / "orders.csv", index=False)
    model = tmp_path / "m.deepctrl"
    code, out, err = run(
        ["fit", tmp_path / "orders.csv", "--target", "y", "--out", model, *FAST], capsys
    )
    assert code == 0, err
    assert (
        "left out column 'order', which holds a different value in every row (an identifier); "
        "--id-column order says so and silences this note"
    ) in err
    assert "1 inputs after encoding" in out
    args = ["fit", tmp_path / "orders.csv", "--target", "y", "--id-column", "order"]
    code, out, err = run([*args, "--out", model, *FAST], capsys)
    assert code == 0 and "left out" not in err
    # kept, with a note: a customer number and a column of one value
    frame.assign(customer=np.arange(1000, 1000 + n), country="US", tax=1.0).to_csv(
        tmp_path / "more.csv", index=False
    )
    args = ["fit", tmp_path / "more.csv", "--target", "y", "--id-column", "order"]
    code, out, err = run([*args, "--out", model, *FAST], capsys)
    assert code == 0 and "4 inputs after encoding" in out
    assert "column 'tax' holds one value in every row (1.0), from which" in err
    assert "column 'customer' holds a different whole number in every row; if it" in err
    assert "column 'country' holds one value in every row ('US'), from which" in err


def test_a_mistyped_date_names_its_line_at_fit_and_at_predict(tmp_path, capsys):
    rng = np.random.default_rng(4)
    n = 120
    x = rng.uniform(0, 1, n)
    days = pd.date_range("2024-01-01", periods=n).strftime("%Y-%m-%d").to_numpy(object)
    frame = pd.DataFrame({"day": days, "x": x, "y": 2 * x + np.arange(n) / n})
    frame.to_csv(tmp_path / "good.csv", index=False)
    frame.loc[5, "day"] = "soon"
    frame.loc[9, "day"] = "2024-02-30"
    frame.to_csv(tmp_path / "typo.csv", index=False)
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "typo.csv", "--target", "y", "--out", model, *FAST]
    code, _, err = run(fit, capsys)
    # every value differs, but it is no identifier: a date column with two typos
    assert code == 2 and "left out" not in err
    assert err.strip().endswith(
        "typo.csv: column 'day' holds dates, but a value that is not an ISO 8601 date in 2 "
        "of 120 rows (line 7: 'soon'); write dates as YYYY-MM-DD and leave unknown ones "
        "empty; use --drop-missing to drop those rows"
    )
    code, out, err = run([*fit, "--drop-missing"], capsys)
    assert code == 0, err
    assert "dropped 2 of 120 rows" in err and "dates: day from 2024-01-01" in out
    code, _, err = run(["predict", model, tmp_path / "typo.csv", "--out", "-"], capsys)
    assert code == 2 and err.count("\n") == 1
    assert "typo.csv: column 'day' holds dates, but a value that is not an ISO 8601 date" in err
    frame.loc[[5, 9], "day"] = ""
    frame.to_csv(tmp_path / "gaps.csv", index=False)
    code, out, err = run(["predict", model, tmp_path / "gaps.csv", "--out", "-"], capsys)
    assert code == 0 and len(out.splitlines()) == n + 1  # unknown dates left empty: imputed


def test_a_rule_on_a_column_that_is_no_feature_says_what_it_is(tmp_path, capsys):
    n = 80
    frame = pd.DataFrame(
        {"order": [f"A-{i}" for i in range(n)], "shop": ["a", "b"] * 40, "x": np.arange(n) / n}
    )
    frame["y"] = 2 * frame["x"]
    frame["blank"] = np.nan
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    (tmp_path / "r.toml").write_text(
        '[[rule]]\nkind = "monotonic"\ncolumn = "y"\ndirection = "increasing"\n'
    )
    fit = ["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST]
    for extra, message in [
        (
            ["--rules", tmp_path / "r.toml"],
            "r.toml line 3): 'y' is the target, not a feature",
        ),
        (
            ["--id-column", "shop", "--monotonic", "shop=increasing"],
            "'shop' is an --id-column, not a feature",
        ),
        (
            ["--monotonic", "order=increasing"],
            "'order' is an identifier column, left out, not a feature",
        ),
        (
            ["--monotonic", "blank=increasing"],
            "'blank' is an empty column, left out, not a feature",
        ),
    ]:
        code, _, err = run([*fit, *extra], capsys)
        assert code == 2 and message in err, err
    with pytest.raises(SystemExit):
        main([str(a) for a in [*fit, "--target", "x"]])
    assert (
        "--target is given twice; the command line fits one target column"
        in capsys.readouterr().err
    )


def test_ids_are_written_back_as_the_text_they_were_read_from(tmp_path, capsys):
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    new = tmp_path / "ids.csv"
    new.write_text("zip,order,store,x\n00123,70001,north,0.5\nNA,,10,0.5\n007,70003,south,0.1\n")
    out = tmp_path / "p.csv"
    args = ["predict", model, new, "--id-column", "zip", "--id-column", "order", "--out", out]
    code, _, err = run(args, capsys)
    assert code == 0, err
    written = pd.read_csv(out, dtype=str, keep_default_na=False)
    assert written["zip"].tolist() == ["00123", "NA", "007"]
    assert written["order"].tolist() == ["70001", "", "70003"]


def test_a_separator_ending_the_data_lines_only_does_not_shift_the_columns(tmp_path, capsys):
    data, model = _stores(tmp_path)
    assert run(["fit", data, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    plain, trailing = tmp_path / "plain.csv", tmp_path / "trailing.csv"
    plain.write_text("store,x\nnorth,0.5\n10,0.2\n")
    trailing.write_text("store,x\nnorth,0.5,\n10,0.2,\n")
    for name in ("plain", "trailing"):
        code, _, err = run(
            ["predict", model, tmp_path / f"{name}.csv", "--out", tmp_path / f"{name}.out.csv"],
            capsys,
        )
        assert code == 0 and "missing" not in err, err
    assert (tmp_path / "plain.out.csv").read_text() == (tmp_path / "trailing.out.csv").read_text()
    extra = tmp_path / "extra.csv"
    extra.write_text("store,x\nnorth,0.5,7\n10,0.2,8\n")
    code, _, err = run(["predict", model, extra, "--out", tmp_path / "e.csv"], capsys)
    assert code == 2 and err.strip() == (
        f"deepctrl: error: data file {extra}: line 2 has 3 values, the header names 2 columns"
    )


def test_a_boolean_target_with_blank_labels_drops_those_rows(tmp_path, capsys):
    rows = "".join(f"{i},{'True' if i % 2 else 'False'}\n" for i in range(30))
    data = tmp_path / "b.csv"
    data.write_text("x,y\n" + rows + "30,\n")  # read as booleans and one NaN
    code, _, err = run(["fit", data, "--target", "y", "--out", tmp_path / "b.m", *FAST], capsys)
    assert code == 0, err
    assert "dropped 1 of 31 rows with a missing target" in err


def test_a_quoted_name_with_a_comma_does_not_decide_the_separator(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text('x;"Preis, EUR";sales\n1;2,5;3\n2;3,5;4\n')
    frame = read_table(path)
    assert list(frame.columns) == ["x", "Preis, EUR", "sales"]
    assert frame["Preis, EUR"].tolist() == [2.5, 3.5]


def test_columns_named_none_and_nan_are_names(tmp_path):
    path = tmp_path / "names.csv"
    path.write_text("None,nan,y\n1,2,3\n4,5,6\n")
    assert read_table(path).columns.tolist() == ["None", "nan", "y"]


def test_a_rules_folder_and_a_rule_on_the_weight_column_are_named(tmp_path, capsys):
    data, model = _stores(tmp_path)
    frame = pd.read_csv(data).assign(w=1.0)
    frame.to_csv(tmp_path / "w.csv", index=False)
    args = ["fit", tmp_path / "w.csv", "--target", "y", "--out", model, *FAST]
    code, _, err = run([*args, "--rules", tmp_path], capsys)
    assert code == 2 and f"rules file {tmp_path} is a folder; give the rules file in it" in err
    code, _, err = run([*args, "--weight-column", "w", "--monotonic", "w=increasing"], capsys)
    assert code == 2 and "'w' is the --weight-column, not a feature" in err


def test_numbers_a_fuzzer_found_misread_are_read_as_written(tmp_path):
    summe = tmp_path / "summe.csv"  # decimal commas and a total row: the total is named
    summe.write_text("preis;menge\n2,5;10\n3,75;8\n1,2;14\n4,1;6\nSumme;38\n")
    assert read_table(summe)["preis"].tolist() == [2.5, 3.75, 1.2, 4.1, "Summe"]
    minus = tmp_path / "minus.csv"  # the minus sign before a currency sign
    minus.write_text("profit,y\n\u2212$3.50,1\n\u2212$1.25,2\n$4.00,3\n")
    assert read_table(minus)["profit"].tolist() == [-3.5, -1.25, 4.0]
    space = tmp_path / "nbsp.csv"  # a no-break space after a decimal-comma number
    space.write_text("preis;y\n1,5\u00a0;1\n2,5;2\n3,5;3\n")
    assert read_table(space)["preis"].tolist() == [1.5, 2.5, 3.5]


def test_predict_reads_a_semicolon_files_dots_as_the_model_was_trained(tmp_path, capsys):
    rng = np.random.default_rng(0)
    area = rng.integers(500, 2500, 80)
    lines = ["flaeche;miete"]
    for a in area:  # 1927 square metres written 1.927, a rent of 23.12 written 23,12
        written = f"{a // 1000}.{a % 1000:03d}" if a >= 1000 else str(a)
        lines.append(written + ";" + f"{a * 0.012:.2f}".replace(".", ","))
    (tmp_path / "rent.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    args = ["fit", tmp_path / "rent.csv", "--target", "miete", "--out", model, *FAST]
    assert run(args, capsys)[0] == 0
    (tmp_path / "one.csv").write_text("flaeche;miete\n1.200;\n")  # no decimal comma to tell
    (tmp_path / "two.csv").write_text("flaeche;miete\n1.200;\n850;\n")
    outs = []
    for name in ("one", "two"):
        code, out, err = run(["predict", model, tmp_path / f"{name}.csv", "--out", "-"], capsys)
        assert code == 0, err
        outs.append(out.splitlines()[1])
    # 1.200 is 1200 square metres in both files (read as 1.2, the prediction would part)
    assert float(outs[0]) == pytest.approx(float(outs[1]), rel=1e-6)


def test_a_file_to_score_names_its_total_row_however_few_numbers_it_holds(tmp_path, capsys):
    rng = np.random.default_rng(1)
    amounts = rng.integers(100, 5000, 60)
    lines = ["amount,y"] + [f'"${a:,}",{a / 1000:.3f}' for a in amounts]
    (tmp_path / "t.csv").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.deepctrl"
    assert run(["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    (tmp_path / "score.csv").write_text('amount,y\n"$1,234",\nTotal,\n')  # one number of two
    code, _, err = run(["predict", model, tmp_path / "score.csv", "--out", "-"], capsys)
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"deepctrl: error: {tmp_path / 'score.csv'}: column 'amount' has text in 1 of 2 rows "
        "(line 3: 'Total')"
    )


def test_sweep_weighs_errors_by_a_column_and_fit_takes_rho(tmp_path, capsys):
    import deepctrl as dc

    rng = np.random.default_rng(7)
    x = rng.uniform(0, 1, 200)
    w = rng.choice([0.5, 1.0, 3.0], 200)
    frame = pd.DataFrame({"x": x, "w": w, "y": 3 * x + rng.normal(0, 0.3, 200)})
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "t.csv", "--target", "y", "--out", model, *FAST]
    code, _, err = run(
        [*fit, "--monotonic", "x=increasing", "--rho", "0.25", "--weight-column", "w"], capsys
    )
    assert code == 0, err
    est = dc.DeepCTRLRegressor.load(model)
    assert est.rho == 0.25 and set(est.rho_) == {0.25}
    sweep = ["sweep", model, tmp_path / "t.csv", "--alphas", "0,1", "--json"]
    code, out, err = run([*sweep, "--weight-column", "w"], capsys)
    assert code == 0 and "errors weighted by column 'w'" in err, err
    want = est.sweep(frame[["x"]], frame["y"], [0.0, 1.0], sample_weight=w)
    assert [r["mse"] for r in json.loads(out)] == pytest.approx(want["mse"].tolist(), rel=1e-9)
    unweighted = json.loads(run(sweep, capsys)[1])
    assert unweighted[0]["mse"] != pytest.approx(want["mse"][0], rel=1e-3)
    for args, message in (
        ([*sweep, "--weight-column", "x"], "--weight-column 'x' is one of the model's input"),
        ([*fit, "--rho", "-1"], "--rho must be auto, paper, epoch or a number above 0"),
    ):
        code, _, err = run(args, capsys)
        assert code == 2 and message in err, err


def test_min_verification_counts_the_rows_the_rule_judges(tmp_path, capsys):
    rng = np.random.default_rng(3)
    x = rng.uniform(0, 1, 200)
    frame = pd.DataFrame({"x": x, "z": rng.normal(size=200), "y": 3 * x})
    frame.loc[::4, "x"] = np.nan  # 50 rows whose ruled feature is missing: not judged
    frame.to_csv(tmp_path / "t.csv", index=False)
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "t.csv", "--target", "y", "--monotonic", "x=increasing"]
    assert run([*fit, "--out", model, *FAST], capsys)[0] == 0
    predict = ["predict", model, tmp_path / "t.csv", "--min-verification", "0.5", "--out", "-"]
    code, _, err = run(predict, capsys)
    assert code == 0 and "on the 150 of 200 rows the rules judge (goal 0.5)" in err, err


def test_a_row_without_a_weight_is_named_by_the_line_an_editor_shows(tmp_path, capsys):
    x = np.linspace(0, 1, 30)
    lines = [
        "sep=,",
        "x,w,y",
        *(f"{a:.3f},{'' if i == 5 else 1},{3 * a:.3f}" for i, a in enumerate(x)),
    ]
    (tmp_path / "w.csv").write_text("\n".join(lines) + "\n")
    fit = ["fit", tmp_path / "w.csv", "--target", "y", "--weight-column", "w"]
    code, _, err = run([*fit, "--out", tmp_path / "m.deepctrl", *FAST], capsys)
    assert code == 2 and "has no weight in 1 of 30 rows (line 8); every row" in err, err


def test_decimal_parquet_columns_are_numbers(tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from decimal import Decimal

    prices = [Decimal("5.82"), Decimal("2.10"), None, Decimal("7.25")]
    pq.write_table(pa.table({"price": pa.array(prices, pa.decimal128(10, 2))}), tmp_path / "d.pq")
    frame = read_table(tmp_path / "d.pq")
    assert frame["price"].dtype == np.float64
    assert frame["price"].tolist()[:2] == [5.82, 2.1] and np.isnan(frame["price"][2])


def test_a_parquet_column_pandas_wrote_as_the_index_is_a_column(tmp_path):
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"store": ["a", "b", "c", "d"], "price": [1.0, 2.0, 3.0, 4.0]})
    frame.set_index("store").to_parquet(tmp_path / "named.parquet")  # a common way to save
    read = read_table(tmp_path / "named.parquet")
    assert read.columns.tolist() == ["store", "price"]
    assert read["store"].tolist() == ["a", "b", "c", "d"] and read.index.tolist() == [0, 1, 2, 3]
    frame[frame["price"] > 2].to_parquet(tmp_path / "filtered.parquet")  # unnamed row labels
    read = read_table(tmp_path / "filtered.parquet")
    assert read.columns.tolist() == ["store", "price"] and read.index.tolist() == [0, 1]


def test_a_float16_parquet_column_fits_without_a_numpy_warning(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    share = rng.uniform(0, 1, 60).astype(np.float16)  # a compact column, as some pipelines save
    try:
        pd.DataFrame({"share": share, "y": 2.0 * share}).to_parquet(tmp_path / "h.parquet")
    except NotImplementedError:  # pyarrow before 15 writes no float16 to Parquet
        pytest.skip("this pyarrow cannot write a float16 column to Parquet")
    fit = ["fit", tmp_path / "h.parquet", "--target", "y", "--out", tmp_path / "h.deepctrl"]
    code, _, err = run([*fit, *FAST], capsys)
    assert code == 0 and "overflow" not in err, err


def test_negatives_in_parentheses_are_named_and_dropping_them_is_not_advised(tmp_path, capsys):
    rng = np.random.default_rng(3)
    margin = [f'"${v:,.2f}"' for v in rng.uniform(100, 2000, 60)]
    margin[7] = '"($1,729.07)"'
    lines = ["price,margin,sales"] + [
        f"{p:.2f},{m},{s:.3f}"
        for p, m, s in zip(rng.uniform(1, 9, 60), margin, rng.normal(size=60), strict=True)
    ]
    (tmp_path / "acct.csv").write_text("\n".join(lines) + "\n")
    code, _, err = run(["fit", tmp_path / "acct.csv", "--target", "sales", "--out", "m"], capsys)
    assert code == 2
    assert err.strip().endswith(
        f"{tmp_path / 'acct.csv'}: column 'margin' has text in 1 of 60 rows (line 9: "
        "'($1,729.07)'); a negative written in parentheses is not read: write it as "
        "-$1,729.07 (--drop-missing would drop exactly these rows)"
    )


def test_the_judged_line_names_why_the_rows_of_this_rule_go_unjudged(tmp_path, capsys):
    rng = np.random.default_rng(4)
    promo = rng.integers(0, 2, 200)
    price = rng.uniform(1, 9, 200)
    frame = pd.DataFrame({"promo": promo, "price": price, "y": 5 + 2 * promo - price})
    frame.to_csv(tmp_path / "t.csv", index=False)
    relative = tmp_path / "relative.toml"
    relative.write_text(
        '[[rule]]\nkind = "monotonic"\ncolumn = "promo"\ndirection = "increasing"\nrelative = 0.1\n'
    )
    model = tmp_path / "m.deepctrl"
    fit = ["fit", tmp_path / "t.csv", "--target", "y", "--rules", relative, "--out", model]
    assert run([*fit, *FAST], capsys)[0] == 0
    code, out, _ = run(["sweep", model, tmp_path / "t.csv"], capsys)
    zeros = int((promo == 0).sum())  # a relative step leaves 0 where it is: not judged
    assert code == 0
    assert (
        f"verification judged on {200 - zeros} of 200 rows of {tmp_path / 't.csv'} (a relative "
        "perturbation does not move a value of 0)"
    ) in out
    assert "missing" not in out


def test_an_expression_without_a_value_names_the_line_of_its_first_row(tmp_path, capsys):
    rng = np.random.default_rng(5)
    price = rng.uniform(5, 9, 60)
    price[[3, 7]] = 3.0  # log(price - 4) has no value here
    frame = pd.DataFrame({"price": price, "units": 20 - price})
    frame.loc[0, "price"] = np.nan  # dropped: the rows given to fit start at line 3
    frame.to_csv(tmp_path / "t.csv", index=False)
    rules = tmp_path / "r.toml"
    rules.write_text('[[rule]]\nkind = "penalty"\nexpression = "units <= log(price - 4)"\n')
    fit = ["fit", tmp_path / "t.csv", "--target", "units", "--rules", rules, "--drop-missing"]
    code, _, err = run([*fit, "--out", tmp_path / "m.deepctrl", *FAST], capsys)
    assert code == 2
    assert "is not a finite number on 2 of the 59 rows given to fit (the first at line 5)" in err
