"""Rules files (TOML) for ``deepctrl fit --rules RULES.toml``; every problem is reported
with the file's line number.

One ``[[rule]]`` table per rule::

    [[rule]]                      # the prediction falls as the price rises
    kind = "monotonic"
    column = "price"
    direction = "decreasing"      # or "increasing"
    relative = 0.1                # optional: raise the price by up to 10 % (default when
                                  # the column is positive), or `additive = 5.0` in the
                                  # column's units (default: 0.1 standard deviation)

    [[rule]]                      # the risk is higher above ap_hi = 129.5
    kind = "threshold"
    column = "ap_hi"
    threshold = 129.5             # in the column's units
    direction = "increasing"
    output = 1                    # optional: the class (classification) or target column

    [[rule]]                      # a penalty on named columns and outputs
    kind = "penalty"
    expression = "charges <= 400 * bmi + 20000"
    tau = 0.0                     # optional tolerance
    weight = 0.5                  # optional, every kind: weight of this rule's loss

>>> specs = parse_rules_text('[[rule]]\\nkind = "monotonic"\\ncolumn = "x"\\n'
...                          'direction = "up"\\n', "r.toml")
>>> try:
...     build_rules(specs, {"x": [1.0, 2.0]}, RuleTarget("y", "regression"))
... except ValueError as e:
...     print(e)
r.toml line 4: direction must be 'increasing' or 'decreasing', got 'up'
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

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
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')\s*=")


@dataclass
class RuleSpec:
    """One rule as written by the user, with where it was written (for messages)."""

    values: dict[str, Any]
    where: str
    key_where: dict[str, str] = field(default_factory=dict)

    def at(self, key: str) -> str:
        return self.key_where.get(key, self.where)


@dataclass
class RuleTarget:
    """What a rule's ``output`` can name: the target column, and the classes."""

    name: str
    task: str
    classes: Sequence[Any] | np.ndarray = ()

    def output_names(self) -> list[str]:
        if self.task == "regression":
            return [self.name]
        return [f"proba_{c}" for c in self.classes]


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
    headers, key_lines, top = _line_map(text, source)
    for key in data:
        if key != "rule":
            raise ValueError(f"{top.get(key, source)}: unknown entry {key!r}; write each rule "
                             "as a [[rule]] table")
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
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"rules file {path} does not exist")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"rules file {path} is not a UTF-8 text file") from None
    except OSError as exc:
        raise ValueError(f"cannot read rules file {path}: {exc.strerror}") from None
    return parse_rules_text(text, str(path))


def _check_keys(spec: RuleSpec) -> None:
    kind = spec.values.get("kind")
    if kind not in KEYS:
        raise ValueError(f"{spec.at('kind')}: kind must be one of {', '.join(KEYS)}, "
                         f"got {kind!r}")
    required, optional = KEYS[kind]
    for key in spec.values:
        if key not in required | optional | _COMMON:
            raise ValueError(f"{spec.at(key)}: unknown key {key!r} for a {kind} rule "
                             f"(allowed: {', '.join(sorted(required | optional | _COMMON))})")
    for key in sorted(required - set(spec.values)):
        raise ValueError(f"{spec.where}: the {kind} rule needs {key!r}")
    numbers = {"weight", "relative", "additive", "threshold", "tau"}
    for key in numbers & set(spec.values):
        value = spec.values[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"{spec.at(key)}: {key} must be a number, got {value!r}")
    for key in ("column", "direction", "expression"):
        if key in spec.values and not isinstance(spec.values[key], str):
            raise ValueError(f"{spec.at(key)}: {key} must be text, got {spec.values[key]!r}")
    if {"relative", "additive"} <= set(spec.values):
        raise ValueError(f"{spec.at('additive')}: give 'relative' or 'additive', not both")
    if spec.values.get("weight", 1.0) < 0:
        raise ValueError(f"{spec.at('weight')}: weight must be >= 0")


