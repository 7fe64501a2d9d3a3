"""Penalty rules written as text, such as ``"charges <= 400 * bmi"``: safe to store in a
model file and to read from a rules file, because the text is parsed into arithmetic on
named columns and outputs, never executed as Python.

>>> import torch
>>> cmp = parse("y <= 2 * `unit price` + 1")
>>> cmp.names
['y', 'unit price']
>>> cmp.residual({"y": torch.tensor([5.0]), "unit price": torch.tensor([1.0])}).tolist()
[2.0]
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from keyword import iskeyword

import torch
from torch import Tensor

_LOGIC_WORDS = {"and", "or", "not"}
"""Python words written for logic (``y <= x and x > 0``), which the hint to put a name in
backticks leaves out: every other Python word (``class``, ``lambda``, ``in``) may be a
column's name, as no operator of an expression is written as a word."""

_BINARY: dict[type, Callable[[Tensor, Tensor], Tensor]] = {
    ast.Add: torch.add,
    ast.Sub: torch.sub,
    ast.Mult: torch.mul,
    ast.Div: torch.div,
    ast.Pow: torch.pow,
}
_FUNCTIONS: dict[str, Callable[..., Tensor]] = {
    "abs": torch.abs,
    "exp": torch.exp,
    "log": torch.log,
    "sqrt": torch.sqrt,
    "relu": torch.relu,
    "min": torch.minimum,
    "max": torch.maximum,
}
_ARITY = {"min": 2, "max": 2}
_COMPARE = {
    ast.LtE: (1.0, False),
    ast.Lt: (1.0, True),
    ast.GtE: (-1.0, False),
    ast.Gt: (-1.0, True),
}
_QUOTED = re.compile(r"`([^`]*)`")
_WORD = re.compile(r"[^\W\d]\w*")

Env = Mapping[str, Tensor]


@dataclass(frozen=True)
class Comparison:
    """A parsed ``left <= right`` (or <, >=, >): residual r = left - right for <=, <,
    right - left for >=, >; the rule holds when r <= 0 (r < 0 when ``strict``)."""

    text: str
    names: list[str]
    strict: bool
    form: str
    """The comparison in one spelling, whatever the text's spacing and sides: the smaller
    side first, names in backticks, numbers as floats (``y <= 3*x+25`` and ``3 * x + 25 >=
    y`` have one form)."""
    _residual: Callable[[Env], Tensor]

    def residual(self, env: Env) -> Tensor:
        return self._residual(env)


def _fail(text: str, problem: str) -> ValueError:
    """An error quoting the expression, a long one by its start.

    >>> str(_fail("y <= " + "x + " * 40 + "1", "too long"))[:62]
    "penalty expression 'y <= x + x + x + x + x + x + x + x + x + x"
    >>> len(str(_fail("y <= " + "x + " * 10**4 + "1", "too long"))) < 200
    True
    """
    shown = text if len(text) <= 120 else f"{text[:100]}... ({len(text)} characters)"
    return ValueError(f"penalty expression {shown!r}: {problem}")


def _compile(
    node: ast.AST, text: str, names: dict[str, str], used: list[str]
) -> Callable[[Env], Tensor | float]:
    if (
        isinstance(node, ast.Constant)
        and isinstance(node.value, int | float)
        and not isinstance(node.value, bool)
    ):
        try:
            value = float(node.value)
        except OverflowError:
            raise _fail(text, f"the number {str(node.value)[:20]}... is too large") from None
        return lambda env: value
    if isinstance(node, ast.Name):
        name = names.get(node.id, node.id)
        if name not in used:
            used.append(name)
        return lambda env: env[name]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _compile(node.operand, text, names, used)
        sign = -1.0 if isinstance(node.op, ast.USub) else 1.0
        return lambda env: sign * inner(env)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        op = _BINARY[type(node.op)]
        left = _compile(node.left, text, names, used)
        right = _compile(node.right, text, names, used)
        return lambda env: op(torch.as_tensor(left(env)), torch.as_tensor(right(env)))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
    ):
        fname = node.func.id
        if len(node.args) != _ARITY.get(fname, 1):
            raise _fail(text, f"{fname}() takes {_ARITY.get(fname, 1)} argument(s)")
        fn = _FUNCTIONS[fname]
        args = [_compile(a, text, names, used) for a in node.args]
        return lambda env: fn(*(torch.as_tensor(a(env)) for a in args))
    shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
    word = isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool))
    raise _fail(
        text,
        f"{shown!r} is not allowed (use numbers, names, + - * / **, "
        f"and {', '.join(sorted(_FUNCTIONS))}){_backticks([shown] if word else [])}",
    )


def _backticks(words: list[str]) -> str:
    """The hint that a name spelled as a Python word, the first of ``words``, goes in
    backticks (nothing without one).

    >>> _backticks(["lambda"])
    "; a name such as 'lambda' goes in backticks"
    """
    return f"; a name such as {words[0]!r} goes in backticks" if words else ""


