"""Rules files (TOML) for ``deepctrl fit --rules RULES.toml``; every problem is reported
with the file's line number.

One ``[[rule]]`` table per rule::

    [[rule]]                      # the prediction falls as the price rises
    kind = "monotonic"
    column = "price"
    direction = "decreasing"      # or "increasing"
    relative = 0.1                # optional: raise the price by up to 10 %, or
                                  # `additive = 5.0` in the column's units (default: chosen
                                  # from the column, as the estimators choose it)

    [[rule]]                      # the risk is higher above ap_hi = 129.5
    kind = "threshold"
    column = "ap_hi"
    threshold = 129.5             # in the column's units
    direction = "increasing"
    output = "late"               # optional: the class (classification) or target column

    [[rule]]                      # a penalty on named columns and outputs
    kind = "penalty"
    expression = "charges <= 400 * bmi + 20000"
    tau = 0.0                     # optional tolerance
    weight = 0.5                  # optional, every kind: weight of this rule's loss

>>> specs = parse_rules_text('[[rule]]\\nkind = "monotonic"\\ncolumn = "x"\\n'
...                          'direction = "up"\\n', "r.toml")
>>> try:
...     build_rules(specs)
... except ValueError as e:
...     print(e)
r.toml line 4: direction must be 'increasing' or 'decreasing', got 'up'
"""

from __future__ import annotations

import datetime
import math
import re
import sys
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from deepctrl.cli.table_layout import nfc
from deepctrl.io.file_format import not_a_file

if TYPE_CHECKING:  # rules load PyTorch: imported where built, after the checks
    from deepctrl.core.rules import Perturbation, Rule

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10
    try:
        import tomli as tomllib
    except ImportError:
        tomllib = None

_COMMON = {"kind", "weight"}
KEYS: dict[str, tuple[set[str], set[str]]] = {  # kind -> (required, optional)
    "monotonic": ({"column", "direction"}, {"output", "relative", "additive"}),
    "threshold": ({"column", "threshold"}, {"direction", "output", "relative", "additive"}),
    "penalty": ({"expression"}, {"tau"}),
}
_HEADER = re.compile(r"^\s*\[\[\s*rule\s*\]\]")
_TABLE = re.compile(r"^\s*\[")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')\s*[=.]")
_SUB_TABLE = re.compile(r"^\s*\[\s*rule\s*\.\s*([A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')")


@dataclass
class RuleSpec:
    """One rule as written by the user, with where it was written (for messages)."""

    values: dict[str, Any]
    where: str
    key_where: dict[str, str] = field(default_factory=dict)

    def at(self, key: str) -> str:
        return self.key_where.get(key, self.where)


_FLOAT_LIMIT = int(sys.float_info.max)
"""The largest whole number a float holds: a rules file's integer above it is refused."""


def _line_map(text: str, source: str) -> tuple[list[str], list[dict[str, str]], dict[str, str]]:
    """Where each [[rule]] starts, where each of its keys is, and where top-level keys are."""
    headers: list[str] = []
    keys: list[dict[str, str]] = []
    top: dict[str, str] = {}
    current: dict[str, str] | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if _HEADER.match(line):
            headers.append(f"{source} line {number}")
            current = {}
            keys.append(current)
        elif (sub := _SUB_TABLE.match(line)) is not None and current is not None:
            current.setdefault(sub.group(1).strip("\"'"), f"{source} line {number}")
            current = {}  # the sub-table's own keys
        elif _TABLE.match(line):
            name = line.strip().strip("[]").strip()
            top.setdefault(name.split(".")[0], f"{source} line {number}")
            current = None
        elif (m := _KEY.match(line)) is not None:
            key = m.group(1).strip("\"'")
            target = current if current is not None else top
            target.setdefault(key, f"{source} line {number}")
    return headers, keys, top


