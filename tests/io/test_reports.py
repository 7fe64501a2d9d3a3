"""Markdown tables of the reports."""

import re

from deepctrl.io.reports import markdown_table


def _cells(line: str) -> list[str]:
    """The cells of a table row as GitHub markdown splits them: at every unescaped bar."""
    return [c.strip() for c in re.split(r"(?<!\\)\|", line.strip()[1:-1])]


def test_a_bar_in_a_cell_or_header_is_escaped_and_stays_in_its_cell():
    table = markdown_table(["group", "a|b"], [["food|snacks", 1.5], ["x", "p | q"]])
    header, rule, *rows = table.splitlines()
    assert _cells(header) == ["group", r"a\|b"]
    assert rule == "|---|---|"
    assert [_cells(r) for r in rows] == [[r"food\|snacks", "1.5"], ["x", r"p \| q"]]
