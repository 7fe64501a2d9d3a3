"""``deepctrl fit/sweep/predict`` run in-process: results and every bad-input case give one
line on stderr and exit code 2. tests/e2e/test_cli_table.py runs the same through the
installed command."""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import pickle
import struct
import sys
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.main import main
from deepctrl.cli.table_reading import read_table
from deepctrl.tabular.estimators import load_any


def write_table(folder: Path, n: int = 120, seed: int = 0) -> Path:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame(
        {
            "price": rng.uniform(1, 10, n).round(3),
            "size": rng.uniform(0, 1, n),
            "color": rng.choice(["red", "blue"], n),
        }
    )
    frame["sales"] = 10 - frame["price"] + 2 * frame["size"] + rng.normal(0, 0.2, n)
    frame["sold_out"] = np.where(frame["sales"] > 6, "yes", "no")
    path = folder / "data.csv"
    frame.to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("cli")
    data = write_table(folder)
    model = folder / "model.deepctrl"
    code = main(
        [
            "fit",
            str(data),
            "--target",
            "sales",
            "--monotonic",
            "price=decreasing",
            "--max-epochs",
            "5",
            "--no-progress",
            "--out",
            str(model),
        ]
    )
    assert code == 0 and model.is_file()
    return data, model


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_fit_prints_a_summary(tmp_path, capsys):
    data = write_table(tmp_path)
    code, out, _ = run(
        [
            "fit",
            str(data),
            "--target",
            "sold_out",
            "--no-progress",
            "--monotonic",
            "price=decreasing",
            "--max-epochs",
            "3",
            "--seed",
            "1",
            "--drop-missing",
            "--out",
            str(tmp_path / "m"),
        ],
        capsys,
    )
    assert code == 0
    assert "trained DeepCTRLClassifier on 96 rows (validated on 24)" in out
    assert "rules: monotonic(price, decreasing)" in out and "epochs: 3" in out
    assert "validation at alpha 0: bce" in out
    assert "rules: monotonic(price, decreasing): P('yes')" in out  # the default class, named
    assert "default alpha: alpha " in out and "lowest validation error: alpha " in out


def test_fit_takes_the_recipe_it_is_given(tmp_path, capsys):
    data = write_table(tmp_path)
    fit = ["fit", str(data), "--target", "sales", "--no-progress", "--max-epochs", "2"]
    code, _, _ = run([*fit, "--recipe", "step_budget", "--out", str(tmp_path / "m")], capsys)
    est = load_any(tmp_path / "m")
    # 96 training rows would take the long recipe; the step budget trains three networks
    assert code == 0 and est.recipe == "step_budget" and len(est.models_) == 3
    with pytest.raises(SystemExit) as stop:
        main([*fit, "--recipe", "fast", "--out", str(tmp_path / "n")])
    assert stop.value.code == 2
    assert "invalid choice: 'fast'" in capsys.readouterr().err


def test_sweep_table_and_json(fitted, capsys):
    data, model = fitted
    code, out, _ = run(["sweep", str(model), str(data), "--alphas", "0:1:0.5", "--json"], capsys)
    rows = json.loads(out)
    assert code == 0 and [r["alpha"] for r in rows] == [0.0, 0.5, 1.0]
    assert all({"alpha", "verification_ratio", "mae", "mse"} <= set(r) for r in rows)
    code, out, _ = run(["sweep", str(model), str(data), "--alphas", "0,1"], capsys)
    assert code == 0 and out.split("\n")[0].split() == ["alpha", "verification_ratio", "mae", "mse"]


def test_predict_keeps_row_order_and_auto_uses_the_stored_alpha(fitted, tmp_path, capsys):
    data, model = fitted
    frame = pd.read_csv(data).iloc[::-1].drop(columns=["sales"])
    frame.to_csv(tmp_path / "new.csv", index=False)
    out = tmp_path / "pred.csv"
    code, text, _ = run(
        ["predict", str(model), str(tmp_path / "new.csv"), "--out", str(out)], capsys
    )
    assert code == 0 and f"wrote {len(frame)} predictions" in text
    from deepctrl.tabular.model_file import load_estimator

    est = load_estimator(model)
    expected = est.predict(frame[["price", "size", "color", "sold_out"]], est.selected_alpha_)
    np.testing.assert_allclose(pd.read_csv(out)["sales"], expected, rtol=1e-6)
    code, _, _ = run(
        ["predict", str(model), str(tmp_path / "new.csv"), "--alpha", "1", "--out", str(out)],
        capsys,
    )
    np.testing.assert_allclose(
        pd.read_csv(out)["sales"], est.predict(frame[est.encoder_.names], 1.0), rtol=1e-6
    )


