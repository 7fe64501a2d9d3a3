"""Figures shared by the reproductions: a metric against alpha with every method drawn.

Methods whose value changes with alpha are drawn as curves with a band of one standard
deviation over seeds; methods without alpha as horizontal lines.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FRACTIONS = frozenset({"verification_ratio", "accuracy", "auc"})
"""Metrics that are fractions: their bands of one standard deviation stop at 0 and 1."""


def quick_mark(quick: bool) -> str:
    """The title suffix of a figure drawn from a ``--quick`` run, empty otherwise."""
    return " (QUICK smoke run)" if quick else ""


def _varies(values: Sequence[float]) -> bool:
    return max(values) - min(values) > 1e-12 * max(1.0, abs(max(values)))


def metric_vs_alpha(
    ax: Any,
    alphas: Sequence[float],
    methods: dict[str, dict[str, Any]],
    metric: str,
    split: str = "test",
    best_alpha: float | None = None,
    ylabel: str | None = None,
    title: str | None = None,
    best_label: str = "best alpha",
) -> None:
    """Draw ``metric`` of every method in ``methods`` (results.json entries) on ``ax``: a
    curve over alpha for a method that draws alphas, a horizontal line at its own alpha
    (``eval_alpha``) for one that does not (or for a curve that is flat); ``best_alpha``
    as a vertical line named ``best_label``. Bands of the metrics in `FRACTIONS` are
    clipped to [0, 1].

    The i-th method gets colour ``C{i}``, so panels drawn from the same methods match.
    """
    styles = iter(["--", ":", "-.", (0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), (0, (8, 2))])
    for i, (name, entry) in enumerate(methods.items()):
        stats = entry.get(split, {}).get(metric)
        if stats is None:
            continue
        mean, std, color = stats["mean"], stats["std"], f"C{i % 10}"
        own = entry.get("eval_alpha")
        if own is not None:
            ax.axhline(
                mean[list(alphas).index(own)],
                linestyle=next(styles, "--"),
                label=name if own == 0 else f"{name} (alpha {own:g})",
                lw=1.2,
                color=color,
            )
        elif _varies(mean):
            ax.plot(alphas, mean, marker="o", ms=3, label=name, color=color)
            lo = [m - s for m, s in zip(mean, std, strict=True)]
            hi = [m + s for m, s in zip(mean, std, strict=True)]
            if metric in FRACTIONS:
                lo, hi = [max(v, 0.0) for v in lo], [min(v, 1.0) for v in hi]
            ax.fill_between(alphas, lo, hi, color=color, alpha=0.15)
        else:
            ax.axhline(mean[0], linestyle=next(styles, "--"), label=name, lw=1.2, color=color)
    if best_alpha is not None:
        ax.axvline(
            best_alpha, color="k", linestyle="--", lw=1, label=f"{best_label} = {best_alpha:g}"
        )
    ax.set_xlabel("rule strength alpha")
    ax.set_ylabel(ylabel or metric)
    if title:
        ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