MAX_PARTS = 500
"""The most numbers, names and operations an expression may hold: it is evaluated by
nested calls, one per part (about 250 terms of a sum)."""
MAX_CHARACTERS = 20_000
"""The longest expression text parsed: 500 parts with long names fit in it."""


def parse(text: str) -> Comparison:
    """Parse ``left OP right`` with OP one of <=, <, >=, >; names in backticks may hold
    spaces or symbols (`unit price`), and names keep their spelling (``µg`` stays the micro
    sign, which Python would read as a Greek mu).

    >>> parse("dose <= 10 * µg + 20").names
    ['dose', 'µg']
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"a penalty expression must be non-empty text, got {text!r}")
    if len(text) > MAX_CHARACTERS:  # before parsing: a parse tree takes ~240 bytes a character
        raise _fail(text, f"too long: at most {MAX_CHARACTERS} characters")
    names: dict[str, str] = {}

    def quote(match: re.Match[str]) -> str:
        key = f"_quoted_{len(names)}"
        names[key] = match.group(1)
        return key

    def keep_spelling(match: re.Match[str]) -> str:
        # Python reads a name in its NFKC form (the micro sign of "µg" as a Greek mu):
        # a name with characters beyond ASCII is held aside, as a quoted one is
        word = match.group(0)
        if word.isascii():
            return word
        key = f"_quoted_{len(names)}"
        names[key] = word
        return key

    try:
        source = _WORD.sub(keep_spelling, _QUOTED.sub(quote, text.strip()))
        tree = ast.parse(source, mode="eval").body
    except SyntaxError as exc:
        words = re.findall(r"[A-Za-z_]\w*", _QUOTED.sub("", text))
        reserved = [w for w in words if iskeyword(w) and w not in _LOGIC_WORDS]
        raise _fail(text, f"not a valid expression ({exc.msg}){_backticks(reserved)}") from None
    except (RecursionError, MemoryError):
        raise _fail(text, f"too long: at most {MAX_PARTS} parts") from None
    if sum(isinstance(node, ast.expr) for node in ast.walk(tree)) > MAX_PARTS:
        raise _fail(text, f"too long: at most {MAX_PARTS} parts")
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and type(tree.ops[0]) in _COMPARE):
        raise _fail(text, "write one comparison such as 'y <= 2 * x' (<=, <, >= or >)")
    sign, strict = _COMPARE[type(tree.ops[0])]
    for side in (tree.left, tree.comparators[0]):
        _check_constant_parts(side, text)
    used: list[str] = []
    left = _compile(tree.left, text, names, used)
    right = _compile(tree.comparators[0], text, names, used)

    def residual(env: Env) -> Tensor:
        return sign * (torch.as_tensor(left(env)) - torch.as_tensor(right(env)))

    if not used:
        raise _fail(text, "it names no column or output")
    smaller, larger = (tree.left, tree.comparators[0])[:: int(sign)]
    form = f"{_spelled(smaller, names)} {'<' if strict else '<='} {_spelled(larger, names)}"
    return Comparison(text, used, strict, form, residual)


def _check_constant_parts(node: ast.expr, text: str) -> None:
    """Refuse a part that names nothing and has no finite value, computed as the rule
    computes it (in torch's default dtype), such as ``9 ** 9 ** 9``, ``1 / 0`` or
    ``log(-1)``: every row would fail the same way, and the part, not a column, is to blame.

    >>> parse("y <= 9 ** 9 ** 9 * x")
    Traceback (most recent call last):
    ...
    ValueError: penalty expression 'y <= 9 ** 9 ** 9 * x': '9 ** 9 ** 9' is not a finite number
    """
    functions = {id(part.func) for part in ast.walk(node) if isinstance(part, ast.Call)}
    if any(isinstance(part, ast.Name) and id(part) not in functions for part in ast.walk(node)):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                _check_constant_parts(child, text)
        return
    if isinstance(node, ast.Constant):
        return
    with torch.no_grad():
        value = torch.as_tensor(_compile(node, text, {}, [])({}))
    if not bool(torch.isfinite(value).all()):
        raise _fail(text, f"{ast.unparse(node)!r} is not a finite number")


def _spelled(node: ast.expr, names: dict[str, str]) -> str:
    """A checked side of a comparison in one spelling (see ``Comparison.form``); the
    parse tree is changed, being used no more.

    >>> _spelled(ast.parse("_quoted_0 + 2*abs(x)", mode="eval").body, {"_quoted_0": "a b"})
    '`a b` + 2.0 * abs(`x`)'
    """
    functions = {id(part.func) for part in ast.walk(node) if isinstance(part, ast.Call)}
    for part in ast.walk(node):
        if isinstance(part, ast.Name) and id(part) not in functions:
            part.id = f"`{names.get(part.id, part.id)}`"
        elif isinstance(part, ast.Constant) and isinstance(part.value, int | float):
            part.value = float(part.value)
    return ast.unparse(node)
