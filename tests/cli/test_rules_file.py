"""Rules files (TOML): every rule kind, and every mistake reported with its line."""

from __future__ import annotations

import textwrap

import numpy as np
import pandas as pd
import pytest

from deepctrl.cli.rules_file import build_rules, monotonic_spec, parse_rules_text, read_rules_file
from deepctrl.core.rules import Additive, AllOf, Monotonic, Relative, Threshold
from deepctrl.tabular.encoding import TableEncoder
from deepctrl.tabular.model_outputs import Outputs
from deepctrl.tabular.table_rules import Expression, resolve

TABLE = pd.DataFrame({"price": [2.5, 4.0, 6.0], "temp": [-5.0, 0.0, 5.0], "color": ["a", "b", "a"]})
ENCODER = TableEncoder.fit(TABLE)
REGRESSION = Outputs.regression(["sales"])
BINARY = Outputs.classification(["no", "yes"])


def build(text: str) -> list:
    return build_rules(parse_rules_text(textwrap.dedent(text), "r.toml"))


def resolved(text: str, outputs: Outputs = REGRESSION):
    """The rules of a rules file as the estimator checks and resolves them."""
    return resolve(build(text), ENCODER, outputs)


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
    # no perturbation written: the estimator chooses it from the column
    assert mono.direction == "decreasing" and mono.given_perturbation is None
    assert isinstance(thr, Threshold) and thr.threshold == 2.5 and thr.direction == "increasing"
    assert isinstance(thr.perturbation, Additive) and thr.perturbation.scale == 1.5
    assert isinstance(pen, Expression) and pen.tau == 0.5
    assert [r.where for r in rules] == ["r.toml line 2", "r.toml line 7", "r.toml line 13"]


