"""Equality by description: two rules (or perturbations) are equal when they are of one
class and their `config()` descriptions match, so a rule read back from a model file equals
the rule it was saved from."""

from __future__ import annotations

import json
from typing import Any


def description(obj: Any) -> str | None:
    """`obj.config()` as canonical JSON text, or None when `obj` cannot describe itself.

    >>> from deepctrl.rules import Relative
    >>> description(Relative(0.2))
    '{"kind": "relative", "u": 0.2}'
    """
    try:
        return json.dumps(obj.config(), sort_keys=True, default=repr)
    except ValueError:
        return None


def described_repr(obj: Any) -> str:
    """`Class(name=value, ...)` from `obj.config()`, each value shown as `obj`'s attribute
    of that name when it has one (a perturbation as `Relative(u=0.2)`, not its
    description); None values are left out, and `Class(...)` when `obj` cannot describe
    itself.

    >>> from deepctrl.rules import Relative, Standardized
    >>> described_repr(Standardized(Relative(0.2), 0.0, 2.0))
    'Standardized(inner=Relative(u=0.2), mean=0.0, std=2.0)'
    """
    try:
        values = obj.config()
    except ValueError:
        return f"{type(obj).__name__}(...)"
    shown = (
        f"{k}={getattr(obj, k, v)!r}" for k, v in values.items() if k != "kind" and v is not None
    )
    return f"{type(obj).__name__}({', '.join(shown)})"


class EqualByDescription:
    """`==` and `hash` by class and description; an object that cannot describe itself
    (a rule built from code, such as a `Penalty` of a function) equals only itself."""

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if type(other) is not type(self):
            return NotImplemented
        mine = description(self)
        return mine is not None and mine == description(other)

    def __hash__(self) -> int:
        mine = description(self)
        return hash((type(self), mine)) if mine is not None else object.__hash__(self)
