"""Verification ratios in messages, printed so that one below a goal never reads as reaching
it (no PyTorch: the command line's checks import it before any model)."""

from __future__ import annotations


def ratio_text(ratio: float, goal: float) -> str:
    """A verification ratio with three decimals, or as many more as keep a ratio below
    ``goal`` from printing as reaching it.

    >>> ratio_text(0.98958, 0.99), ratio_text(0.995, 0.99), ratio_text(1.0, 0.99)
    ('0.9896', '0.995', '1.000')
    """
    for digits in range(3, 9):
        text = f"{ratio:.{digits}f}"
        if not (ratio < goal <= float(text)):
            return text
    return repr(ratio)
