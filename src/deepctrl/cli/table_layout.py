"""How a CSV file is laid out, for [read_table][deepctrl.cli.table_reading.read_table]: opening it
plain or compressed (a spreadsheet workbook named otherwise is named), its separator (told
by its first lines, or the ``sep=`` line spreadsheets write), its column names in composed
form, and the line on which a data row starts.
"""

from __future__ import annotations

import bz2
import codecs
import csv
import gzip
import io
import lzma
import re
import unicodedata
import zipfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

OPENERS: dict[str, Callable[..., Any]] = {  # each opens a compressed file by its suffix
    ".gz": gzip.open,
    ".bz2": bz2.open,
    ".xz": lzma.open,
}


def open_binary(path: Path) -> IO[bytes]:
    """A plain or compressed (by its suffix) file, opened for reading its bytes."""
    suffix = path.suffix.lower()
    if suffix == ".zip":
        archive = zipfile.ZipFile(path)
        names = [n for n in archive.namelist() if not n.endswith("/")]
        spreadsheet = workbook(names)
        if spreadsheet is not None:
            raise ValueError(f"data file {path} is {spreadsheet}; save it as CSV or Parquet")
        if len(names) != 1:
            raise ValueError(f"data file {path} must hold one file, not {len(names)}")
        return archive.open(names[0])
    opener = OPENERS.get(suffix)
    return path.open("rb") if opener is None else opener(path, "rb")


def workbook(names: Sequence[str]) -> str | None:
    """What spreadsheet a zip archive holding the files ``names`` is, or None for another
    archive.

    >>> workbook(["[Content_Types].xml", "_rels/.rels", "xl/workbook.xml"])
    'an Excel workbook (.xlsx)'
    >>> workbook(["mimetype", "content.xml"]), workbook(["sales.csv"])
    ('an OpenDocument spreadsheet (.ods)', None)
    """
    if "[Content_Types].xml" in names and any(n.startswith("xl/") for n in names):
        return "an Excel workbook (.xlsx)"
    if "mimetype" in names and "content.xml" in names:
        return "an OpenDocument spreadsheet (.ods)"
    return None


_HEAD_BYTES = 1 << 16
"""How much of a file's start tells its separator."""
_HEAD_RECORDS = 50
"""How many of its first lines tell its separator."""


def _head(path: Path) -> tuple[str, bool]:
    """The start of a CSV file as text (its byte order mark left out; bytes that are not
    UTF-8 replaced, for reading to name later), and whether that is the whole file."""
    with open_binary(path) as f:
        start = f.read(_HEAD_BYTES + 1)
    whole = len(start) <= _HEAD_BYTES
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")  # a cut character: left out
    return decoder.decode(start[:_HEAD_BYTES], final=whole).removeprefix("\ufeff"), whole


class Layout(NamedTuple):
    """How a CSV file is laid out: its separator, and how many lines come before its header
    (1 for the ``sep=;`` line spreadsheets write to name the separator, else 0)."""

    sep: str
    skip: int


_SEPARATORS = ("\t", ";", ",")
"""The separators read, the likelier first where more than one splits every line alike."""
_SEP_LINE = re.compile(r'"?sep=(.)"?[,;\t]*\s*')


def layout(path: Path) -> Layout:
    """How the CSV file at ``path`` is laid out (see :class:`Layout`): the separator a
    ``sep=`` first line names, else the one :func:`_separator` finds."""
    head, whole = _head(path)
    first = head.splitlines()[0] if head else ""
    named = _SEP_LINE.fullmatch(first)
    if named is None:
        return Layout(_separator(head, whole, path), 0)
    if named[1] not in _SEPARATORS:
        raise ValueError(
            f"data file {path}: its first line ({first.strip()!r}) names the separator "
            f"{named[1]!r}; save it comma, semicolon or tab separated"
        )
    return Layout(named[1], 1)


def _separator(head: str, whole: bool, path: Path) -> str:
    """The separator of a CSV file that starts with the text ``head`` (``whole``: the whole
    file): the one that splits the header (outside quotes) and each of the first data lines
    into as many values, the likelier one (tab, semicolon, comma) where several do ("Umsatz,
    netto;Preis" over "24,70;5,82" is a semicolon file); where none does, the one the header
    holds most; for a header of one name, a comma unless a data line holds one (then a
    semicolon). A tie between two in the header is an error naming both.

    >>> _separator('"Preis, EUR";Menge\\n1,5;2\\n', True, Path("t.csv"))
    ';'
    >>> _separator("Umsatz, netto;Preis\\n24,70;5,82\\n3,5;1,25\\n", True, Path("t.csv"))
    ';'
    """
    header = re.sub(r'"(?:[^"]|"")*"', "", head.splitlines()[0] if head else "")
    counts = {sep: header.count(sep) for sep in _SEPARATORS}
    most = max(counts.values())
    if "\0" in head or "\ufffd" in head:  # no UTF-8 text, which reading the file names
        return next((sep for sep in (",", *_SEPARATORS) if counts[sep] == most), ",")
    records = {sep: _records(head, whole, sep) for sep in _SEPARATORS}
    for sep in _SEPARATORS:
        if _splits_alike(records[sep]):
            return sep
    if not most:  # one column: a separator that splits no line ("1,5" in a semicolon file)
        return next((s for s in ",;" if all(len(r) == 1 for r in records[s])), ",")
    tied = [sep for sep in _SEPARATORS if counts[sep] == most]
    if len(tied) > 1:
        shown = " and ".join(repr(sep) for sep in tied)
        raise ValueError(
            f"data file {path}: cannot tell its separator: its header holds {most} each of "
            f"{shown}, and neither splits every line into as many values; quote the names "
            "that hold one"
        )
    return tied[0]


