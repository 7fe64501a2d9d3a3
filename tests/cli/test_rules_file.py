"""Rules files (TOML): every rule kind, and every mistake reported with its line."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from deepctrl.cli.rules_file import (
    RuleTarget,
    build_rules,
    monotonic_spec,
    parse_rules_text,
    read_rules_file,
)
from deepctrl.core.rules import Additive, AllOf, Monotonic, Relative, Threshold
from deepctrl.tabular.table_rules import Expression

COLUMNS = {"price": np.array([2.0, 4.0, 6.0]), "temp": np.array([-5.0, 0.0, 5.0]),
           "color": np.array(["a", "b", "a"], dtype=object)}
REGRESSION = RuleTarget("sales", "regression")
BINARY = RuleTarget("sick", "classification", ["no", "yes"])


def build(text: str, target: RuleTarget = REGRESSION) -> list:
    return build_rules(parse_rules_text(textwrap.dedent(text), "r.toml"), COLUMNS, target)


def test_every_rule_kind():
    rules = build("""
        [[rule]]
        kind = "monotonic"
        column = "price"
        direction = "decreasing"

        [[rule]]
        kind = "threshold"
        column = "temp"
        threshold = 2.5
        additive = 1.5

        [[rule]]
        kind = "penalty"
        expression = "sales <= 3 * price"
        tau = 0.5
        """)
    mono, thr, pen = rules
    assert isinstance(mono, Monotonic) and mono.feature == "price"
    assert mono.direction == "decreasing" and isinstance(mono.perturbation, Relative)
    assert isinstance(thr, Threshold) and thr.threshold == 2.5 and thr.direction == "increasing"
    assert isinstance(thr.perturbation, Additive) and thr.perturbation.scale == 1.5
    assert isinstance(pen, Expression) and pen.tau == 0.5


def test_default_perturbation_depends_on_the_column():
    rules = build_rules([monotonic_spec("price=increasing"), monotonic_spec("temp=increasing")],
                        COLUMNS, REGRESSION)
    assert isinstance(rules[0].perturbation, Relative) and rules[0].perturbation.u == 0.1
    # temp crosses zero: additive, 0.1 standard deviation
    assert rules[1].perturbation.scale == pytest.approx(0.1 * np.std([-5.0, 0.0, 5.0]))


def test_weights_make_one_weighted_rule():
    (rule,) = build("""
        [[rule]]
        kind = "monotonic"
        column = "price"
        direction = "increasing"
        weight = 2.0
        [[rule]]
        kind = "penalty"
        expression = "sales >= 0"
        """)
    assert isinstance(rule, AllOf) and rule.weights == [2.0, 1.0]


def test_outputs_name_classes_and_a_binary_first_class_flips_the_direction():
    first, second = build("""
        [[rule]]
        kind = "monotonic"
        column = "price"
        direction = "increasing"
        output = "no"
        [[rule]]
        kind = "monotonic"
        column = "price"
        direction = "increasing"
        output = "yes"
        """, BINARY)
    assert (first.output, first.direction) == (0, "decreasing")
    assert (second.output, second.direction) == (0, "increasing")
    (multi,) = build("""
        [[rule]]
        kind = "threshold"
        column = "price"
        threshold = 3
        output = 2
        """, RuleTarget("grade", "classification", [0, 1, 2]))
    assert multi.output == 2


@pytest.mark.parametrize(("text", "message"), [
    ('[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "up"\n',
     "r.toml line 4: direction must be 'increasing' or 'decreasing', got 'up'"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "prize"\ndirection = "increasing"\n',
     "r.toml line 3: unknown column 'prize' \\(columns: price, temp, color\\)"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "color"\ndirection = "increasing"\n',
     "r.toml line 3: column 'color' is not numeric"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "sales"\ndirection = "increasing"\n',
     "r.toml line 3: column 'sales' is the target"),
    ('[[rule]]\nkind = "monotonic"\n\ncolumn = "price"\n',
     "r.toml line 1: the monotonic rule needs 'direction'"),
    ('[[rule]]\nkind = "monotone"\n', "r.toml line 2: kind must be one of monotonic, threshold, "
                                      "penalty, got 'monotone'"),
    ('[[rule]]\nkind = "penalty"\nexpression = "sales <= 1"\nscale = 2\n',
     "r.toml line 4: unknown key 'scale' for a penalty rule"),
    ('[[rule]]\nkind = "penalty"\nexpression = "sales <= os.system(1)"\n',
     "r.toml line 3: penalty expression .* is not allowed"),
    ('[[rule]]\nkind = "penalty"\nexpression = "sales <= wind"\n',
     "r.toml line 3: unknown name 'wind'"),
    ('[[rule]]\nkind = "threshold"\ncolumn = "price"\nthreshold = "high"\n',
     "r.toml line 4: threshold must be a number, got 'high'"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
     'relative = -1\n', "r.toml line 5: Relative perturbation needs u > 0"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\noutput = "x"\n',
     "r.toml line 5: output 'x' is not the target 'sales'"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
     'weight = -2\n', "r.toml line 5: weight must be >= 0"),
    ('[[rule]]\nkind = "monotonic"\ncolumn = = "price"\n',
     "r.toml line 3: not valid TOML: Invalid value"),
    ('[rules]\nkind = "monotonic"\n', "r.toml line 1: unknown entry 'rules'"),
    ('# nothing here\n', "r.toml: no rules"),
])
def test_mistakes_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        build_rules(parse_rules_text(text, "r.toml"), COLUMNS, REGRESSION)


def test_monotonic_flag_errors():
    with pytest.raises(ValueError, match="--monotonic price: write COLUMN=increasing"):
        monotonic_spec("price")
    with pytest.raises(ValueError, match="--monotonic price=down: direction must be"):
        build_rules([monotonic_spec("price=down")], COLUMNS, REGRESSION)


def test_read_rules_file_errors(tmp_path):
    with pytest.raises(ValueError, match="rules file .*missing.toml does not exist"):
        read_rules_file(tmp_path / "missing.toml")
    binary = tmp_path / "bin.toml"
    binary.write_bytes(b"\xff\xfe\x00rule")
    with pytest.raises(ValueError, match="is not a UTF-8 text file"):
        read_rules_file(binary)
    good = tmp_path / "good.toml"
    good.write_text('[[rule]]\nkind = "penalty"\nexpression = "sales >= 0"\n')
    assert read_rules_file(good)[0].where == f"{good} line 1"