def parse_rules_text(text: str, source: str = "rules file") -> list[RuleSpec]:
    """The rules of a TOML text, checked for structure (kinds, keys, value types)."""
    if tomllib is None:
        raise ValueError("reading a rules file needs Python 3.11 or the tomli package")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"\(at line (\d+), column \d+\)", str(exc))
        where = f"{source} line {found.group(1)}" if found else source
        problem = re.sub(r"\s*\(at line \d+, column \d+\)", "", str(exc)) or "invalid TOML"
        raise ValueError(f"{where}: not valid TOML: {problem}") from None
    except RecursionError:
        raise ValueError(f"{source}: not valid TOML: nested too deeply") from None
    headers, key_lines, top = _line_map(text, source)
    for key in data:
        if key != "rule":
            raise ValueError(
                f"{top.get(key, source)}: unknown entry {key!r}; write each rule "
                "as a [[rule]] table"
            )
    rules = data.get("rule", [])
    if not isinstance(rules, list) or not all(isinstance(r, dict) for r in rules):
        raise ValueError(f"{top.get('rule', source)}: 'rule' must be written as [[rule]] tables")
    if not rules:
        raise ValueError(f"{source}: no rules; write each rule as a [[rule]] table")
    specs = []
    for i, values in enumerate(rules):
        where = headers[i] if i < len(headers) else source
        spec = RuleSpec(values, where, key_lines[i] if i < len(key_lines) else {})
        _check_keys(spec)
        specs.append(spec)
    return specs


