"""A Griffe extension for the API reference: our docstrings are plain text, not Markdown.

They hold doctest examples (``>>>`` lines followed by their output), ``literals`` in
double backticks and a few Sphinx roles (``:func:`fit```). Markdown would read a ``>>>``
line as a quotation and a role as plain text, so before rendering this extension

* wraps every doctest example (from a ``>>>`` line to the next blank line) in a fenced
  ``pycon`` block, leaving the lines themselves unchanged;
* turns ``:role:`target``` into a code span (``~a.b.C`` shows as ``C``, as Sphinx shows it);
* puts a blank line before a bullet list that follows a line of text, which Markdown needs
  to see the list.

Loaded by mkdocs.yml (``plugins: mkdocstrings: handlers: python: options: extensions``); it
changes what the site shows, never the source files.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

ROLE = re.compile(r":(?:py:)?(?:mod|func|class|meth|attr|data|obj|exc):`~?([^`]+)`")
FENCE = re.compile(r"^\s*(```|~~~)")
BULLET = re.compile(r"^\s{0,3}[*-] ")


def _role(match: re.Match[str]) -> str:
    target = match.group(1)
    shown = target.rsplit(".", 1)[-1] if match.group(0).count("`~") else target
    return f"``{shown}``"


def to_markdown(text: str) -> str:
    """The docstring as Markdown: doctest examples fenced, roles as code, lists set apart."""
    out: list[str] = []
    in_fence = in_example = False
    indent = ""
    for line in text.splitlines():
        if in_example and not line.strip():
            out.append(f"{indent}```")
            in_example = False
        if not in_example and FENCE.match(line):
            in_fence = not in_fence
        if not in_fence and not in_example and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            in_example = True
        if in_example or in_fence:
            out.append(line)
            continue
        if BULLET.match(line) and out and out[-1].strip() and not BULLET.match(out[-1]):
            out.append("")
        out.append(ROLE.sub(_role, line))
    if in_example:
        out.append(f"{indent}```")
    return "\n".join(out)


class PlainDocstrings(griffe.Extension):
    """Rewrite every loaded docstring with :func:`to_markdown`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = to_markdown(obj.docstring.value)