def bad_files(folder: Path, data: Path) -> dict[str, Path]:
    frame = pd.read_csv(data)
    files = {
        "empty": folder / "empty.csv",
        "header": folder / "header.csv",
        "nan": folder / "nan.csv",
        "text": folder / "text.csv",
        "binary": folder / "binary.csv",
        "lacking": folder / "lacking.csv",
        "rules": folder / "rules.toml",
        "pickle": folder / "model.pkl",
        "foreign": folder / "foreign.safetensors",
        "corrupt": folder / "corrupt.deepctrl",
    }
    files["empty"].write_text("")
    files["header"].write_text(",".join(frame.columns) + "\n")
    frame.assign(price=frame["price"].where(frame.index % 50 != 3)).to_csv(
        files["nan"], index=False
    )
    frame.astype({"price": object}).assign(
        price=lambda f: f["price"].where(f.index != 5, "abc")
    ).to_csv(files["text"], index=False)
    files["binary"].write_bytes(bytes(range(256)) * 4)
    frame.drop(columns=["size"]).to_csv(files["lacking"], index=False)
    files["rules"].write_text(
        '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "sideways"\n'
    )
    files["pickle"].write_bytes(pickle.dumps({"weights": [1, 2, 3]}))
    header = json.dumps({"__metadata__": {"format": "other"}}).encode()
    files["foreign"].write_bytes(struct.pack("<Q", len(header)) + header)
    files["corrupt"].write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{not json at all")
    return files


def cases(data: Path, model: Path, f: dict[str, Path], out: Path) -> list[tuple[list[str], str]]:
    fit = ["fit", str(data), "--target", "sales", "--no-progress", "--out", str(out)]
    return [
        (
            ["fit", "nowhere.csv", "--target", "sales", "--out", str(out)],
            "data file nowhere.csv does not exist",
        ),
        (["fit", str(f["empty"]), "--target", "sales", "--out", str(out)], "is empty"),
        (["fit", str(f["header"]), "--target", "sales", "--out", str(out)], "has no data rows"),
        (
            ["fit", str(f["binary"]), "--target", "sales", "--out", str(out)],
            "is not a (text CSV file \\(line 1 has a NUL byte\\)|valid CSV file)",
        ),
        ([*fit[:3], "sale", *fit[4:]], "has no target column 'sale'"),
        ([*fit, "--monotonic", "prize=decreasing"], "unknown column 'prize'"),
        ([*fit, "--monotonic", "price=up"], "direction must be 'increasing' or 'decreasing'"),
        ([*fit, "--rules", str(f["rules"])], "rules.toml line 4: direction must be"),
        ([*fit, "--rules", "missing.toml"], "rules file missing.toml does not exist"),
        (
            [*fit, "--monotonic", "price=decreasing", "--monotonic", "price=increasing"],
            "monotonic\\(price, decreasing\\) \\(--monotonic price=decreasing\\) and "
            "monotonic\\(price, increasing\\) \\(--monotonic price=increasing\\) contradict "
            "each other: sales cannot both rise and fall with 'price'",
        ),
        ([*fit, "--rule-class", "yes"], "--rule-class names the class of the --monotonic rules"),
        (
            [*fit, "--monotonic", "price=decreasing", "--rule-class", "yes"],
            "--rule-class is for classification",
        ),
        (
            ["fit", str(f["text"]), *fit[2:]],
            "column 'price' has text in 1 of 120 rows \\(line 7: 'abc'\\)",
        ),
        ([*fit, "--val-fraction", "1.5"], "--val-fraction must be a number from 0 to below 1"),
        (
            [*fit, "--cross-fit", "--val-fraction", "0.3"],
            "--val-fraction and --cross-fit exclude each other",
        ),
        ([*fit, "--device", "cuda"], "device 'cuda' is not available: this PyTorch sees no CUDA"),
        ([*fit, "--device", "tpu"], "unknown device 'tpu'"),
        ([*fit[:-1], str(out.parent / "no" / "m")], "folder .* does not exist"),
        ([*fit[:-1], "-"], "--out - \\(standard output\\) is for deepctrl predict"),
        (["export", str(model), "--out", "-"], "--out - \\(standard output\\) is for"),
        (["export", str(model), "--out", "/dev/stdout"], "--out /dev/stdout is a device"),
        (
            ["export", str(model), "--out", str(out.parent / "m.xlsx")],
            "export writes an ONNX file; give a name ending in .onnx",
        ),
        (
            ["predict", str(model), str(data), "--alpha-column", "color", "--out", str(out)],
            "alpha column 'color' needs a finite number on every row: 120 rows have none, "
            r"such as '(red|blue)' \(line 2\)",
        ),
        (["sweep", str(f["pickle"]), str(data)], "looks like a pickle"),
        (["sweep", str(out.parent), str(data)], "is a folder; give the model file in it"),
        (["sweep", str(f["foreign"]), str(data)], "not a deepctrl model file"),
        (["sweep", str(f["corrupt"]), str(data)], "not a deepctrl model file"),
        (["sweep", str(model), str(data), "--alphas", "0:1:x"], "--alphas must be"),
        (
            ["predict", str(model), str(f["lacking"]), "--out", str(out)],
            "lacks column\\(s\\) the model needs: 'size'",
        ),
        (
            ["predict", str(model), str(data), "--alpha", "strong", "--out", str(out)],
            "--alpha must be a finite number, 'auto' or 'min_error', got 'strong'",
        ),
        (
            ["predict", str(model), str(data), "--alpha", "1e400", "--out", str(out)],
            "--alpha must be a finite number, 'auto' or 'min_error', got 1e400$",
        ),
        (
            ["predict", str(model), str(data), "--alpha", "-0.5", "--out", str(out)],
            "--alpha must be >= 0 \\(0 follows the data, 1 the rule\\), got -0.5",
        ),
        (
            ["predict", str(model), str(data), "--min-verification", "1.5", "--out", str(out)],
            "--min-verification must be a number greater than 0 and at most 1, got '1.5'",
        ),
        (
            ["predict", str(model), str(data), "--min-verification", "most", "--out", str(out)],
            "--min-verification must be a number greater than 0 and at most 1, got 'most'",
        ),
        (
            ["sweep", str(model), str(data), "--min-verification", "0"],
            "--min-verification must be a number greater than 0 and at most 1, got '0'",
        ),
    ]


def test_every_bad_input_gives_one_line_and_exit_code_2(fitted, tmp_path, capsys):
    data, model = fitted
    out = tmp_path / "out.model"
    for args, message in cases(data, model, bad_files(tmp_path, data), out):
        code, _, err = run(args, capsys)
        lines = err.splitlines()
        assert code == 2, (args, err)
        assert len(lines) == 1 and lines[0].startswith("deepctrl: error: "), (args, err)
        assert pytest.importorskip("re").search(message, lines[0]), (args, lines[0])
        assert not out.exists()


def test_drop_missing_drops_rows_and_says_how_many(fitted, tmp_path, capsys):
    data, _ = fitted
    files = bad_files(tmp_path, data)
    code, _, err = run(
        [
            "fit",
            str(files["text"]),
            "--target",
            "sales",
            "--drop-missing",
            "--max-epochs",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "m"),
        ],
        capsys,
    )
    assert code == 0 and "dropped 1 of 120 rows" in err


