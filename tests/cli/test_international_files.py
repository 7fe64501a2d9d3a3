"""Files as spreadsheets in other locales write them: numbers with currency codes, spaces or
apostrophes between thousands (read as numbers) or in forms that are not read (a warning
naming the column), separators a header's commas do not decide, Excel's ``sep=;`` line,
empty columns and rows, column names with spaces around them or accents written as
separate marks, workbooks named .csv, and the lines errors name."""

from __future__ import annotations

import re
import unicodedata
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.cli.table_reading import read_table

FAST = ["--max-epochs", "2", "--no-progress"]


def run(args: list, capsys) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def _prices(n: int = 120) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    price = rng.uniform(1000, 9000, n).round(2)
    return price, (20 - price / 1000 + rng.normal(0, 0.1, n)).round(2)


@pytest.mark.parametrize(
    ("write", "sign"),
    [
        (lambda v: f"R$ {v:.2f}".replace(".", ","), "a currency sign (R$)"),
        (lambda v: f"EUR {v:.2f}".replace(".", ","), "a currency sign (EUR)"),
        (lambda v: f"{v:.2f} EUR".replace(".", ","), "a currency sign (EUR)"),
        (lambda v: f"CHF {v:.2f}", "a currency sign (CHF)"),
        (lambda v: f"{v:,.2f}".replace(",", " ").replace(".", ","), "spaces between thousands"),
        (
            lambda v: f"{v:,.2f}".replace(",", "\u202f").replace(".", ","),
            "spaces between thousands",
        ),
        (lambda v: f"{v:,.2f}".replace(",", "'"), "apostrophes between thousands"),
        (lambda v: f"{v:.2f} ₽".replace(".", ","), "a currency sign (₽)"),
        (
            lambda v: f"{v:,.2f} kr".replace(",", "\u00a0").replace(".", ","),
            "a currency sign (kr) and spaces between thousands",
        ),
    ],
)
def test_currency_codes_and_spaced_thousands_are_read_as_numbers(tmp_path, capsys, write, sign):
    price, sales = _prices()
    path = tmp_path / "p.csv"
    pd.DataFrame({"Preço": [write(v) for v in price], "y": sales}).to_csv(
        path, sep=";", index=False
    )
    frame = read_table(path)
    assert frame["Preço"].dtype == np.float64
    np.testing.assert_allclose(frame["Preço"].to_numpy(), price)
    err = capsys.readouterr().err
    assert f"note: read column 'Preço' as numbers written with {sign}: " in err
    assert f"{write(price[0])!r} read as {price[0]:g}" in err