def test_default_perturbation_depends_on_the_column():
    rule = resolve(
        build_rules([monotonic_spec("price=increasing"), monotonic_spec("temp=increasing")]),
        ENCODER,
        REGRESSION,
    )
    price, temp = (leaf.perturbation.inner for leaf in rule.leaves())
    assert isinstance(price, Relative) and price.u == 0.1
    # temp crosses zero: additive; in whole degrees, up to the next one (0.1 sd is 0.41)
    assert temp.scale == 1.0 > 0.1 * np.std([-5.0, 0.0, 5.0])


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
    first, second = resolved(
        """
        [[rule]]
        kind = "monotonic"
        column = "price"
        direction = "increasing"
        output = "no"
        [[rule]]
        kind = "monotonic"
        column = "temp"
        direction = "increasing"
        output = "yes"
        """,
        BINARY,
    ).leaves()
    assert (first.output, first.direction) == (0, "decreasing")
    assert (second.output, second.direction) == (0, "increasing")
    multi = resolved(
        """
        [[rule]]
        kind = "threshold"
        column = "price"
        threshold = 3
        output = 2
        """,
        Outputs.classification([0, 1, 2]),
    )
    assert multi.output == 2


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "up"\n',
            "r.toml line 4: direction must be 'increasing' or 'decreasing', got 'up'",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "prize"\ndirection = "increasing"\n',
            "rule monotonic\\(prize, increasing\\) \\(r.toml line 3\\): unknown column "
            "'prize'; the table has: 'price', 'temp', 'color'",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "color"\ndirection = "increasing"\n',
            "\\(r.toml line 3\\) needs a numeric or date column, but 'color' is categorical",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "sales"\ndirection = "increasing"\n',
            "\\(r.toml line 3\\): unknown column 'sales'",
        ),
        (
            '[[rule]]\nkind = "monotonic"\n\ncolumn = "price"\n',
            "r.toml line 1: the monotonic rule needs 'direction'",
        ),
        (
            '[[rule]]\nkind = "monotone"\n',
            "r.toml line 2: kind must be one of monotonic, threshold, penalty, got 'monotone'",
        ),
        (
            '[[rule]]\nkind = "penalty"\nexpression = "sales <= 1"\nscale = 2\n',
            "r.toml line 4: unknown key 'scale' for a penalty rule",
        ),
        (  # a sub-table, and a dotted key, are found on their own lines
            '[[rule]]\nkind = "penalty"\nexpression = "sales <= 1"\n\n[rule.options]\nx = 1\n',
            "r.toml line 5: unknown key 'options' for a penalty rule",
        ),
        (
            '[[rule]]\nkind = "penalty"\nexpression = "sales <= 1"\noptions.x = 1\n',
            "r.toml line 4: unknown key 'options' for a penalty rule",
        ),
        (
            '[[rule]]\nkind = "penalty"\nexpression = "sales <= os.system(1)"\n',
            "r.toml line 3: penalty expression .* is not allowed",
        ),
        (
            '[[rule]]\nkind = "penalty"\nexpression = "sales <= wind"\n',
            "penalty\\(sales <= wind\\) \\(r.toml line 3\\): unknown name 'wind'; the "
            "numeric columns are price, temp and the outputs sales",
        ),
        (
            '[[rule]]\nkind = ["monotonic"]\ncolumn = "price"\n',
            "r.toml line 2: kind must be one of monotonic, threshold, penalty, "
            "got \\['monotonic'\\]",
        ),
        (
            '[[rule]]\nkind = "threshold"\ncolumn = "price"\nthreshold = "high"\n',
            "r.toml line 4: threshold must be a number, got 'high'",
        ),
        (
            '[[rule]]\nkind = "threshold"\ncolumn = "price"\nthreshold = 2024-06-01\n',
            "r.toml line 4: threshold must be a number, got the date 2024-06-01",
        ),
        (
            '[[rule]]\ncolumn = "price"\ndirection = "increasing"\n',
            "r.toml line 1: a rule needs 'kind' \\(monotonic, threshold, penalty\\)",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            "relative = -1\n",
            "r.toml line 5: relative must be > 0, got -1",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            'output = "x"\n',
            "\\(r.toml line 5\\): output 'x' is not a target of this model \\(targets: sales\\)",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            "output = 1.5\n",
            "r.toml line 5: output must be a class label or target name",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "decreasing"\n',
            "rules monotonic\\(price, increasing\\) \\(r.toml line 1\\) and monotonic\\(price, "
            "decreasing\\) \\(r.toml line 5\\) contradict each other: sales cannot both rise and "
            "fall with 'price'",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n',
            "say the same of 'price' and sales: give it once",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            "weight = -2\n",
            "r.toml line 5: weight must be >= 0",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = = "price"\n',
            "r.toml line 3: not valid TOML: Invalid value",
        ),
        (
            '[[rule]]\nkind = "threshold"\ncolumn = "price"\nthreshold = nan\n',
            "r.toml line 4: threshold must be a finite number, got nan",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            "weight = inf\n",
            "r.toml line 5: weight must be a finite number, got inf",
        ),
        (
            '[[rule]]\nkind = "monotonic"\ncolumn = "price"\ndirection = "increasing"\n'
            "weight = 0\n",
            "r.toml line 1: every rule has weight 0, so no rule would act",
        ),
        ('[rules]\nkind = "monotonic"\n', "r.toml line 1: unknown entry 'rules'"),
        ("# nothing here\n", "r.toml: no rules"),
    ],
)
def test_mistakes_name_the_line(text, message):
    with pytest.raises(ValueError, match=message):
        resolved(text)


def test_monotonic_flag_errors():
    with pytest.raises(ValueError, match="--monotonic price: write COLUMN=increasing"):
        monotonic_spec("price")
    with pytest.raises(ValueError, match="--monotonic price=down: direction must be"):
        build_rules([monotonic_spec("price=down")])


def test_the_rule_class_option_names_the_class_of_every_monotonic_flag():
    rules = build_rules([monotonic_spec("price=increasing", "no")])
    assert rules[0].output == "no"
    (rule,) = resolve(rules, ENCODER, BINARY).leaves()
    assert (rule.output, rule.direction) == (0, "decreasing")  # P(no) = 1 - P(yes)


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
    marked = tmp_path / "bom.toml"  # a byte-order mark, as some editors on Windows write
    marked.write_text('\ufeff[[rule]]\nkind = "penalty"\nexpression = "sales >= 0"\n')
    assert read_rules_file(marked)[0].where == f"{marked} line 1"