def test_missing_values_are_scored_and_imputed_with_the_training_mean(fitted, tmp_path, capsys):
    data, model = fitted
    files = bad_files(tmp_path, data)  # "nan": price missing on 3 of 120 rows
    out = tmp_path / "pred.csv"
    code, _, _ = run(
        ["predict", str(model), str(files["nan"]), "--alpha", "0.5", "--out", str(out)], capsys
    )
    pred = pd.read_csv(out)["sales"].to_numpy()
    assert code == 0 and len(pred) == 120 and np.isfinite(pred).all()
    # the model had no missing prices in training: a missing price takes the training mean
    frame = pd.read_csv(files["nan"])
    missing = frame["price"].isna().to_numpy()
    filled = frame.assign(price=frame["price"].fillna(pd.read_csv(data)["price"].mean()))
    filled.to_csv(tmp_path / "filled.csv", index=False)
    run(
        [
            "predict",
            str(model),
            str(tmp_path / "filled.csv"),
            "--alpha",
            "0.5",
            "--out",
            str(tmp_path / "f.csv"),
        ],
        capsys,
    )
    np.testing.assert_allclose(
        pred[missing], pd.read_csv(tmp_path / "f.csv")["sales"][missing], rtol=1e-5
    )
    code, text, _ = run(
        [
            "fit",
            str(files["nan"]),
            "--target",
            "sales",
            "--max-epochs",
            "1",
            "--no-progress",
            "--out",
            str(tmp_path / "m"),
        ],
        capsys,
    )
    assert code == 0
    # counted over all 120 rows given (the encoder sees the validation rows too)
    assert "missing values in the 120 rows given: price 3 (filled with the column's mean" in text