def test_a_model_reads_currency_codes_in_a_file_to_score_as_numbers(tmp_path, capsys):
    price, sales = _prices()
    train, new = tmp_path / "t.csv", tmp_path / "n.csv"
    pd.DataFrame({"Preço": price, "y": sales}).to_csv(train, sep=";", decimal=",", index=False)
    pd.DataFrame({"Preço": [f"R$ {v:.2f}".replace(".", ",") for v in price[:5]]}).to_csv(
        new, sep=";", index=False
    )
    model = tmp_path / "m.deepctrl"
    assert run(["fit", train, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    assert run(["predict", model, new, "--out", tmp_path / "o.csv"], capsys)[0] == 0
    again = tmp_path / "plain.csv"
    pd.DataFrame({"Preço": price[:5]}).to_csv(again, index=False)
    assert run(["predict", model, again, "--out", tmp_path / "o2.csv"], capsys)[0] == 0
    np.testing.assert_array_equal(
        pd.read_csv(tmp_path / "o.csv").to_numpy(), pd.read_csv(tmp_path / "o2.csv").to_numpy()
    )


@pytest.mark.parametrize("sign", ["R$ ", ""])
def test_dots_between_thousands_on_the_larger_prices_alone_are_read(tmp_path, capsys, sign):
    rng = np.random.default_rng(1)
    price = np.concatenate([rng.uniform(100, 999, 72), rng.uniform(1000, 3000, 8)]).round(2)
    written = [
        sign + f"{v:,.2f}".replace(",", " ").replace(".", ",").replace(" ", ".") for v in price
    ]
    assert written[72].count(".") == 1 and "." not in written[0]
    path = tmp_path / "p.csv"
    pd.DataFrame({"preco": written, "y": price / 100}).to_csv(path, sep=";", index=False)
    frame = read_table(path)
    assert frame["preco"].dtype == np.float64
    np.testing.assert_allclose(frame["preco"].to_numpy(), price)
    err = capsys.readouterr().err
    assert f"written with thousands separators ({written[72].removeprefix(sign)!r})" in err
    model = tmp_path / "m.deepctrl"
    code, out, err = run(
        ["fit", path, "--target", "y", "--drop-missing", "--out", model, *FAST], capsys
    )
    assert code == 0, err
    assert "dropped" not in err + out
    new = tmp_path / "n.csv"
    new.write_text("preco\n4,5\n1.234,5\n")
    assert run(["predict", model, new, "--out", tmp_path / "o.csv"], capsys)[0] == 0
    plain = tmp_path / "plain.csv"
    plain.write_text("preco\n4.5\n1234.5\n")
    assert run(["predict", model, plain, "--out", tmp_path / "o2.csv"], capsys)[0] == 0
    np.testing.assert_array_equal(
        pd.read_csv(tmp_path / "o.csv").to_numpy(), pd.read_csv(tmp_path / "o2.csv").to_numpy()
    )


@pytest.mark.parametrize(
    "write",
    [lambda v: f"({v:.2f})".replace(".", ","), lambda v: f"{v:.2f}-".replace(".", ",")],
)
def test_numbers_in_a_form_not_read_are_named_at_fit_not_left_out(tmp_path, capsys, write):
    price, sales = _prices()
    path = tmp_path / "p.csv"
    pd.DataFrame({"Saldo": [write(v) for v in price], "y": sales}).to_csv(
        path, sep=";", index=False
    )
    code, out, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert code == 0, err
    first = sorted(write(v) for v in price)[0]
    assert (
        f"deepctrl: warning: column 'Saldo' looks like numbers, but 120 of its 120 distinct "
        f"values are written in a form not read as numbers (such as {first!r}), so it is read "
        "as categories, one input per value;"
    ) in err
    assert "on the command line write them as plain numbers (1234.5, -1234.5)" in err
    assert "identifier" not in err
    assert "120 inputs after encoding" in out


@pytest.mark.parametrize(
    ("values", "warning"),
    [
        (
            [f"{v:.2f} kg" for v in _prices()[0]],
            "column 'Gewicht' looks like numbers with a unit ('*'), so it is read as "
            "categories, one input per value; to use it as numbers (and let a rule name it), "
            "write them without the unit and name the unit in the column's name "
            "('Gewicht_kg')",
        ),
        (
            pd.date_range("2024-01-01", periods=120).strftime("%B %d, %Y").tolist(),
            "column 'Gewicht' looks like dates, but 120 of its 120 distinct values are not ISO "
            "8601 dates (such as '*'), so it is read as categories;",
        ),
    ],
)
def test_numbers_with_a_unit_and_named_months_are_named_at_fit_not_left_out(
    tmp_path, capsys, values, warning
):
    path = tmp_path / "w.csv"
    pd.DataFrame({"Gewicht": values, "y": _prices()[1]}).to_csv(path, index=False)
    code, out, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert code == 0, err
    before, after = f"deepctrl: warning: {warning}".split("*")
    assert re.search(f"{re.escape(before)}[^']+{re.escape(after)}", err), err
    assert "identifier" not in err
    assert "120 inputs after encoding" in out


@pytest.mark.parametrize("sep", [";", "\t"])
def test_commas_in_a_headers_names_do_not_make_it_a_comma_file(tmp_path, sep):
    path = tmp_path / "h.csv"
    header = sep.join(["Umsatz, netto", "Preis", "Menge, Stück", "Qualität, Note"])
    rows = [
        sep.join(["24,70", "5,82", "4938", "0,202"]),
        sep.join(["28,37", "3,62", "4362", "0,938"]),
    ]
    path.write_text("\n".join([header, *rows]) + "\n")
    frame = read_table(path)
    assert list(frame.columns) == ["Umsatz, netto", "Preis", "Menge, Stück", "Qualität, Note"]
    if sep == ";":
        assert frame["Umsatz, netto"].tolist() == [24.7, 28.37]
    else:
        assert frame["Umsatz, netto"].tolist() == ["24,70", "28,37"]
    assert frame["Menge, Stück"].tolist() == [4938, 4362]


def test_a_header_tied_between_separators_that_no_line_settles_is_refused(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("a,b;c\n1;2;3\n1,2\n")
    with pytest.raises(ValueError) as error:
        read_table(path)
    assert str(error.value) == (
        f"data file {path}: cannot tell its separator: its header holds 1 each of ';' and "
        "',', and neither splits every line into as many values; quote the names that hold one"
    )


def test_excels_sep_line_names_the_separator(tmp_path, capsys):
    path = tmp_path / "s.csv"
    path.write_bytes(b"sep=;\r\nPreis;y\r\n5,82;1\r\n3,62;2\r\n4,1;3\r\nabc;4\r\n")
    code, _, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert code == 2 and "column 'Preis' has text in 1 of 4 rows (line 6: 'abc')" in err
    path.write_bytes(
        b"sep=;\r\nPreis;Qualit\xc3\xa4t;y\r\n5,82;0,048;25,03\r\n3,62;0,656;20,68\r\n"
    )
    frame = read_table(path)
    assert list(frame.columns) == ["Preis", "Qualität", "y"]
    assert frame["Preis"].tolist() == [5.82, 3.62]
    path.write_text("sep=|\na|b\n1|2\n")
    with pytest.raises(ValueError) as error:
        read_table(path)
    assert str(error.value) == (
        f"data file {path}: its first line ('sep=|') names the separator '|'; save it comma, "
        "semicolon or tab separated"
    )


def test_every_empty_nameless_column_is_left_out(tmp_path, capsys):
    path = tmp_path / "e.csv"
    path.write_text("Preis;y;;\r\n5,82;1;;\r\n3,62;2;;\r\n")
    frame = read_table(path)
    assert list(frame.columns) == ["Preis", "y"]
    assert frame["Preis"].tolist() == [5.82, 3.62]
    assert "left out 2 empty column(s) without a name" in capsys.readouterr().err


def _workbook(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name in ("[Content_Types].xml", "_rels/.rels", "xl/workbook.xml"):
            archive.writestr(name, "<x/>")


def test_a_workbook_named_csv_is_told_to_be_saved_as_csv(tmp_path):
    for name in ("book.csv", "book.csv.zip"):
        _workbook(tmp_path / name)
        with pytest.raises(ValueError) as error:
            read_table(tmp_path / name)
        assert str(error.value) == (
            f"data file {tmp_path / name} is an Excel workbook (.xlsx); save it as CSV or Parquet"
        )
    old = tmp_path / "old.csv"
    old.write_bytes(b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(100) + b"\xff")
    with pytest.raises(ValueError, match=r"is an Excel 97-2003 workbook \(\.xls\); save it as"):
        read_table(old)


@pytest.mark.parametrize(
    "text",
    [
        'Preis;Kommentar;y\r\n5,1;"Zeile 1\r\nZeile 2";20,1\r\n5,2;ok;20,2\r\nabc;ok;20,3\r\n',
        "Preis;Kommentar;y\r\n5,1;ok;20,1\r\n\r\n5,2;ok;20,2\r\nabc;ok;20,3\r\n",
        "\r\nPreis;Kommentar;y\r\n5,1;ok;20,1\r\n5,2;ok;20,2\r\nabc;ok;20,3\r\n",
    ],
)
def test_an_error_names_the_line_an_editor_shows(tmp_path, capsys, text):
    path = tmp_path / "l.csv"
    path.write_bytes(text.encode())
    code, _, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert code == 2
    assert "column 'Preis' has text in 1 of 3 rows (line 5: 'abc')" in err


def test_a_spaced_column_is_named_by_a_rule_and_its_error_quotes_the_names(tmp_path, capsys):
    rng = np.random.default_rng(0)
    q = rng.uniform(0, 1, 60).round(3)
    path = tmp_path / "q.csv"
    pd.DataFrame({"Preis": rng.uniform(2, 8, 60).round(2), "Qualität ": q, "y": 3 * q}).to_csv(
        path, index=False
    )
    model = tmp_path / "m.deepctrl"
    fit = ["fit", path, "--target", "y", "--out", model, *FAST]
    code, _, err = run([*fit, "--monotonic", "Qualität=increasing"], capsys)
    assert code == 2
    assert err.strip().endswith(
        "unknown column 'Qualität'; the table has: 'Preis', 'Qualität '; column 'Qualität ' "
        "has spaces around its name"
    )
    assert run([*fit, "--monotonic", "Qualität =increasing"], capsys)[0] == 0
    assert run([*fit, "--monotonic", "Preis = decreasing"], capsys)[0] == 0


def test_names_whose_accents_are_written_as_separate_marks_match_typed_names(tmp_path, capsys):
    rng = np.random.default_rng(0)
    q = rng.uniform(0, 1, 60).round(3)
    decomposed = unicodedata.normalize("NFD", "Qualität")
    nfd, nfc = tmp_path / "nfd.csv", tmp_path / "nfc.csv"
    pd.DataFrame({decomposed: q, "Größe": q[::-1], "y": 3 * q}).to_csv(nfd, index=False)
    pd.DataFrame({"Qualität": q, "Größe": q[::-1]}).to_csv(nfc, index=False)
    model = tmp_path / "m.deepctrl"
    args = ["fit", nfd, "--target", "y", "--monotonic", "Qualität=increasing", "--out", model]
    assert run([*args, *FAST], capsys)[0] == 0
    assert list(read_table(nfd).columns) == ["Qualität", "Größe", "y"]
    for data in (nfd, nfc):
        out = tmp_path / f"p_{data.stem}.csv"
        assert (
            run(["predict", model, data, "--out", out, "--id-column", "Qualität"], capsys)[0] == 0
        )
        assert list(pd.read_csv(out).columns) == ["Qualität", "y"]
    np.testing.assert_array_equal(
        pd.read_csv(tmp_path / "p_nfd.csv").to_numpy(),
        pd.read_csv(tmp_path / "p_nfc.csv").to_numpy(),
    )


def test_a_model_fitted_on_decomposed_names_in_python_reads_a_file(tmp_path, capsys):
    import deepctrl as dc

    rng = np.random.default_rng(0)
    decomposed = unicodedata.normalize("NFD", "Qualität")
    X = pd.DataFrame({decomposed: rng.uniform(0, 1, 60)})
    est = dc.DeepCTRLRegressor(max_epochs=2, random_state=0, verbose=False).fit(
        X, 3 * X[decomposed]
    )
    model = tmp_path / "m.deepctrl"
    est.save(model)
    X.to_csv(tmp_path / "x.csv", index=False)
    assert run(["predict", model, tmp_path / "x.csv", "--out", tmp_path / "p.csv"], capsys)[0] == 0
    np.testing.assert_allclose(
        pd.read_csv(tmp_path / "p.csv").iloc[:, 0], est.predict(X), rtol=1e-6
    )


def test_the_leading_zeros_note_quotes_the_name_for_a_shell(tmp_path, capsys):
    rng = np.random.default_rng(0)
    path = tmp_path / "plz.csv"
    pd.DataFrame(
        {"PLZ Kunde": rng.choice(["01067", "04109", "10115"], 60), "y": rng.uniform(0, 1, 60)}
    ).to_csv(path, index=False)
    _, _, err = run(["fit", path, "--target", "y", "--out", tmp_path / "m", *FAST], capsys)
    assert "if they are codes, give --categorical 'PLZ Kunde'\n" in err


def test_rows_with_no_value_in_a_file_to_score_are_named(tmp_path, capsys):
    price, sales = _prices(60)
    train, new = tmp_path / "t.csv", tmp_path / "n.csv"
    pd.DataFrame({"Preis": price, "y": sales}).to_csv(train, index=False)
    new.write_text("Preis;Menge\r\n" + "5,5;1\r\n" * 4 + ";\r\n;\r\n")
    model = tmp_path / "m.deepctrl"
    assert run(["fit", train, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    code, _, err = run(["predict", model, new, "--out", tmp_path / "p.csv"], capsys)
    assert code == 0
    assert (
        f"note: {new}: 2 rows have no value in any column (the first on line 6), as "
        "spreadsheets write empty rows; each is predicted from the training means, as missing "
        "values are: delete those lines to leave them out"
    ) in err
    assert len(pd.read_csv(tmp_path / "p.csv")) == 6


def test_a_quoted_empty_value_alone_on_a_line_is_a_row_for_the_lines_named(tmp_path, capsys):
    price, sales = _prices(60)
    train, new = tmp_path / "t.csv", tmp_path / "n.csv"
    pd.DataFrame({"Preis": price, "y": sales}).to_csv(train, index=False)
    model = tmp_path / "m.deepctrl"
    assert run(["fit", train, "--target", "y", "--out", model, *FAST], capsys)[0] == 0
    new.write_text('Preis\n5.5\n""\n   \nabc\n3\n')  # the line of spaces holds no row
    code, _, err = run(["predict", model, new, "--out", tmp_path / "p.csv"], capsys)
    assert code == 2 and "column 'Preis' has text in 1 of 4 rows (line 5: 'abc')" in err, err
    new.write_text('Preis\n5.5\n""\n4\n3\n')
    code, _, err = run(["predict", model, new, "--out", tmp_path / "p.csv"], capsys)
    assert code == 0 and "1 row has no value in any column (the first on line 3)" in err, err
    assert len(pd.read_csv(tmp_path / "p.csv")) == 4


def test_the_note_on_numbers_grouped_by_spaces_says_how_to_keep_codes(tmp_path, capsys):
    codes = tmp_path / "codes.csv"
    codes.write_text("siren,y\n" + "".join(f"{864 + i} 636 510,{i}\n" for i in range(5)))
    assert read_table(codes)["siren"].tolist()[:2] == [864636510.0, 865636510.0]
    assert (
        capsys.readouterr()
        .err.rstrip()
        .endswith("if they are codes (921 345 678), give --categorical siren")
    )
