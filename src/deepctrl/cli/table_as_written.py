"""What a CSV file's text says that the table read from it no longer shows: whole numbers
written with leading zeros (codes such as ``00126``), and cells such as "NA" or "None" read as
missing. A Parquet file's typed columns say nothing more.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from deepctrl.cli.table_reading import PARQUET_SUFFIXES, text_columns

_PADDED = re.compile(r"\s*0\d+\s*")


def zero_padded_columns(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str], rows: int = 10_000
) -> dict[str, str]:
    """The ``columns`` read as whole numbers whose text in a CSV file writes some with a
    leading zero (codes such as ``00126``), each with its first such value, from the first
    ``rows`` rows.

    >>> import tempfile
    >>> from deepctrl.cli.table_reading import read_table
    >>> with tempfile.TemporaryDirectory() as d:
    ...     _ = Path(d, "t.csv").write_text("item,n\\n00126,3\\n09461,10\\n")
    ...     zero_padded_columns(Path(d, "t.csv"), read_table(Path(d, "t.csv")), ["item", "n"])
    {'item': '00126'}
    """
    whole = [
        c
        for c in columns
        if pd.api.types.is_numeric_dtype(frame[c].dtype)
        and not pd.api.types.is_bool_dtype(frame[c].dtype)
        and bool((frame[c].dropna() % 1 == 0).all())
    ]
    if not whole or Path(path).suffix.lower() in PARQUET_SUFFIXES:
        return {}
    text = text_columns(path, frame, whole, nrows=rows)
    found = {}
    for name in whole:
        padded = text[name][text[name].str.fullmatch(_PADDED)]
        if len(padded):
            found[name] = str(padded.iloc[0]).strip()
    return found


def missing_spellings(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str]
) -> dict[str, list[tuple[str, int]]]:
    """For each of ``columns`` of the CSV file at ``path`` (read as ``frame``) that reads
    text such as "None" or "NA" as missing: each such spelling and how many rows have it,
    the most frequent first (the text a server would send as written). None for a Parquet
    file.

    Args:
        path: The table's file.
        frame: The table as read by [read_table][deepctrl.cli.table_reading.read_table].
        columns: The columns to look at.

    Returns:
        Column name -> [(spelling, rows), ...], for the columns that have such text.
    """
    if Path(path).suffix.lower() in PARQUET_SUFFIXES:  # typed columns: nothing spelled
        return {}
    text = text_columns(path, frame, columns)
    found = {}
    for name in columns:
        written = text[name].set_axis(frame.index).str.strip()
        spelled = written[frame[name].isna() & (written != "")]
        if len(spelled):
            counts = spelled.value_counts(sort=False)  # ties: the order the file has them
            ranked = sorted(counts.items(), key=lambda item: -item[1])
            found[name] = [(str(text), int(rows)) for text, rows in ranked]
    return found


def note_missing_spellings(
    path: str | Path, frame: pd.DataFrame, columns: Sequence[str], advice: str
) -> None:
    """A note on standard error for each column of :func:`missing_spellings`: its spellings
    and their rows, read as missing, then ``advice``."""
    for name, spellings in missing_spellings(path, frame, columns).items():
        rows = sum(n for _, n in spellings)
        shown = ", ".join(f"{text!r} ({n})" for text, n in spellings[:5])
        more = f" and {len(spellings) - 5} other spellings" if len(spellings) > 5 else ""
        written = (
            f"written {spellings[0][0]!r}" if len(spellings) == 1 else f"written {shown}{more}"
        )
        print(
            f"note: {path}: column {name!r} has {rows} row(s) {written}, read as missing{advice}",
            file=sys.stderr,
        )