class Payload:
    """A pickle whose unpickling would create a marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (Path.touch, (self.marker,))


def test_a_pickle_is_refused_without_being_unpickled(fitted, tmp_path, capsys):
    data, _ = fitted
    marker = tmp_path / "unpickled"
    evil = tmp_path / "evil.deepctrl"
    evil.write_bytes(pickle.dumps(Payload(marker)))
    code, _, err = run(["predict", str(evil), str(data), "--out", str(tmp_path / "p.csv")], capsys)
    assert code == 2 and "looks like a pickle" in err and not marker.exists()


def test_parquet_without_pyarrow_says_what_to_install(fitted, tmp_path, capsys, monkeypatch):
    data, model = fitted
    parquet = tmp_path / "data.parquet"
    parquet.write_bytes(b"PAR1")
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    code, _, err = run(["sweep", str(model), str(parquet)], capsys)
    assert code == 2
    assert err.strip() == (
        f"deepctrl: error: reading {parquet} needs pyarrow: pip install 'deepctrl[parquet]'"
    )
    monkeypatch.delitem(sys.modules, "pyarrow")  # reading a CSV may import it

    def no_pyarrow(*args, **kwargs):
        raise ImportError("Unable to find a usable engine; tried using: 'pyarrow'")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", no_pyarrow)
    out = tmp_path / "p.parquet"
    code, _, err = run(["predict", str(model), str(data), "--out", str(out)], capsys)
    assert code == 2 and err.strip() == (
        f"deepctrl: error: writing {out} needs pyarrow: pip install 'deepctrl[parquet]'"
    )


def test_parquet_input_and_sweep_without_target(fitted, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    data, model = fitted
    parquet = tmp_path / "data.parquet"
    pd.read_csv(data).drop(columns="sales").to_parquet(parquet)
    code, out, err = run(["sweep", str(model), str(parquet), "--alphas", "0,1", "--json"], capsys)
    rows = json.loads(out)
    assert code == 0 and "only verification ratios are shown" in err
    assert "(no target column 'sales', or an empty one)" in err
    assert [sorted(r) for r in rows] == [["alpha", "verification_ratio"]] * 2
    from deepctrl.cli.table_as_written import missing_spellings
    from deepctrl.cli.table_reading import read_table

    typed = tmp_path / "typed.parquet"  # booleans and numbers: nothing spelled as missing
    pd.DataFrame({"flag": [True, None, False], "code": [1, 2, None]}).to_parquet(typed)
    assert missing_spellings(typed, read_table(str(typed)), ["flag", "code"]) == {}
    scored = tmp_path / "scored.csv"  # a file to score: its target column left empty
    pd.read_csv(data).assign(sales=None).to_csv(scored, index=False)
    code, out, err = run(["sweep", str(model), str(scored), "--alphas", "0,1", "--json"], capsys)
    assert code == 0 and "no target values (no target column 'sales', or an empty one)" in err, err
    assert [sorted(r) for r in json.loads(out)] == [["alpha", "verification_ratio"]] * 2


@pytest.mark.parametrize("tz", [None, "Europe/Paris"])
def test_parquet_timestamps_are_dates_for_every_command(tmp_path, capsys, tz):
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(0)
    day = pd.Timestamp("2024-01-01", tz=tz) + pd.to_timedelta(rng.integers(0, 300, 200), "D")
    frame = pd.DataFrame({"x": rng.normal(size=200), "day": day})
    frame["y"] = frame["x"] + frame["day"].dt.day_of_year / 300
    parquet = tmp_path / "t.parquet"
    frame.to_parquet(parquet)
    model = tmp_path / "t.deepctrl"
    fit = ["fit", str(parquet), "--target", "y", "--monotonic", "x=increasing"]
    code, _, err = run([*fit, "--max-epochs", "3", "--no-progress", "--out", str(model)], capsys)
    assert code == 0, err
    out = tmp_path / "p.csv"
    code, _, err = run(["predict", str(model), str(parquet), "--out", str(out)], capsys)
    assert code == 0, err
    text = tmp_path / "t.csv"  # the same instants written as ISO 8601 text predict the same
    frame.assign(day=frame["day"].map(lambda t: t.isoformat())).to_csv(text, index=False)
    code, _, err = run(["predict", str(model), str(text), "--out", str(tmp_path / "q.csv")], capsys)
    assert code == 0, err
    assert pd.read_csv(out)["y"].tolist() == pd.read_csv(tmp_path / "q.csv")["y"].tolist()
    code, _, err = run(["sweep", str(model), str(parquet), "--alphas", "0,1"], capsys)
    assert code == 0, err


# -- alpha chosen without labels: --min-verification ------------------------------------------


def fit_model(folder: Path, name: str, *rules: str) -> Path:
    """A quick model on write_table's rows (sales fall with the price) with ``rules``."""
    model = folder / name
    code = main(
        [
            "fit",
            str(folder / "data.csv"),
            "--target",
            "sales",
            *rules,
            "--max-epochs",
            "5",
            "--no-progress",
            "--out",
            str(model),
        ]
    )
    assert code == 0 and model.is_file()
    return model


@pytest.fixture(scope="module")
def against(tmp_path_factory) -> tuple[Path, Path]:
    """A model whose rule (price raises sales) the data contradict: the verification ratio
    climbs from 0 at alpha 0; and the rows without their target."""
    folder = tmp_path_factory.mktemp("against")
    data = write_table(folder)
    unlabelled = folder / "unlabelled.csv"
    pd.read_csv(data).drop(columns="sales").to_csv(unlabelled, index=False)
    return fit_model(folder, "against.deepctrl", "--monotonic", "price=increasing"), unlabelled


def grid_ratios(model: Path, data: Path) -> tuple[list[float], list[float]]:
    """The label-free grid and the loaded model's verification ratio at each alpha, computed
    one alpha at a time."""
    from deepctrl.tabular.alpha_choice import LABEL_FREE_GRID
    from deepctrl.tabular.estimators import load_any

    est = load_any(model)
    X = pd.read_csv(data)[est.encoder_.names]
    return LABEL_FREE_GRID, [est.verification_ratio(X, alpha=a) for a in LABEL_FREE_GRID]


