"""Writing a table the user named: CSV (compressed when the name ends in ``.gz``, ``.bz2``,
``.xz`` or ``.zip``), Parquet for ``.parquet`` or ``.pq``, or CSV to standard output for
``-``. The file is replaced in one step (:func:`deepctrl.io.file_format.write_atomic`).
"""

from __future__ import annotations

import io
import sys
import zipfile
from pathlib import Path

import pandas as pd

from deepctrl.cli.table_reading import PARQUET_SUFFIXES, UNREAD_FORMATS
from deepctrl.io.file_format import write_atomic

STDOUT = "-"
_COMPRESSION = {".gz": "gzip", ".bz2": "bz2", ".xz": "xz", ".zip": "zip"}


def table_bytes(frame: pd.DataFrame, name: str | Path) -> bytes:
    """``frame`` encoded as the suffix of ``name`` asks, without the index.

    >>> table_bytes(pd.DataFrame({"a": [1, 2]}), "out.csv")
    b'a\\n1\\n2\\n'
    >>> import gzip
    >>> gzip.decompress(table_bytes(pd.DataFrame({"a": [1]}), "out.csv.gz"))
    b'a\\n1\\n'
    >>> table_bytes(pd.DataFrame({"a": [1]}), "o.csv.zip") == table_bytes(
    ...     pd.DataFrame({"a": [1]}), "o.csv.zip")
    True
    """
    suffix = Path(name).suffix.lower()
    buffer = io.BytesIO()
    if suffix in PARQUET_SUFFIXES:
        try:
            frame.to_parquet(buffer, index=False)
        except ImportError:
            raise ValueError(
                f"writing {name} needs pyarrow: pip install 'deepctrl[parquet]'"
            ) from None
        return buffer.getvalue()
    method = _COMPRESSION.get(suffix)
    if method == "zip":  # the archive's member is the name without ".zip"
        inner = Path(name).with_suffix("").name or "table.csv"
        member = zipfile.ZipInfo(inner, date_time=_FIXED_TIME)  # the same rows, the same bytes
        member.compress_type = zipfile.ZIP_DEFLATED
        with zipfile.ZipFile(buffer, "w") as archive:
            archive.writestr(member, frame.to_csv(index=False))
    elif method == "gzip":  # no time in the header: the same rows give the same bytes
        frame.to_csv(buffer, index=False, compression={"method": "gzip", "mtime": 0})
    else:
        frame.to_csv(buffer, index=False, compression=method)
    return buffer.getvalue()


_FIXED_TIME = (1980, 1, 1, 0, 0, 0)
"""The time a zip archive's member is stamped with (the earliest a zip file holds)."""


OTHER_FORMATS = (*UNREAD_FORMATS, ".tsv", ".tab")
"""Suffixes of table formats deepctrl does not write: a name ending in one would get CSV."""


def check_table_name(name: str | Path) -> None:
    """Refuse a file name whose suffix asks for a format deepctrl does not write (a
    spreadsheet, JSON, tab-separated), which would get CSV text under that name; any other
    name is CSV (or Parquet, or compressed CSV, by its suffix).

    >>> check_table_name("p.xlsx")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --out p.xlsx: deepctrl writes CSV (.csv, or compressed: .csv.gz, ...
    """
    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in OTHER_FORMATS:
        raise ValueError(
            f"--out {name}: deepctrl writes CSV (.csv, or compressed: .csv.gz, .csv.bz2, "
            ".csv.xz, .csv.zip) or Parquet (.parquet, .pq); give one of those suffixes"
        )


def check_model_name(name: str | Path) -> None:
    """Refuse a model file name whose suffix names a table or a rules file (``.csv``,
    ``.parquet``, ``.toml``, ...), which the model would replace without a word.

    >>> check_model_name("sales.csv.gz")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: --out sales.csv.gz names a table or rules file (.csv); fit writes a model ...
    """
    suffixes = [s.lower() for s in Path(name).suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION:
        suffixes = suffixes[:-1]
    if suffixes and suffixes[-1] in (".csv", ".toml", *PARQUET_SUFFIXES, *OTHER_FORMATS):
        raise ValueError(
            f"--out {name} names a table or rules file ({suffixes[-1]}); fit writes a model "
            "file: give a name such as model.deepctrl"
        )


def open_stdout(remedy: str = "give --out a file name to write to") -> None:
    """A `ValueError` when standard output is closed (a daemon's, or ``>&-``), which Python
    shows as ``sys.stdout = None``: data written there would be lost without a word."""
    if sys.stdout is None:
        raise ValueError(f"standard output is closed: {remedy}")


def write_table(frame: pd.DataFrame, out: str | Path) -> None:
    """Write ``frame`` to ``out`` (see the module), or as CSV to standard output for ``-``."""
    if str(out) == STDOUT:
        open_stdout()
        data = table_bytes(frame, "stdout.csv")
        binary = getattr(sys.stdout, "buffer", None)  # absent when stdout is a text buffer
        if binary is None:
            sys.stdout.write(data.decode("utf-8"))
        else:
            sys.stdout.flush()
            binary.write(data)
        sys.stdout.flush()
        return
    write_atomic(out, table_bytes(frame, out))
