"""The command line in shell pipelines, scripts and cron jobs: home paths, closed or broken
standard output, standard input, logs without progress bars, and interruptions."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from deepctrl.cli.main import main
from helpers import write_sales

FIT = ["--target", "sales", "--monotonic", "price=decreasing", "--max-epochs", "3"]
SOURCE = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture(scope="module")
def fitted(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("shell")
    data = write_sales(folder, 200)
    model = folder / "m.deepctrl"
    assert main(["fit", str(data), *FIT, "--no-progress", "--out", str(model)]) == 0
    return data, model


def test_a_home_path_the_shell_left_is_the_home_folder(fitted, tmp_path, monkeypatch, capsys):
    data, model = fitted
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["predict", str(model), str(data), "--out", "~/p.csv"]) == 0
    assert main(["fit", str(data), *FIT, "--out", "~/again.deepctrl"]) == 0
    args = ["test-rule", str(data), *FIT, "--seeds", "2", "--min-rows", "20", "--out", "~/rt"]
    assert main(args) == 0
    assert {"p.csv", "again.deepctrl", "rt"} <= {p.name for p in tmp_path.iterdir()}
    assert not (tmp_path / "~").exists()
    assert (tmp_path / "rt" / "rule_test.json").is_file()


def test_a_log_file_gets_no_progress_bars(tmp_path, capsys):
    data = write_sales(tmp_path, 200)
    assert main(["fit", str(data), *FIT, "--out", str(tmp_path / "m.deepctrl")]) == 0
    err = capsys.readouterr().err
    assert "\r" not in err and "task: regression" in err


def test_closed_standard_output_is_an_error_not_lost_data(fitted, monkeypatch, capsys):
    data, model = fitted
    monkeypatch.setattr(sys, "stdout", None)
    assert main(["predict", str(model), str(data), "--out", "-"]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .endswith("standard output is closed: give --out a file name to write to")
    )
    for table in ([], ["--json"]):  # sweep has no --out: its table goes to standard output
        assert main(["sweep", str(model), str(data), *table]) == 2
        assert (
            capsys.readouterr()
            .err.strip()
            .endswith(
                "standard output is closed: sweep writes its table there; redirect it to a file "
                "(> table.txt)"
            )
        )


def test_closed_standard_error_sends_the_notes_nowhere(fitted, monkeypatch, capsys):
    data, model = fitted
    monkeypatch.setattr(sys, "stderr", None)
    assert main(["predict", str(model), str(data), "--out", "-"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "sales" and "wrote" not in out
    float(lines[-1])  # the last line is a prediction, not a note
    assert sys.stderr is not None  # a sink, for the rest of the process


def test_standard_input_and_output_are_named_where_they_are_not_read_or_written(
    fitted, tmp_path, capsys
):
    data, model = fitted
    assert main(["predict", str(model), "-", "--out", "-"]) == 2
    assert "tables are not read from standard input" in capsys.readouterr().err
    assert main(["test-rule", str(data), *FIT, "--out", "-"]) == 2
    assert "--out - (standard output) is for deepctrl predict" in capsys.readouterr().err
    assert not Path("-").exists()


def test_sweep_json_writes_infinite_errors_as_null(fitted, monkeypatch, capsys):
    from deepctrl.tabular.regressor import DeepCTRLRegressor

    data, model = fitted
    real = DeepCTRLRegressor.sweep

    def overflowing(self, *args, **kwargs):
        table = real(self, *args, **kwargs)
        table["mse"] = np.inf
        return table

    monkeypatch.setattr(DeepCTRLRegressor, "sweep", overflowing)
    assert main(["sweep", str(model), str(data), "--alphas", "0,1", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out, parse_constant=pytest.fail)
    assert [row["mse"] for row in rows] == [None, None]


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "deepctrl", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": f"{SOURCE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def test_a_reader_that_stops_early_ends_the_command_quietly(fitted):
    data, model = fitted
    args = _command("sweep", str(model), str(data), "--alphas", "0:2:0.0005")
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env()) as run:
        assert run.stdout is not None and run.stderr is not None
        run.stdout.readline()
        run.stdout.close()  # as `| head -1` does
        err = run.stderr.read().decode()
        assert run.wait(timeout=120) == 141
    assert "error" not in err and "Traceback" not in err


JOBS = """
import time

def job(folder, i):
    open(f"{folder}/started_{i}", "w").close()
    time.sleep(3)
    return i
"""

RUNNER = """
import sys
from deepctrl.engine.workers import run_jobs
from slow_jobs import job

if __name__ == "__main__":
    sys.exit(len(run_jobs(job, [(sys.argv[1], i) for i in range(8)], workers=2)))
"""


@pytest.mark.parametrize(
    ("sig", "group"),
    [(signal.SIGINT, True), (signal.SIGTERM, False)],
    ids=["ctrl-c to the group", "kill of the parent alone"],
)
def test_an_interrupted_pool_starts_no_more_jobs_and_leaves_no_worker(tmp_path, sig, group):
    (tmp_path / "slow_jobs.py").write_text(textwrap.dedent(JOBS))
    (tmp_path / "runner.py").write_text(textwrap.dedent(RUNNER))
    env = {**_env(), "PYTHONPATH": f"{tmp_path}{os.pathsep}{_env()['PYTHONPATH']}"}
    run = subprocess.Popen(
        [sys.executable, "runner.py", str(tmp_path)], cwd=tmp_path, env=env, start_new_session=True
    )
    deadline = time.monotonic() + 120
    while not list(tmp_path.glob("started_*")):
        assert run.poll() is None and time.monotonic() < deadline, "no job started"
        time.sleep(0.1)
    if group:  # Ctrl-C in a terminal signals every process of the job
        os.killpg(run.pid, sig)
    else:  # `kill PID` or `timeout` signal the parent alone: its workers must not outlive it
        os.kill(run.pid, sig)
    started = time.monotonic()
    run.wait(timeout=60)
    assert time.monotonic() - started < 10  # not the 4 x 3 s of the jobs still queued
    left = ["?"]  # the group's processes: workers end within a second or so
    while left and time.monotonic() - started < 20:
        time.sleep(0.5)
        group = subprocess.run(["pgrep", "-g", str(run.pid)], capture_output=True, text=True)
        left = group.stdout.split()
    assert left == []
    assert 1 <= len(list(tmp_path.glob("started_*"))) <= 4