def test_predict_chooses_the_smallest_alpha_reaching_the_goal_without_labels(
    against, tmp_path, capsys
):
    model, unlabelled = against
    grid, ratios = grid_ratios(model, unlabelled)
    out = tmp_path / "pred.csv"
    code, text, err = run(
        ["predict", str(model), str(unlabelled), "--min-verification", "0.9", "--out", str(out)],
        capsys,
    )
    assert code == 0, err
    i = next(i for i, r in enumerate(ratios) if r >= 0.9)
    assert i > 0 and all(r < 0.9 for r in ratios[:i])  # alpha 0 falls short of the goal
    chosen = f"chosen alpha {grid[i]:g}: verification ratio {ratios[i]:.3f} on 120 rows (goal 0.9)"
    assert text.splitlines() == [chosen, f"wrote 120 predictions at alpha {grid[i]:g} to {out}"]
    from deepctrl.tabular.estimators import load_any

    est = load_any(model)
    X = pd.read_csv(unlabelled)[est.encoder_.names]
    np.testing.assert_allclose(pd.read_csv(out)["sales"], est.predict(X, grid[i]), rtol=1e-6)
    # the target column, when present, is ignored: the same alpha and predictions
    labelled = unlabelled.parent / "data.csv"
    code, text, _ = run(
        [
            "predict",
            str(model),
            str(labelled),
            "--min-verification",
            "0.9",
            "--out",
            str(tmp_path / "again.csv"),
        ],
        capsys,
    )
    assert code == 0 and text.splitlines()[0] == chosen
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "again.csv"), pd.read_csv(out))


def test_predict_refuses_a_goal_no_alpha_reaches_and_writes_nothing(tmp_path, capsys):
    write_table(tmp_path)
    rules = tmp_path / "rules.toml"
    rules.write_text('[[rule]]\nkind = "penalty"\nexpression = "sales <= -1000"\n')
    model = fit_model(tmp_path, "never.deepctrl", "--rules", str(rules))
    capsys.readouterr()
    out = tmp_path / "pred.csv"
    code, text, err = run(
        [
            "predict",
            str(model),
            str(tmp_path / "data.csv"),
            "--min-verification",
            "0.5",
            "--out",
            str(out),
        ],
        capsys,
    )
    assert code == 2 and text == "" and not out.exists()
    assert err == (
        "deepctrl: error: no alpha in 0..1.5 reaches verification ratio 0.5 on these "
        "rows (highest 0.000 at alpha 0)\n"
    )


def test_alpha_and_min_verification_exclude_each_other(fitted, tmp_path, capsys):
    data, model = fitted
    out = tmp_path / "pred.csv"
    with pytest.raises(SystemExit) as stop:
        main(
            [
                "predict",
                str(model),
                str(data),
                "--alpha",
                "0.5",
                "--min-verification",
                "0.9",
                "--out",
                str(out),
            ]
        )
    err = capsys.readouterr().err
    assert stop.value.code == 2 and len(err.splitlines()) == 1
    assert err.startswith(
        "deepctrl predict: error: argument --min-verification: not allowed with argument --alpha"
    )
    from deepctrl.cli.predict_command import predict_command

    message = "--alpha, --alpha-column and --min-verification exclude each other"
    with pytest.raises(ValueError, match=message):
        predict_command(str(model), str(data), str(out), alpha="0.5", min_verification="0.9")
    with pytest.raises(ValueError, match=message):
        predict_command(
            str(model), str(data), str(out), alpha_column="price", min_verification="0.9"
        )
    assert not out.exists()


def sweep_json(model: Path, data: Path, alphas: str, capsys, *extra: str) -> tuple[list[dict], str]:
    code, out, err = run(
        ["sweep", str(model), str(data), "--alphas", alphas, "--json", *extra], capsys
    )
    assert code == 0, err
    return json.loads(out), err  # stdout is exactly the JSON rows


def test_sweep_compares_the_label_free_alpha_with_the_lowest_error(against, capsys):
    model, unlabelled = against
    data = unlabelled.parent / "data.csv"
    rows, err = sweep_json(model, data, "0:1.5:0.1", capsys)
    best = min(rows, key=lambda r: r["mse"])
    free = min((r for r in rows if r["verification_ratio"] >= 0.95), key=lambda r: r["alpha"])
    assert free["alpha"] > 0 and rows[0]["verification_ratio"] < 0.95
    lines = [
        f"lowest mse: alpha {best['alpha']:g} (mse {best['mse']:.4g}, verification "
        f"{best['verification_ratio']:.3f})",
        f"label-free (smallest alpha with verification >= 0.95): alpha {free['alpha']:g} "
        f"(mse {free['mse']:.4g}, verification {free['verification_ratio']:.3f})",
    ]
    assert err.splitlines() == lines  # --json: the comparison goes to stderr
    code, out, err = run(["sweep", str(model), str(data), "--alphas", "0:1.5:0.1"], capsys)
    assert code == 0 and err == "" and out.splitlines()[-2:] == lines
    assert len(out.splitlines()) == 1 + len(rows) + 2  # header, one line per alpha, the two


