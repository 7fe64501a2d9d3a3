"""The table `deepctrl test-rule` prints: its header stands over its columns whatever the
length of the groups' names."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from deepctrl.cli.rule_test_command import _print_summary


@pytest.mark.parametrize("names", [["n", "s"], ["north", "coast"], ["a much longer name"]])
def test_the_header_stands_over_its_columns(names, capsys):
    stats = {"best_alpha": 0.1, "verification_alpha0": 0.25}
    segment = SimpleNamespace(statistics=stats, rows=159, verdict="inconclusive", reason="-")
    _print_summary(SimpleNamespace(groups=dict.fromkeys(names, segment), all=segment))
    header, *lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(names) + 1
    for label, value in [("rows", "159"), ("best alpha", "0.1"), ("verif. a=0", "0.25")]:
        end = header.index(label) + len(label)
        assert all(line.index(value) + len(value) == end for line in lines), (label, header)
    assert all(line.index("inconclusive") == header.index("verdict") for line in lines)
