"""Pieces of the messages about a table: a value shown, names listed, rows counted."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def shown(value: Any) -> str:
    """``repr`` of a value from a table, numpy scalars shown as Python ones.

    >>> shown(np.str_("late")), shown(np.int64(3))
    ("'late'", '3')
    """
    return repr(value.item() if isinstance(value, np.generic) else value)


def listed(names: Sequence[Any], limit: int = 20) -> str:
    """Names for a message: the first ``limit``, then how many there are in all.

    >>> listed(["a", "b"]), listed([f"x{i}" for i in range(300)], limit=3)
    ('a, b', 'x0, x1, x2, ... (300 in all)')
    """
    shown = ", ".join(str(n) for n in names[:limit])
    return shown + (f", ... ({len(names)} in all)" if len(names) > limit else "")


def rows_have(n: int) -> str:
    """``"1 row has"`` or ``"n rows have"``, for messages.

    >>> rows_have(1), rows_have(3)
    ('1 row has', '3 rows have')
    """
    return "1 row has" if n == 1 else f"{n} rows have"