def test_sweep_without_target_shows_only_the_label_free_line(against, capsys):
    model, unlabelled = against
    rows, _ = sweep_json(model, unlabelled, "0:1:0.25", capsys)
    reached = [r for r in rows if r["verification_ratio"] >= 0.5]
    code, out, err = run(
        ["sweep", str(model), str(unlabelled), "--alphas", "0:1:0.25", "--min-verification", "0.5"],
        capsys,
    )
    assert code == 0 and "only verification ratios are shown" in err
    assert out.splitlines()[-1] == (
        f"label-free (smallest alpha with verification >= 0.5): alpha {reached[0]['alpha']:g} "
        f"(verification {reached[0]['verification_ratio']:.3f})"
    )
    assert "lowest" not in out
    # a goal the grid does not reach names the highest ratio and its alpha
    short = [r for r in rows if r["alpha"] <= 0.5]
    top = max(short, key=lambda r: (r["verification_ratio"], -r["alpha"]))
    assert top["verification_ratio"] < 0.99
    _, err = sweep_json(model, unlabelled, "0:0.5:0.25", capsys, "--min-verification", "0.99")
    assert err.splitlines()[-1] == (
        f"label-free: no alpha in the grid reaches verification 0.99 (highest "
        f"{top['verification_ratio']:.3f} at alpha {top['alpha']:g})"
    )


def test_sweep_of_a_model_without_rules_skips_the_comparison(tmp_path, capsys):
    write_table(tmp_path)
    model = fit_model(tmp_path, "plain.deepctrl")
    capsys.readouterr()
    code, out, err = run(
        ["sweep", str(model), str(tmp_path / "data.csv"), "--alphas", "0,1"], capsys
    )
    assert code == 0 and err == "" and len(out.splitlines()) == 3
    assert "label-free" not in out and "lowest" not in out


def test_a_reproduction_checks_its_output_folder_before_training(tmp_path, capsys):
    taken = tmp_path / "afile"
    taken.write_text("not a folder")
    code, _, err = run(["reproduce", "retail", "--quick", "--out", str(taken)], capsys)
    assert code == 2 and err.strip() == f"deepctrl: error: --out {taken} is a file; give a folder"
    code, _, err = run(["reproduce", "cardio", "--quick", "--out", str(taken / "sub")], capsys)
    assert code == 2 and err.strip().endswith(f"{taken} is a file, not a folder")


# -- compressed inputs, outputs by suffix, standard output ------------------------------------


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz", ".zip"])
def test_a_compressed_csv_reads_as_the_plain_one(fitted, tmp_path, suffix):
    data, _ = fitted
    packed = tmp_path / f"data.csv{suffix}"
    method = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}[suffix]
    pd.read_csv(data).to_csv(packed, index=False, compression=method)
    pd.testing.assert_frame_equal(read_table(packed), read_table(data))


@pytest.mark.parametrize("suffix", [".csv.gz", ".csv.zip"])
def test_compressed_predictions_are_the_same_bytes_at_another_time(monkeypatch, suffix):
    """No write time inside the file: make and checksums see the same output as the same."""
    import time

    from deepctrl.cli.table_output import table_bytes

    frame = pd.DataFrame({"prediction": [1.5, 2.25]})
    monkeypatch.setattr(time, "time", lambda: 1_000_000_000.0)
    first = table_bytes(frame, f"p{suffix}")
    monkeypatch.setattr(time, "time", lambda: 1_700_000_000.0)
    assert table_bytes(frame, f"p{suffix}") == first


def test_no_command_is_a_failure_with_the_usage_on_stderr(capsys):
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("usage: deepctrl")


def test_a_semicolon_file_compressed_keeps_its_separator(tmp_path):
    packed = tmp_path / "eu.csv.gz"
    packed.write_bytes(gzip.compress(b"price;sales\n1,5;2\n2,5;1\n"))
    assert read_table(packed).to_dict("list") == {"price": [1.5, 2.5], "sales": [2, 1]}


def test_a_broken_archive_is_one_line(fitted, tmp_path, capsys):
    _, model = fitted
    (tmp_path / "bad.gz").write_bytes(b"not gzip")
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as archive:
        archive.writestr("a.csv", "x\n1\n")
        archive.writestr("b.csv", "x\n2\n")
    for path, message in [
        (tmp_path / "bad.gz", f"cannot read data file {tmp_path / 'bad.gz'}: Not a gzipped file"),
        (two, f"data file {two} must hold one file, not 2"),
    ]:
        code, _, err = run(["predict", str(model), str(path), "--out", "p.csv"], capsys)
        assert code == 2 and err.startswith(f"deepctrl: error: {message}"), err
        assert len(err.strip().splitlines()) == 1


