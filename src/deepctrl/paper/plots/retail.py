"""Retail figures like the paper's Fig. 5 (candidate rules) and Fig. 6 (candidate models):
test MAE against alpha per group, the best alpha as a dashed line, and below it the
verification ratio of the price rule.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from deepctrl.io.figures import save_figure, subplots
from deepctrl.paper.plots.common import metric_vs_alpha


def _panels(
    results: dict[str, Any],
    blocks: list[tuple[str, dict[str, Any]]],
    path: str | os.PathLike[str],
    methods: Sequence[str],
    title: str,
) -> Path:
    fig, axes = subplots(2, len(blocks), figsize=(4.6 * len(blocks), 7.2), squeeze=False)
    for col, (name, block) in enumerate(blocks):
        shown = {m: block["methods"][m] for m in methods if m in block["methods"]}
        metric_vs_alpha(
            axes[0][col],
            results["alphas"],
            shown,
            "mae",
            best_alpha=block["best_alpha"],
            ylabel="test MAE (weekly sales / 100)",
            title=name,
        )
        metric_vs_alpha(
            axes[1][col],
            results["alphas"],
            shown,
            "verification_ratio",
            best_alpha=block["best_alpha"],
            ylabel="test verification ratio",
        )
    source = results["data"]["source"]
    seeds = len(results["seeds"])
    fig.suptitle(
        f"{title} ({source} data, mean and std over {seeds} seed{'s' if seeds != 1 else ''}"
        f"{', QUICK smoke run' if results.get('quick') else ''})"
    )
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    return save_figure(fig, path)


def candidate_rule_figure(
    results: dict[str, Any], path: str | os.PathLike[str], methods: Sequence[str]
) -> Path:
    """Fig. 5: train and test on each NEG group."""
    blocks = [(f"Train/test on {g}", b) for g, b in results["groups"].items()]
    return _panels(results, blocks, path, methods, "Candidate rule testing")


def candidate_model_figure(
    results: dict[str, Any], path: str | os.PathLike[str], methods: Sequence[str]
) -> Path:
    """Fig. 6: the source group's models tested on other groups."""
    blocks = [
        (f"Train: {k.split('->')[0]}, test: {k.split('->')[1]}", b)
        for k, b in results["transfer"].items()
    ]
    return _panels(results, blocks, path, methods, "Candidate model testing")