def read_rules_file(path: str | Path) -> list[RuleSpec]:
    """Read and check a rules file."""
    if not str(path):
        raise ValueError("--rules is empty; give the rules file")
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"rules file {path} is a folder; give the rules file in it")
    if not path.is_file():
        raise ValueError(not_a_file(path, "rules file"))
    try:
        text = path.read_text(encoding="utf-8-sig")  # a byte-order mark is fine
    except UnicodeDecodeError:
        raise ValueError(f"rules file {path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise ValueError(f"cannot read rules file {path}: {exc.strerror}") from None
    return parse_rules_text(text, str(path))


_LARGEST = {"weight": 1e6, "relative": 10.0}
"""The largest weight and relative change a rule takes (in absolute value)."""
_WHY_LARGEST = {
    "weight": "a rule weighs relative to the others; a huge one overflows the training loss",
    "relative": "10 moves the column by 1,000 %",
}


def _shown(value: Any) -> str:
    """A TOML value for a message: a date or time as TOML writes it, anything else as
    Python shows it.

    >>> _shown(datetime.date(2024, 6, 1)), _shown("high")
    ('the date 2024-06-01', "'high'")
    """
    if isinstance(value, datetime.date | datetime.time):
        return f"the {'time' if isinstance(value, datetime.time) else 'date'} {value.isoformat()}"
    return repr(value)


def _check_keys(spec: RuleSpec) -> None:
    kind = spec.values.get("kind")
    if kind is None:
        raise ValueError(f"{spec.where}: a rule needs 'kind' ({', '.join(KEYS)})")
    if not isinstance(kind, str) or kind not in KEYS:
        raise ValueError(
            f"{spec.at('kind')}: kind must be one of {', '.join(KEYS)}, got {_shown(kind)}"
        )
    required, optional = KEYS[kind]
    for key in spec.values:
        if key not in required | optional | _COMMON:
            raise ValueError(
                f"{spec.at(key)}: unknown key {key!r} for a {kind} rule "
                f"(allowed: {', '.join(sorted(required | optional | _COMMON))})"
            )
    for key in sorted(required - set(spec.values)):
        raise ValueError(f"{spec.where}: the {kind} rule needs {key!r}")
    numbers = {"weight", "relative", "additive", "threshold", "tau"}
    for key in numbers & set(spec.values):
        value = spec.values[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{spec.at(key)}: {key} must be a number, got {_shown(value)}")
        if isinstance(value, int) and abs(value) > _FLOAT_LIMIT:  # float() of it would overflow
            raise ValueError(f"{spec.at(key)}: {key} must be a finite number, got one too large")
        if not math.isfinite(value):
            raise ValueError(f"{spec.at(key)}: {key} must be a finite number, got {value!r}")
    for key in ("column", "direction", "expression"):
        if key in spec.values and not isinstance(spec.values[key], str):
            raise ValueError(f"{spec.at(key)}: {key} must be text, got {_shown(spec.values[key])}")
    output = spec.values.get("output")
    if output is not None and (isinstance(output, bool) or not isinstance(output, str | int)):
        raise ValueError(
            f"{spec.at('output')}: output must be a class label or target name "
            f"(text) or an index, got {output!r}"
        )
    if {"relative", "additive"} <= set(spec.values):
        raise ValueError(f"{spec.at('additive')}: give 'relative' or 'additive', not both")
    if spec.values.get("weight", 1.0) < 0:
        raise ValueError(f"{spec.at('weight')}: weight must be >= 0")
    for key, largest in _LARGEST.items():
        if abs(spec.values.get(key, 0.0)) > largest:
            raise ValueError(
                f"{spec.at(key)}: {key} must be at most {largest:g}, got {spec.values[key]:g} "
                f"({_WHY_LARGEST[key]})"
            )


def monotonic_spec(
    text: str, rule_class: str | None = None, columns: Collection[str] = ()
) -> RuleSpec:
    """A rule from ``--monotonic COLUMN=increasing|decreasing`` (on the class
    ``rule_class`` when given: ``--rule-class``). Spaces around the column's name are left
    out, unless the table's ``columns`` name it with them and not without.

    >>> monotonic_spec("price = increasing").values["column"]
    'price'
    >>> monotonic_spec("quality =increasing", None, ["quality "]).values["column"]
    'quality '
    """
    where = f"--monotonic {text}"
    written, sep, direction = text.rpartition("=")
    column, direction = written.strip(), direction.strip()
    if column not in columns and written in columns:
        column = written
    if not sep or not column:
        raise ValueError(f"{where}: write COLUMN=increasing or COLUMN=decreasing")
    values = {"kind": "monotonic", "column": column, "direction": direction}
    return RuleSpec(values if rule_class is None else {**values, "output": rule_class}, where)


def _perturbation(spec: RuleSpec) -> Perturbation | None:
    """The perturbation the rule gives, or None (the estimator chooses one from the
    column: :func:`deepctrl.tabular.table_rules.default_perturbation`)."""
    from deepctrl.core.checks import finite_real
    from deepctrl.core.rules import Additive, Relative

    for key, kind in (("relative", Relative), ("additive", Additive)):
        if key in spec.values:
            try:
                return kind(finite_real(spec.values[key], key, positive=True))
            except ValueError as exc:
                raise ValueError(f"{spec.at(key)}: {exc}") from None
    return None


def _feature_rule(spec: RuleSpec) -> Rule:
    v = spec.values
    direction = v.get("direction", "increasing")
    if direction not in ("increasing", "decreasing"):
        raise ValueError(
            f"{spec.at('direction')}: direction must be 'increasing' or "
            f"'decreasing', got {direction!r}"
        )
    from deepctrl.core.rules import Monotonic, Threshold

    output = v.get("output")
    column = nfc(v["column"])  # as the command line reads names
    if v["kind"] == "monotonic":
        return Monotonic(column, direction, output, _perturbation(spec))
    return Threshold(column, v["threshold"], output, direction, _perturbation(spec))


def _penalty_rule(spec: RuleSpec) -> Rule:
    from deepctrl.tabular.table_rules import Expression

    try:
        text = nfc(spec.values["expression"])
        return Expression(text, spec.values.get("tau", 0.0))
    except ValueError as exc:
        raise ValueError(f"{spec.at('expression')}: {exc}") from None


def build_rules(specs: Sequence[RuleSpec]) -> list[Rule]:
    """Rules for an estimator from specs, each remembering where it was written (its
    ``where``, the ``[[rule]]`` line, and ``key_where``, the line of each key, which the
    estimator's messages quote). Columns, outputs, default
    perturbations, duplicates and contradictions are the estimator's to check and choose
    (:func:`deepctrl.tabular.table_rules.resolve`), as for rules written in Python."""
    rules, weights = [], []
    for spec in specs:
        build = _penalty_rule if spec.values["kind"] == "penalty" else _feature_rule
        rule = build(spec)
        rule.where = spec.where  # type: ignore[attr-defined]
        rule.key_where = spec.key_where  # type: ignore[attr-defined]
        rules.append(rule)
        weights.append(float(spec.values.get("weight", 1.0)))
    if weights and not any(weights):
        raise ValueError(
            f"{specs[0].where}: every rule has weight 0, so no rule would act; give one a "
            "weight above 0"
        )
    if any(w != 1.0 for w in weights):
        from deepctrl.core.rules import AllOf

        return [AllOf(rules, weights)]
    return rules