def monotonic_spec(text: str) -> RuleSpec:
    """A rule from ``--monotonic COLUMN=increasing|decreasing``."""
    where = f"--monotonic {text}"
    column, sep, direction = text.rpartition("=")
    if not sep or not column:
        raise ValueError(f"{where}: write COLUMN=increasing or COLUMN=decreasing")
    return RuleSpec({"kind": "monotonic", "column": column, "direction": direction}, where)


def _perturbation(spec: RuleSpec, values: np.ndarray) -> Perturbation:
    from deepctrl.core.rules import Additive, Relative

    try:
        if "relative" in spec.values:
            return Relative(spec.values["relative"])
        if "additive" in spec.values:
            return Additive(spec.values["additive"])
    except ValueError as exc:
        key = "relative" if "relative" in spec.values else "additive"
        raise ValueError(f"{spec.at(key)}: {exc}") from None
    if values.size and values.min() > 0:
        return Relative(0.1)
    std = float(values.std()) if values.size else 0.0
    return Additive(0.1 * std if std > 0 else 0.1)


def _output(spec: RuleSpec, target: RuleTarget) -> tuple[int, bool]:
    """The model output a rule names, and whether its direction flips (a binary model's
    first class)."""
    if "output" not in spec.values:
        return 0, False
    value = spec.values["output"]
    names = [target.name] if target.task == "regression" else [str(c) for c in target.classes]
    if str(value) not in names:
        raise ValueError(f"{spec.at('output')}: output {value!r} is not "
                         + (f"the target {target.name!r}" if target.task == "regression"
                            else f"a class (classes: {', '.join(names)})"))
    index = names.index(str(value))
    if target.task == "classification" and len(names) == 2:
        return 0, index == 0
    return index, False


def _feature_rule(spec: RuleSpec, columns: Mapping[str, Any], target: RuleTarget) -> Rule:
    v = spec.values
    column = v["column"]
    if column == target.name:
        raise ValueError(f"{spec.at('column')}: column {column!r} is the target")
    if column not in columns:
        shown = ", ".join(list(columns)[:20])
        raise ValueError(f"{spec.at('column')}: unknown column {column!r} (columns: {shown})")
    try:
        values = np.asarray(columns[column], dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{spec.at('column')}: column {column!r} is not numeric") from None
    direction = v.get("direction", "increasing")
    if direction not in ("increasing", "decreasing"):
        raise ValueError(f"{spec.at('direction')}: direction must be 'increasing' or "
                         f"'decreasing', got {direction!r}")
    output, flip = _output(spec, target)
    if flip:
        direction = "decreasing" if direction == "increasing" else "increasing"
    pert = _perturbation(spec, values)
    from deepctrl.core.rules import Monotonic, Threshold

    if v["kind"] == "monotonic":
        return Monotonic(column, direction, output, pert)
    return Threshold(column, v["threshold"], output, direction, pert)


def _penalty_rule(spec: RuleSpec, columns: Mapping[str, Any], target: RuleTarget) -> Rule:
    from deepctrl.tabular.table_rules import Expression

    try:
        rule = Expression(spec.values["expression"], spec.values.get("tau", 0.0))
    except ValueError as exc:
        raise ValueError(f"{spec.at('expression')}: {exc}") from None
    known = set(columns) | set(target.output_names())
    for name in rule.comparison.names:
        if name not in known:
            raise ValueError(f"{spec.at('expression')}: unknown name {name!r} in the "
                             f"expression (outputs: {', '.join(target.output_names())})")
    return rule


def build_rules(specs: Sequence[RuleSpec], columns: Mapping[str, Any],
                target: RuleTarget) -> list[Rule]:
    """Rules for an estimator from specs; ``columns`` maps each feature column to its
    values (used to check the column and to choose the default perturbation)."""
    rules, weights = [], []
    for spec in specs:
        build = _penalty_rule if spec.values["kind"] == "penalty" else _feature_rule
        rules.append(build(spec, columns, target))
        weights.append(float(spec.values.get("weight", 1.0)))
    if any(w != 1.0 for w in weights):
        from deepctrl.core.rules import AllOf

        return [AllOf(rules, weights)]
    return rules
