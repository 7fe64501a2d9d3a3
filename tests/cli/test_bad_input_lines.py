"""Bad input to the commands gives one line naming the file, column or option, exit code 2,
and is found before any training; nothing is written."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.cli.rules_file import parse_rules_text
from helpers import write_sales


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("bad_input")
    data = write_sales(folder)
    model = folder / "m.deepctrl"
    args = ["fit", str(data), "--target", "sales", "--monotonic", "price=decreasing"]
    assert main([*args, "--max-epochs", "2", "--no-progress", "--out", str(model)]) == 0
    return data, model


def refused(args: list[str], message: str, capsys) -> None:
    """``args`` exit with code 2 and one error line matching ``message``."""
    code = main(args)
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert code == 2, (args, err)
    assert len(lines) == 1 and lines[0].startswith("deepctrl: error: "), (args, err)
    assert re.search(message, lines[0]), (args, lines[0])


def fit_args(data: Path | str, out: Path | str, *extra: str) -> list[str]:
    return ["fit", str(data), "--target", "sales", "--no-progress", *extra, "--out", str(out)]


def test_fit_refuses_an_out_that_is_its_rules_file(tmp_path, capsys):
    data = write_sales(tmp_path)
    rules = tmp_path / "r.toml"
    text = '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "decreasing"\n'
    rules.write_text(text)
    refused(
        fit_args(data, rules, "--rules", str(rules), "--max-epochs", "2"),
        "--out .*r.toml is the input file .*r.toml; writing would replace it",
        capsys,
    )
    assert rules.read_text() == text


@pytest.mark.parametrize("alpha", ["1e30", "2.5"])
def test_predict_refuses_an_alpha_beyond_the_largest(fitted, tmp_path, capsys, alpha):
    data, model = fitted
    out = tmp_path / "p.csv"
    args = ["predict", str(model), str(data), "--alpha", alpha, "--out", str(out)]
    refused(args, f"--alpha {alpha}: alpha must be at most 2 \\(training drew alphas", capsys)
    assert not out.exists()


def test_an_alpha_column_beyond_the_largest_names_its_line(fitted, tmp_path, capsys):
    data, model = fitted
    frame = pd.read_csv(data).assign(strength=0.5)
    frame.loc[3, "strength"] = 1e300
    frame.to_csv(tmp_path / "a.csv", index=False)
    out = tmp_path / "p.csv"
    args = ["predict", str(model), str(tmp_path / "a.csv"), "--alpha-column", "strength"]
    refused(
        [*args, "--out", str(out)],
        "a.csv: alpha column 'strength': line 5 has 1e\\+300; alpha must be at most 2",
        capsys,
    )
    assert not out.exists()


def test_an_alpha_column_names_the_line_an_editor_shows(fitted, tmp_path, capsys):
    data, model = fitted
    lines = pd.read_csv(data).assign(strength=0.5).to_csv(index=False).splitlines()
    for value, message in [("-1", "must be >= 0: line 7 has -1"), ("3", ": line 7 has 3;")]:
        bad = [*lines[:3], "", "", lines[3].rsplit(",", 1)[0] + f",{value}", *lines[4:]]
        (tmp_path / "b.csv").write_text("sep=,\n" + "\n".join(bad) + "\n")  # line 1: sep=
        args = ["predict", str(model), str(tmp_path / "b.csv"), "--alpha-column", "strength"]
        refused([*args, "--out", str(tmp_path / "p.csv")], re.escape(message), capsys)


def test_text_in_a_models_number_column_suggests_no_option_the_command_lacks(
    fitted, tmp_path, capsys
):
    data, model = fitted
    frame = pd.read_csv(data).astype({"price": object})
    frame.loc[1, "price"] = "abc"
    frame.to_csv(tmp_path / "t.csv", index=False)
    refused(
        ["sweep", str(model), str(tmp_path / "t.csv")],
        r"column 'price' has text in 1 of 60 rows \(line 3: 'abc'\); use --drop-missing to "
        r"drop those rows$",
        capsys,
    )


def test_sweep_refuses_alphas_beyond_the_largest(fitted, capsys):
    data, model = fitted
    refused(
        ["sweep", str(model), str(data), "--alphas", "1e308,1"],
        "--alphas 1e308,1: alpha 1e\\+308 is too large; alpha must be at most 2",
        capsys,
    )
    refused(["sweep", str(model), str(data), "--alphas", "0:3:1"], "alpha 3 is too large", capsys)


def test_classes_of_fractional_numbers_name_the_target(tmp_path, capsys):
    data = write_sales(tmp_path)
    refused(
        fit_args(data, tmp_path / "m", "--task", "classification"),
        "target column 'sales' holds 60 non-integer numbers; classes must be labels or whole "
        "numbers \\(drop --task classification for a regression\\)",
        capsys,
    )


def test_a_weight_column_of_zeros_is_named(tmp_path, capsys):
    data = write_sales(tmp_path)
    pd.read_csv(data).assign(w=0.0).to_csv(data, index=False)
    refused(
        fit_args(data, tmp_path / "m", "--weight-column", "w"),
        "sales.csv: weight column 'w' is 0 on every row; give some rows a weight above 0",
        capsys,
    )


@pytest.mark.parametrize("mostly_text", [False, True])
def test_text_in_a_weight_column_names_its_line_at_fit_and_sweep(
    fitted, tmp_path, capsys, mostly_text
):
    weights = [f"x{i}" if mostly_text else "1" for i in range(60)]
    data = pd.read_csv(fitted[0]).assign(w=[*weights[:2], "abc", *weights[3:]])
    path = tmp_path / "weights.csv"
    data.to_csv(path, index=False)
    count = "60 of 60 rows (line 2: 'x0')" if mostly_text else "1 of 60 rows (line 4: 'abc')"
    said = f"weights.csv: weight column 'w' has text in {count}; every row needs a weight >= 0: "
    refused(
        fit_args(path, tmp_path / "m", "--weight-column", "w"),
        re.escape(said + "correct those rows, or use --drop-missing to drop them") + "$",
        capsys,
    )
    refused(
        ["sweep", str(fitted[1]), str(path), "--weight-column", "w"],
        re.escape(said + "correct or drop those rows") + "$",
        capsys,
    )


def test_a_row_with_more_values_than_the_header_names_its_line(tmp_path, capsys):
    data = write_sales(tmp_path)
    lines = data.read_text().splitlines()
    lines[9] = "1,2,3,4,5"
    data.write_text("\n".join(lines) + "\n")
    refused(
        fit_args(data, tmp_path / "m"),
        "data file .*sales.csv: line 10 has 5 values, the header names 3 columns$",
        capsys,
    )


def test_a_parquet_column_named_twice_is_named(tmp_path, capsys):
    pa = pytest.importorskip("pyarrow")
    parquet = pytest.importorskip("pyarrow.parquet")
    table = pa.table([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], names=["price", "price", "sales"])
    parquet.write_table(table, tmp_path / "d.parquet")
    refused(
        fit_args(tmp_path / "d.parquet", tmp_path / "m"),
        "data file .*d.parquet: the file names column 'price' twice$",
        capsys,
    )


@pytest.mark.parametrize("name", ["sales.json", "sales.xlsx", "sales.json.gz"])
def test_a_table_format_that_is_not_read_says_to_save_it_as_csv(tmp_path, capsys, name):
    (tmp_path / name).write_bytes(b'{"price": [1, 2], "sales": [3, 4]}')
    suffix = name.split(".")[1]
    refused(
        fit_args(tmp_path / name, tmp_path / "m"),
        f"data file .*{name}: .{suffix} files are not read; save it as CSV or Parquet",
        capsys,
    )


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("weight = 1e308", "r.toml line 5: weight must be at most 1e\\+06, got 1e\\+308"),
        ("relative = 50.0", "r.toml line 5: relative must be at most 10, got 50"),
    ],
)
def test_a_huge_rule_weight_or_change_names_its_line(line, message):
    text = f'[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n{line}\n'
    with pytest.raises(ValueError, match=message):
        parse_rules_text(text, "r.toml")


def test_a_step_far_beyond_the_column_names_the_line_of_the_step(tmp_path, capsys):
    data = write_sales(tmp_path)
    rules = tmp_path / "r.toml"
    rules.write_text(
        '[[rule]]\nkind = "monotonic"\nadditive = 1e30\ndirection = "decreasing"\n'
        'column = "price"\n'
    )
    refused(
        fit_args(data, tmp_path / "m", "--rules", str(rules)),
        r"rule monotonic\(price, decreasing\) \(\S*r.toml line 3\): its perturbation moves "
        r"'price' by up to 1e\+30",
        capsys,
    )


def test_max_epochs_is_bounded(tmp_path, capsys):
    data = write_sales(tmp_path)
    refused(
        fit_args(data, tmp_path / "m", "--max-epochs", "10" * 15),
        "--max-epochs must be an integer from 1 to 100000, got '1010",
        capsys,
    )


def test_a_fit_without_validation_rows_says_every_epoch_runs(tmp_path, capsys):
    data = write_sales(tmp_path)
    code = main(fit_args(data, tmp_path / "m", "--val-fraction", "0.01", "--max-epochs", "3"))
    err = capsys.readouterr().err
    assert code == 0
    assert (
        "note: no validation rows (--val-fraction 0.01 of 60 rows holds out fewer than 2), so "
        "nothing stops training early: all 3 epochs run" in err
    )


def test_empty_file_names_are_named(fitted, tmp_path, capsys, monkeypatch):
    data, model = fitted
    monkeypatch.chdir(tmp_path)
    refused(fit_args("", "m"), "the data file's name is empty", capsys)
    refused(["fit", str(data), "--target", "sales", "--out", ""], "--out is empty", capsys)
    refused(fit_args(data, "m", "--rules", ""), "--rules is empty", capsys)
    refused(["predict", str(model), "", "--out", "p.csv"], "the data file's name is empty", capsys)
    test_rule = ["test-rule", str(data), "--target", "sales", "--monotonic", "price=decreasing"]
    refused([*test_rule, "--out", ""], "--out is empty; give a folder", capsys)
    assert list(tmp_path.iterdir()) == []


def test_integer_ranges_name_their_largest_value(tmp_path, capsys):
    data = write_sales(tmp_path)
    refused(
        fit_args(data, tmp_path / "m", "--seed", str(2**31)),
        "--seed must be an integer from 0 to 2147483647, got '2147483648'",
        capsys,
    )


def test_a_table_of_one_row_says_so(tmp_path, capsys):
    data = write_sales(tmp_path)
    pd.read_csv(data).head(1).to_csv(data, index=False)
    refused(fit_args(data, tmp_path / "m"), "sales.csv has 1 data row: nothing to learn", capsys)


def test_a_negative_value_says_how_to_write_it(fitted, capsys):
    data, model = fitted
    with pytest.raises(SystemExit) as stop:
        main(["sweep", str(model), str(data), "--alphas", "-1,0"])
    assert stop.value.code == 2
    assert (
        "argument --alphas: expected one argument (a value starting with '-' is written "
        "--alphas=VALUE)" in capsys.readouterr().err
    )


def test_an_abbreviated_option_is_unknown(tmp_path, capsys):
    data = write_sales(tmp_path)
    with pytest.raises(SystemExit) as stop:
        main(fit_args(data, tmp_path / "m", "--monot", "price=decreasing"))
    assert stop.value.code == 2
    assert "unrecognized arguments: --monot price=decreasing" in capsys.readouterr().err


@pytest.mark.parametrize("name", ["test.csv", "test.csv.gz", "rules.toml", "t.parquet"])
def test_fit_refuses_an_out_named_like_a_table_or_rules_file(tmp_path, capsys, name):
    data = write_sales(tmp_path)
    refused(
        fit_args(data, tmp_path / name),
        f"--out .*{name} names a table or rules file \\(.\\w+\\); fit writes a model file",
        capsys,
    )
    assert not (tmp_path / name).exists()


def test_running_out_of_memory_is_one_line_with_what_to_do(tmp_path, capsys, monkeypatch):
    from deepctrl.tabular.encoding import TableEncoder

    def too_big(self, frame, rows=None):
        raise MemoryError("Unable to allocate 13.7 GiB for an array with shape (100000, 36675)")

    monkeypatch.setattr(TableEncoder, "transform", too_big)
    code = main(fit_args(write_sales(tmp_path), tmp_path / "m.deepctrl"))
    last = capsys.readouterr().err.splitlines()[-1]
    assert code == 2 and re.fullmatch(
        r"deepctrl: error: out of memory \(Unable to allocate 13.7 GiB .*\): a text column "
        r"with many values takes one input per value on every row; leave such a column out "
        r"\(--id-column COL\) or use fewer rows",
        last,
    ), last