def _records(head: str, whole: bool, sep: str) -> list[list[str]]:
    """The first lines of ``head`` split at ``sep`` as a CSV reader splits them (blank
    lines left out; the last, maybe cut short, too unless ``head`` is the ``whole`` file)."""
    lines = _Lines(io.StringIO(head))
    try:
        records = [r for r in csv.reader(lines, delimiter=sep) if not _blank(r, lines.last)]
    except csv.Error:
        return []
    return records[: _HEAD_RECORDS if whole else min(_HEAD_RECORDS, len(records) - 1)]


class _Lines:
    """The lines of a text, as a CSV reader takes them one by one, the ``last`` one kept
    (the last line of the record it made)."""

    def __init__(self, text: Iterable[str]) -> None:
        self.lines = iter(text)
        self.last = ""

    def __iter__(self) -> Iterator[str]:
        return self

    def __next__(self) -> str:
        self.last = next(self.lines)
        return self.last


def _blank(record: Sequence[str], line: str) -> bool:
    """Whether a CSV record, read from ``line``, is a blank line, which pandas skips: no
    value, or spaces only, unquoted (pandas reads a quoted empty value, ``""``, as a row).

    >>> _blank([""], "\\n"), _blank(["  "], "  \\n"), _blank([""], '""\\n')
    (True, True, False)
    """
    return len(record) <= 1 and not "".join(record).strip() and '"' not in line


def _splits_alike(records: Sequence[Sequence[str]]) -> bool:
    """Whether ``records`` (the header first) hold two or more values each, as many as the
    header (or one more, empty: a separator ending a data line)."""
    if not records or len(records[0]) < 2:
        return False
    names = len(records[0])
    return all(len(r) == names or (len(r) == names + 1 and not r[-1].strip()) for r in records[1:])


def nfc(name: str) -> str:
    """A column name in Unicode's composed form (NFC), in which the command line reads the
    names of a file and its options: "ä" typed in a shell and "a" followed by a combining
    diaeresis (as macOS may write a file's names) are the same name.

    >>> nfc("Qualita\\u0308t") == "Qualit\\u00e4t"
    True
    """
    return unicodedata.normalize("NFC", name)


def line_of(path: Path, row: int) -> int:
    """The line of the CSV file at ``path`` on which its data row ``row`` (0 for the first)
    starts, as an editor numbers it: after the header and the lines before it, blank lines
    (which hold no row; a line of ``""`` holds one) and values in quotes that span lines.

    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = file.write_text('a;b\\n1;"x\\ny"\\n\\n2;z\\n')
    >>> line_of(file, 0), line_of(file, 1)
    (2, 5)
    >>> _ = file.write_text('v\\n""\\n\\n4\\n')
    >>> line_of(file, 1)
    4
    """
    where = layout(path)
    with (
        open_binary(path) as raw,
        io.TextIOWrapper(raw, encoding="utf-8-sig", newline="") as text,
    ):
        for _ in range(where.skip):
            text.readline()
        lines = _Lines(text)
        reader = csv.reader(lines, delimiter=where.sep)
        start, records = where.skip + 1, 0
        try:
            for record in reader:
                if not _blank(record, lines.last):
                    if records == row + 1:
                        return start
                    records += 1
                start = where.skip + reader.line_num + 1
        except csv.Error:
            pass
    return row + 2 + where.skip


def first_long_line(path: Path, where: Layout) -> tuple[int, int, int] | None:
    """The first data line of the CSV file at ``path`` with more values than its header
    names, as (line, values, names), or None.

    >>> import tempfile
    >>> file = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = file.write_text("a,b,c\\n1,2,3,note\\n4,5,6\\n")
    >>> first_long_line(file, Layout(",", 0))
    (2, 4, 3)
    """
    with (
        open_binary(path) as raw,
        io.TextIOWrapper(raw, encoding="utf-8-sig", errors="replace", newline="") as text,
    ):
        for _ in range(where.skip):
            text.readline()
        reader = csv.reader(text, delimiter=where.sep)
        try:
            names = len(next(reader))
            for record in reader:
                if len(record) > names:
                    return where.skip + reader.line_num, len(record), names
        except (csv.Error, StopIteration):
            pass
    return None