def test_predict_writes_the_format_its_out_suffix_names(fitted, tmp_path, capsys):
    data, model = fitted
    plain = tmp_path / "p.csv"
    assert run(["predict", str(model), str(data), "--out", str(plain)], capsys)[0] == 0
    expected = pd.read_csv(plain)
    for name, method in [("p.csv.gz", "gzip"), ("p.csv.bz2", "bz2"), ("p.csv.zip", "zip")]:
        assert (
            run(["predict", str(model), str(data), "--out", str(tmp_path / name)], capsys)[0] == 0
        )
        pd.testing.assert_frame_equal(pd.read_csv(tmp_path / name, compression=method), expected)
    with zipfile.ZipFile(tmp_path / "p.csv.zip") as archive:
        assert archive.namelist() == ["p.csv"]
    if importlib.util.find_spec("pyarrow") is not None:
        assert (
            run(["predict", str(model), str(data), "--out", str(tmp_path / "p.parquet")], capsys)[0]
            == 0
        )
        pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "p.parquet"), expected)
    for name in ("p.xlsx", "p.json", "p.tsv.gz"):  # CSV text under such a name misleads
        code, _, err = run(
            ["predict", str(model), str(data), "--out", str(tmp_path / name)], capsys
        )
        assert code == 2 and "deepctrl writes CSV (.csv, or compressed" in err
        assert not (tmp_path / name).exists()
    assert run(["predict", str(model), str(data), "--out", str(tmp_path / "p")], capsys)[0] == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "p"), expected)


def test_predict_to_standard_output_keeps_messages_on_stderr(fitted, tmp_path, capsys, monkeypatch):
    data, model = fitted
    monkeypatch.chdir(tmp_path)
    stdout = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(stdout))
    code = main(["predict", str(model), str(data), "--min-verification", "0.5", "--out", "-"])
    err = capsys.readouterr().err
    assert code == 0 and not (tmp_path / "-").exists()
    table = pd.read_csv(io.BytesIO(stdout.getvalue()))
    assert list(table.columns) == ["sales"] and len(table) == len(pd.read_csv(data))
    assert "chosen alpha" in err and "predictions at alpha" in err and "standard output" in err


def test_an_id_column_named_like_a_probability_column_is_refused(tmp_path, capsys):
    data = write_table(tmp_path)
    model = tmp_path / "c.deepctrl"
    fit = ["fit", str(data), "--target", "sold_out", "--max-epochs", "2", "--no-progress"]
    assert run([*fit, "--out", str(model)], capsys)[0] == 0
    frame = pd.read_csv(data).drop(columns=["sold_out"])
    frame["proba_yes"] = range(len(frame))
    frame.to_csv(tmp_path / "new.csv", index=False)
    args = ["predict", str(model), str(tmp_path / "new.csv"), "--id-column", "proba_yes"]
    code, _, err = run([*args, "--out", str(tmp_path / "p.csv")], capsys)
    assert code == 2 and err.strip() == (
        "deepctrl: error: id column 'proba_yes' has the name of a column the predictions fill"
    )


def test_an_alpha_column_that_is_also_an_input_gets_a_note(fitted, tmp_path, capsys):
    data, model = fitted
    args = ["predict", str(model), str(data), "--alpha-column", "size"]
    code, out, err = run([*args, "--out", str(tmp_path / "p.csv")], capsys)
    assert code == 0 and "wrote 120 predictions at per-row alpha" in out
    assert "note: alpha column 'size' is also one of the model's inputs" in err


def test_a_damaged_parquet_file_is_named(fitted, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    _, model = fitted
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"PAR1 not really")
    code, _, err = run(["sweep", str(model), str(bad)], capsys)
    assert code == 2 and err.startswith(
        f"deepctrl: error: data file {bad} is not a valid Parquet file: "
    )
    assert err.count("\n") == 1


def test_a_parquet_list_column_is_named(tmp_path, capsys):
    pytest.importorskip("pyarrow")
    path = tmp_path / "nested.parquet"
    frame = pd.DataFrame({"x": [1.0, 2, 3, 4], "tags": [[1, 2]] * 4, "y": [1.0, 2, 3, 5]})
    frame.to_parquet(path)
    code, _, err = run(["fit", str(path), "--target", "y", "--out", str(tmp_path / "m")], capsys)
    assert code == 2 and err == (
        f"deepctrl: error: data file {path}: column 'tags' holds lists, not single values; "
        "spread them over columns of their own or leave the column out\n"
    )


def test_a_warning_repeated_with_other_numbers_prints_once(capsys):
    import warnings

    from deepctrl.cli.one_line_errors import one_line_warnings

    with one_line_warnings():
        for fold, rows in ((1, 12), (2, 9), (3, 14)):  # as each fold of a rule test warns
            warnings.warn(
                f"fold {fold}: 'store' has {rows} rows of unseen categories", stacklevel=1
            )
        warnings.warn("'region' has 3 rows of unseen categories", stacklevel=1)  # another
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines == [
        "deepctrl: warning: fold 1: 'store' has 12 rows of unseen categories",
        "deepctrl: warning: 'region' has 3 rows of unseen categories",
    ]


def test_deprecations_are_not_even_recorded_by_a_library_that_logs_what_it_records(capsys):
    """matplotlib records the warnings of reading its style files and logs each: a
    dependency's deprecation must not reach it, nor the terminal."""
    import warnings

    from deepctrl.cli.one_line_errors import one_line_warnings

    with one_line_warnings():
        with warnings.catch_warnings(record=True) as recorded:
            warnings.warn("'parseString' deprecated", DeprecationWarning, stacklevel=1)
            warnings.warn("old", PendingDeprecationWarning, stacklevel=1)
            warnings.warn("a real one", UserWarning, stacklevel=1)
        warnings.warn("'parseString' deprecated", DeprecationWarning, stacklevel=1)
    assert [str(w.message) for w in recorded] == ["a real one"]
    assert capsys.readouterr().err == ""


