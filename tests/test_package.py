"""The package's public names, imported on first use: ``import deepctrl`` and the command
line's input checks do not load PyTorch or scikit-learn."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch

import deepctrl as dc


def test_import_and_input_checks_load_neither_torch_nor_sklearn(tmp_path):
    pickled = tmp_path / "m.deepctrl"
    pickled.write_bytes(b"\x80\x04K\x01.")  # pickle.dumps(1)
    table = tmp_path / "t.csv"
    table.write_text("x,y\n1,2\n3,4\n")
    typo = tmp_path / "typo.csv"  # missing values are imputed, text in a number column is not
    typo.write_text("x,size\n1,2\nabc,4\n3,5\n")
    model = tmp_path / "table.deepctrl"  # only the header matters to the checks below
    dc.save(
        torch.nn.Linear(1, 1),
        model,
        {
            "estimator": "DeepCTRLRegressor",
            "estimator_format": 1,
            "preprocessing": {"columns": [{"name": "x"}, {"name": "size"}]},
            "fitted": {"output_names_": ["y"]},
        },
    )
    bad_inputs = [
        ["fit", str(tmp_path / "nowhere.csv"), "--target", "y", "--out", str(tmp_path / "m")],
        ["fit", str(table), "--target", "z", "--out", str(tmp_path / "m")],
        ["fit", str(table), "--target", "y", "--monotonic", "x=up", "--out", str(tmp_path / "m")],
        ["sweep", str(pickled), str(table)],
        ["predict", str(table), str(table), "--alpha", "strong", "--out", str(tmp_path / "p")],
        ["predict", str(model), str(table), "--out", str(tmp_path / "p")],
        ["predict", str(model), str(typo), "--out", str(tmp_path / "p")],
    ]
    code = (
        "import json, sys\n"
        "import deepctrl, deepctrl.cli.main\n"
        "heavy = lambda: [m for m in ('torch', 'sklearn', 'scipy') if m in sys.modules]\n"
        f"codes = [deepctrl.cli.main.main(args) for args in {bad_inputs!r}]\n"
        "before = heavy()\n"
        "deepctrl.DeepCTRL\n"
        "print(json.dumps([codes, before, heavy()]))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    codes, before, after = json.loads(done.stdout)
    assert codes == [2] * len(bad_inputs), done.stderr
    errors = done.stderr.splitlines()
    assert len(errors) == len(bad_inputs), done.stderr
    assert errors[-2].endswith("t.csv lacks column(s) the model needs: 'size'")
    assert "column 'x' has text in 1 of 3 rows (line 3: 'abc')" in errors[-1]
    assert before == [] and "torch" in after  # torch loads when a public name is first used


def test_every_public_name_resolves():
    assert sorted(dc.__all__) == sorted(set(dc.__all__))
    for name in dc.__all__:
        assert getattr(dc, name) is not None, name
        assert name in dir(dc)
    assert dc.Monotonic is dc.rules.Monotonic
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = dc.Nope


@pytest.mark.parametrize(
    ("args", "extra"),
    [
        (["fit", "x.csv", "--target", "y", "--out", "m"], "tabular"),
        (["export", "m.deepctrl", "--out", "m.onnx"], "tabular,onnx"),  # both, in one go
    ],
)
def test_a_command_whose_extra_is_missing_says_what_to_install(tmp_path, args, extra):
    """Without pandas (the base install), a table command names its extras in one line."""
    code = (
        "import sys\n"
        "sys.modules['pandas'] = None\n"
        "from deepctrl.cli.main import main\n"
        f"raise SystemExit(main({args!r}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [
        f"deepctrl: error: 'deepctrl {args[0]}' needs pandas: pip install 'deepctrl[{extra}]'"
    ]


def test_reproduce_checks_its_extra_before_training(tmp_path, monkeypatch, capsys):
    import importlib.util

    from deepctrl.cli.main import main

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    assert main(["reproduce", "pendulum", "--quick", "--out", str(tmp_path / "r")]) == 2
    assert capsys.readouterr().err.splitlines() == [
        "deepctrl: error: 'deepctrl reproduce' needs matplotlib: pip install 'deepctrl[paper]'"
    ]
    assert not (tmp_path / "r").exists()


def test_a_table_name_without_the_tabular_extra_names_the_extra():
    code = (
        "import sys; sys.modules['pandas'] = None\n"  # as if pandas were not installed
        "import deepctrl as dc\n"
        "try:\n    dc.DeepCTRLRegressor\nexcept ImportError as exc:\n    print(exc)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == (
        "deepctrl.DeepCTRLRegressor needs pandas, which the tabular extra installs: "
        "pip install 'deepctrl[tabular]'"
    )


def test_dir_lists_the_public_names_only():
    assert dir(dc) == sorted(dc.__all__)
