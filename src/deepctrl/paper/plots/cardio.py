"""Figures of the healthcare use case: a metric vs alpha per domain (paper Fig. 6), the main
method's curves of all domains on one axis, and the perturbation-scale study (Fig. 8)."""

from __future__ import annotations

import os
from typing import Any

from deepctrl.io.figures import save_figure, subplots
from deepctrl.paper.plots.common import metric_vs_alpha, quick_mark

LABELS = {
    "bce": "test cross entropy (BCE)",
    "accuracy": "test accuracy",
    "auc": "test AUC",
    "verification_ratio": "verification ratio (y_hat_p > y_hat)",
}


def _ratio_title(name: str, block: dict[str, Any]) -> str:
    return f"{name} (Usual ratio {block['usual_ratio']:.2f}, n = {block['rows']})"


def domain_grid(results: dict[str, Any], metric: str, path: str | os.PathLike[str]) -> None:
    """2 x 2 panels, one per domain, every method's ``metric`` vs alpha (paper Fig. 6), with
    the alpha of the main method's lowest mean test BCE as a dashed vertical line."""
    fig, axes = subplots(2, 2, figsize=(11, 8), sharex=True)
    main = results["main_method"]
    for ax, (name, block) in zip(axes.flat, results["domains"].items(), strict=False):
        metric_vs_alpha(
            ax,
            results["alphas"],
            block["methods"],
            metric,
            best_alpha=block["best_alpha"],
            ylabel=LABELS.get(metric, metric),
            title=_ratio_title(name, block),
            best_label="alpha of lowest BCE",
        )
    fig.suptitle(
        f"Cardio: trained on Source, applied to Targets; dashed vertical line = alpha of "
        f"lowest test BCE of {main}; seeds {len(results['seeds'])}{quick_mark(results['quick'])}",
        fontsize=10,
    )
    save_figure(fig, path)


def domains_overlay(results: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """The main method's BCE minus its BCE at alpha 0, one curve per domain."""
    fig, ax = subplots(figsize=(6.5, 4.5))
    main = results["main_method"]
    for name, block in results["domains"].items():
        mean = block["methods"][main]["test"]["bce"]["mean"]
        ax.plot(
            results["alphas"],
            [m - mean[0] for m in mean],
            marker="o",
            ms=3,
            label=f"{name} (Usual {block['usual_ratio']:.2f}, best {block['best_alpha']:g})",
        )
    ax.axhline(0.0, color="k", lw=0.8)
    ax.axvline(1.0, color="grey", lw=0.8, linestyle=":")
    ax.set_xlabel("rule strength alpha")
    ax.set_ylabel(f"{main} test BCE minus BCE at alpha 0")
    ax.set_title(f"How much each population gains from the rule{quick_mark(results['quick'])}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    save_figure(fig, path)


def perturbation_figure(results: dict[str, Any], path: str | os.PathLike[str]) -> None:
    """BCE, accuracy and verification ratio vs alpha for each perturbation bound u (Fig. 8)."""
    fig, axes = subplots(1, 3, figsize=(15, 4.3))
    for ax, metric in zip(axes, ("bce", "accuracy", "verification_ratio"), strict=True):
        metric_vs_alpha(
            ax,
            results["alphas"],
            results["methods"],
            metric,
            ylabel=LABELS[metric].replace("test ", "Source test "),
            title=LABELS[metric].split(" (")[0],
        )
    seeds = len(results["seeds"])
    fig.suptitle(
        f"Cardio: perturbation upper bound u, seeds {seeds}{quick_mark(results['quick'])}",
        fontsize=10,
    )
    save_figure(fig, path)
