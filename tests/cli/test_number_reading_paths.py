"""Reading numbers written as text takes one of two paths: pyarrow's regular expressions
over whole columns, or Python's ``re`` once per distinct value (without pyarrow, and for
values with digits other than 0-9). Both must read every file alike, value for value and
note for note."""

from __future__ import annotations

import contextlib
import csv
import io
import warnings

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from deepctrl.cli import column_patterns, plain_numbers
from deepctrl.cli.table_reading import read_table

VALUES = [
    "1,234.50",
    "12,000",
    "-3,500.25",
    "$3.50",
    "\u2212$3.50",
    "€ 1.200,50",
    "1.927",
    "10.482",
    "2.125",
    "1.25",
    "12%",
    "-4.5 %",
    "\u22121.5",
    "0,75",
    "1 234,5",
    "1\u00a0234,5",
    "3",
    "-0",
    "0.0",
    "",
    "Total",
    "Summe",
    "n/a",
    "\u0661\u0662",
    "\uff11\uff12",
    "7e3",
    " 42 ",
    "+8",
    "abc",
    "1,5",
    "2,25",
    "£7",
    "¥1,000",
    "1.000.000",
    "3.14159",
    "1\u202f000",
    "12\u00a0%",
    "\u00a03,5",
    "$\u00a03.50",
    "\u2212\u00a05",
    "4\u3000",
]


def read_both(path, monkeypatch) -> list[tuple[str, object, str]]:
    """(kind, result, notes) by each path: the frame or the error, and what went to stderr."""
    out = []
    for arrow in (True, False):
        with monkeypatch.context() as patched:
            if not arrow:
                for module in (column_patterns, plain_numbers):
                    patched.setattr(module, "arrow_array", lambda text: None)
            notes = io.StringIO()
            with contextlib.redirect_stderr(notes), warnings.catch_warnings(record=True):
                try:
                    frame = read_table(path)
                    out.append(("frame", frame, notes.getvalue()))
                except ValueError as exc:
                    out.append(("error", str(exc), notes.getvalue()))
    return out


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sep=st.sampled_from([",", ";"]),
    columns=st.lists(
        st.lists(st.sampled_from(VALUES), min_size=1, max_size=8), min_size=1, max_size=3
    ),
)
def test_pyarrow_and_python_paths_read_every_file_alike(tmp_path, monkeypatch, sep, columns):
    rows = max(len(c) for c in columns)
    text = io.StringIO()
    writer = csv.writer(text, delimiter=sep, lineterminator="\n")
    writer.writerow([f"c{i}" for i in range(len(columns))])
    for r in range(rows):
        writer.writerow([c[r % len(c)] for c in columns])
    path = tmp_path / "t.csv"
    path.write_text(text.getvalue(), encoding="utf-8")
    (kind_a, a, notes_a), (kind_b, b, notes_b) = read_both(path, monkeypatch)
    assert (kind_a, notes_a) == (kind_b, notes_b)
    if kind_a == "error":
        assert a == b
    else:
        pd.testing.assert_frame_equal(a, b, check_exact=True)


def test_the_python_path_is_the_one_taken_without_pyarrow(tmp_path, monkeypatch):
    path = tmp_path / "money.csv"
    path.write_text('price,qty\n"$1,234.50",1\n"\u2212$3.50",2\n', encoding="utf-8")
    calls = []
    python_sub = column_patterns._each_distinct

    def counted(*args, **kwargs):
        calls.append(1)
        return python_sub(*args, **kwargs)

    for module in (column_patterns, plain_numbers):
        monkeypatch.setattr(module, "arrow_array", lambda text: None)
    monkeypatch.setattr(column_patterns, "_each_distinct", counted)
    frame = read_table(path)
    assert frame["price"].tolist() == pytest.approx([1234.5, -3.5]) and calls