def test_sweep_says_how_many_rows_a_threshold_rule_judged(tmp_path, capsys):
    data = write_table(tmp_path)
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nkind = "threshold"\ncolumn = "price"\nthreshold = 5.0\n'
        'direction = "decreasing"\n'
    )
    model = fit_model(tmp_path, "cut.deepctrl", "--rules", str(rules))
    capsys.readouterr()
    frame = pd.read_csv(data)
    judged, rows = load_any(model).sweep(frame.drop(columns="sales")).attrs["judged_rows"]
    assert rows == 120 and 0 < judged < 60  # the rows just below a price of 5
    line = (
        f"verification judged on {judged} of 120 rows of {data} (a threshold rule judges only "
        "the rows whose perturbation crosses its threshold)"
        + ("; a ratio over so few rows is a weak guarantee" if judged < 30 else "")
    )
    _, err = sweep_json(model, data, "0,1", capsys)
    assert err.splitlines()[-1] == line
    code, out, err = run(["sweep", str(model), str(data), "--alphas", "0,1"], capsys)
    assert code == 0 and out.splitlines()[-1] == line


def test_every_command_help_ends_with_examples_that_parse(capsys):
    import shlex

    from deepctrl.cli.command_help import EXAMPLES
    from deepctrl.cli.main import build_parser

    for command, lines in EXAMPLES.items():
        with pytest.raises(SystemExit):
            main([command, "--help"])
        shown = capsys.readouterr().out
        assert shown.endswith("examples:\n" + "".join(f"  {line}\n" for line in lines))
        for line in lines:
            args = build_parser().parse_args(shlex.split(line)[1:])
            assert args.command == command


def test_a_whole_number_class_named_on_the_command_line_is_the_targets_label(tmp_path, capsys):
    import deepctrl as dc

    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 240)
    grade = np.where(x + rng.normal(0, 0.3, 240) > 0.8, 5, np.where(x > 0.3, 2, 1))
    pd.DataFrame({"x": x.round(4), "grade": grade}).to_csv(tmp_path / "g.csv", index=False)
    rules = tmp_path / "rules.toml"
    rules.write_text(
        '[[rule]]\nkind = "monotonic"\ncolumn = "x"\ndirection = "increasing"\n'
        'output = "5"\nweight = 0.5\n[[rule]]\nkind = "monotonic"\ncolumn = "x"\n'
        'direction = "decreasing"\noutput = "1"\n'
    )
    args = ["fit", str(tmp_path / "g.csv"), "--target", "grade", "--max-epochs", "2"]
    code, _, err = run(
        [
            *args,
            "--monotonic",
            "x=increasing",
            "--rule-class",
            "5",
            "--out",
            str(tmp_path / "a.deepctrl"),
            "--no-progress",
        ],
        capsys,
    )
    assert code == 0, err
    by_option = load_any(tmp_path / "a.deepctrl")
    assert by_option.rules == [dc.Monotonic("x", "increasing", output=5)]
    assert "rules: monotonic(x, increasing, on 5): P('5')" in by_option.summary()
    code, _, err = run(
        [*args, "--rules", str(rules), "--out", str(tmp_path / "b.deepctrl"), "--no-progress"],
        capsys,
    )
    assert code == 0, err
    outputs = [leaf.output for leaf in load_any(tmp_path / "b.deepctrl").rules[0].leaves()]
    assert outputs == [5, 1] and all(type(o) is int for o in outputs)


def test_a_class_named_on_the_command_line_finds_codes_written_with_a_decimal_point(
    tmp_path, capsys
):
    rng = np.random.default_rng(0)
    x = rng.uniform(0, 1, 240)
    code = np.where(x + rng.normal(0, 0.3, 240) > 0.8, 3.0, np.where(x > 0.3, 2.0, 1.0))
    pd.DataFrame({"x": x.round(4), "code": code}).to_csv(tmp_path / "c.csv", index=False)
    assert (tmp_path / "c.csv").read_text().splitlines()[1].endswith(".0")
    args = ["fit", str(tmp_path / "c.csv"), "--target", "code", "--max-epochs", "2"]
    out = str(tmp_path / "c.deepctrl")
    code_, _, err = run(
        [*args, "--monotonic", "x=decreasing", "--rule-class", "2", "--out", out, "--no-progress"],
        capsys,
    )
    assert code_ == 0, err
    assert "on '2'): P('2.0')" in load_any(out).summary()
    code_, _, err = run(
        [*args, "--monotonic", "x=decreasing", "--rule-class", "4", "--out", out, "--no-progress"],
        capsys,
    )
    assert code_ == 2 and "output '4' is not a class of this model (classes: 1.0, 2.0, 3.0)" in err
