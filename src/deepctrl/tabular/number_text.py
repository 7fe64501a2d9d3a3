"""Text that looks like numbers: the currency signs and codes, and the characters between
thousands, that the command line reads numbers with, and the forms it does not read
(a decimal comma where pandas left text, ``(5,82)`` for -5.82, ``5,82-``, a number with a
unit such as ``20 kg``), for a warning where a column of them would be one-hot encoded as
categories.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

CURRENCY_SIGNS = "$€£¥₹₽₩₺"
"""The currency signs a number may be written with, before or after it ("$3.50", "4 €")."""
CURRENCY_CODES = (
    "R$",
    "kr",
    "zł",
    "Kč",
    *("AUD", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HUF"),
    *("INR", "JPY", "MXN", "NOK", "NZD", "PLN", "SEK", "TRY", "USD", "ZAR"),
)
"""The currency codes (ISO 4217) and written signs a number may be written with, before or
after it ("R$ 7,00", "EUR 5,82", "5,82 EUR", "12 kr")."""
CURRENCY = "|".join(
    [re.escape(code) for code in sorted(CURRENCY_CODES, key=len, reverse=True)]
    + [f"[{re.escape(CURRENCY_SIGNS)}]"]
)
"""A regular expression matching one currency sign or code."""
GROUP_SPACES = " \u00a0\u202f\u2009'\u2019"
"""What may stand between thousands besides a dot or a comma: a space (plain, no-break,
narrow no-break or thin, as French and Swiss spreadsheets write "3 954") or an apostrophe
(Swiss "5'820.00")."""

_NUMBER = rf"(?:[1-9]\d{{0,2}}(?:[.,{GROUP_SPACES}]\d{{3}})+|\d+)(?:[.,]\d+)?|[.,]\d+"
_SIGNED = rf"[-+\u2212]?\s*(?:{CURRENCY})?\s*[-+\u2212]?\s*(?:{_NUMBER})\s*(?:{CURRENCY})?\s*%?"
NUMBER_LIKE = re.compile(rf"\s*(?:\(\s*{_SIGNED}\s*\)|{_SIGNED}\s*[-\u2212]?)\s*")
"""Text that is a number in some way people write numbers (use with ``fullmatch``): with a
currency sign or code, a percent sign, a sign before or after it, in parentheses, grouped in
thousands by dots, commas, spaces or apostrophes, with a decimal point or comma."""


def _read(text: str) -> bool:
    """Whether Python reads ``text`` as a number as it is (a plain number, as ``"5.82"``).

    >>> _read(" 5.82"), _read("5,82")
    (True, False)
    """
    try:
        float(text)
    except ValueError:
        return False
    return True


def unread_numbers(values: Sequence[Any]) -> tuple[list[str], int]:
    """The distinct text ``values`` written as numbers in a form not read as numbers, when
    most (four in five) of at least three are numbers in some form and one is not read as
    it is (a column of plain number text, such as codes ``"01067"``, is no such column),
    and how many text values there are; no values otherwise.

    >>> unread_numbers(["5,82", "1,5", "7", None])
    (['5,82', '1,5'], 3)
    >>> unread_numbers(["01067", "04109", "10115"])[0], unread_numbers(["a", "b", "1,5"])[0]
    ([], [])
    """
    text = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    like = [v for v in text if NUMBER_LIKE.fullmatch(v)]
    unread = [v for v in like if not _read(v)]
    if len(text) < 3 or len(like) < 0.8 * len(text):
        return [], len(text)
    return unread, len(text)


_WITH_UNIT = re.compile(
    r"\s*[-+\u2212]?(?:\d+(?:[.,]\d+)?|[.,]\d+)\s*(?P<unit>[°µ]?[^\W\d_]+(?:/[^\W\d_]+)?)\s*"
)
"""A number followed by a unit: ``20 kg``, ``7.5km``, ``120 mg/dl``, ``18 °C``, ``25 m²``."""


def number_unit(values: Sequence[Any]) -> tuple[str, str] | None:
    """The unit that most (four in five) of at least three distinct text ``values`` write
    after a number (``20 kg``), and one such value; None for other columns (sizes ``S``,
    ``XL``, ``2XL``, ``3XL``, where few values have a number, or codes ``A1``, ``B2``).

    >>> number_unit(["20 kg", "7.5 kg", "12kg", None])
    ('kg', '20 kg')
    >>> number_unit(["S", "M", "L", "XL", "2XL", "3XL"]) is None
    True
    """
    text = [v.strip() for v in values if isinstance(v, str) and v.strip()]
    found = [(m["unit"], v) for v in text if (m := _WITH_UNIT.fullmatch(v))]
    if len(text) < 3 or not found:
        return None
    unit, count = Counter(u for u, _ in found).most_common(1)[0]
    if count < 0.8 * len(text):
        return None
    return unit, next(v for u, v in found if u == unit)


def _parse_tip(value: str) -> str:
    """How pandas reads a value such as ``value`` as a number.

    >>> _parse_tip("5,82"), _parse_tip("1,234.5")
    ("pd.read_csv(..., decimal=',')", "pd.read_csv(..., thousands=',')")
    >>> _parse_tip("1.234,5")
    "pd.read_csv(..., decimal=',', thousands='.')"
    """
    if re.fullmatch(r"[-+]?\d+,\d+", value):
        return "pd.read_csv(..., decimal=',')"
    if re.fullmatch(r"[-+]?\d{1,3}(\.\d{3})+(,\d+)?", value):
        return "pd.read_csv(..., decimal=',', thousands='.')"
    if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+(\.\d+)?", value):
        return "pd.read_csv(..., thousands=',')"
    return "write them as 1234.5 or -1234.5, then pd.to_numeric"


def number_hint(name: str, values: Sequence[Any]) -> str | None:
    """Why a text column whose distinct ``values`` are mostly numbers written in a form not
    read as numbers, or numbers with a unit (``20 kg``), is read as categories, and what
    to do, or None.

    >>> number_hint("price", ["R$ 7,00", "R$ 5,50", "R$ 2,00"])  # doctest: +ELLIPSIS
    "column 'price' looks like numbers, but 3 of its 3 distinct values are written in a ..."
    >>> number_hint("size", ["36", "38", "40"]) is None
    True
    """
    unread, count = unread_numbers(values)
    if not unread:
        return _unit_hint(name, values)
    return (
        f"column {name!r} looks like numbers, but {len(unread)} of its {count} distinct "
        f"values {'is' if len(unread) == 1 else 'are'} written in a form not read as numbers "
        f"(such as {unread[0]!r}), so it is read as categories, one input per value; parse "
        f"them first (in Python: {_parse_tip(unread[0])}), or on the command line write them "
        "as plain numbers (1234.5, -1234.5)"
    )


def _unit_hint(name: str, values: Sequence[Any]) -> str | None:
    """Why a text column of numbers with a unit is read as categories, and what to do, or
    None.

    >>> _unit_hint("weight", ["20 kg", "35 kg", "7.5 kg"])  # doctest: +ELLIPSIS
    "column 'weight' looks like numbers with a unit ('20 kg'), so it is read as ..."
    """
    found = number_unit(values)
    if found is None:
        return None
    unit, example = found
    return (
        f"column {name!r} looks like numbers with a unit ({example!r}), so it is read as "
        "categories, one input per value; to use it as numbers (and let a rule name it), "
        f"write them without the unit and name the unit in the column's name "
        f"('{name}_{unit}')"
    )
