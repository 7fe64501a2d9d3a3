"""Figures of the pendulum reproduction and its ablations (paper Fig. 4, 7, 8, 9).

Every function writes PNG files into a folder and returns their names.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from deepctrl.io.figures import save_figure, subplots
from deepctrl.paper.plots.common import metric_vs_alpha, quick_mark

ZOOM_POINTS = 60


def _log_if_spread(ax: Any, methods: dict[str, dict[str, Any]], metric: str) -> None:
    """Log y axis when the curves span more than a factor 20 (RuleOnly's MAE dwarfs others)."""
    values = [v for e in methods.values() for v in e["test"][metric]["mean"] if v and v > 0]
    if values and max(values) / min(values) > 20:
        ax.set_yscale("log")


def alpha_figures(
    results: dict[str, Any],
    out_dir: Path,
    best_alpha: float | None = None,
    title: str = "",
    best_label: str = "best alpha",
) -> list[str]:
    """mae_vs_alpha.png and verification_vs_alpha.png: test curves of every method, titled
    as a smoke run when ``results`` are of a ``--quick`` run."""
    alphas, methods = results["alphas"], results["methods"]
    names = []
    for metric, fname, label in (
        ("mae", "mae_vs_alpha.png", "test MAE"),
        ("verification_ratio", "verification_vs_alpha.png", "test verification ratio"),
    ):
        fig, ax = subplots(figsize=(6, 4.2))
        metric_vs_alpha(
            ax,
            alphas,
            methods,
            metric,
            "test",
            best_alpha,
            label,
            f"{title}{label} vs rule strength{quick_mark(results['quick'])}",
            best_label,
        )
        if metric == "mae":
            _log_if_spread(ax, methods, metric)
        else:
            ax.set_ylim(-0.02, 1.02)
        save_figure(fig, out_dir / fname)
        names.append(fname)
    return names


def energy_figure(trace: dict[str, Any], path: Path, quick: bool = False) -> str:
    """Current energy E(x_t) and predicted E(y_hat_{t+1}) on the test period (Fig. 4c).

    Left: the first test steps over time; right: the distribution of E(y_hat) - E(x) over
    the whole test period, where everything right of zero breaks the damping rule; its edge
    bins also count the changes beyond the 0.5 % and 99.5 % quantiles. ``quick`` marks the
    figure of a ``--quick`` run.
    """
    t, current = trace["time"], trace["current"]
    fig, (left, right) = subplots(1, 2, figsize=(12, 4.2))
    k = min(ZOOM_POINTS, len(t))
    left.plot(t[:k], current[:k], "k-", lw=2, label="current E(x_t)")
    change = {name: pred - current for name, pred in trace["predicted"].items()}
    low, high = np.quantile(np.concatenate(list(change.values())), [0.005, 0.995])
    edges = np.linspace(low, high, 80)
    for name, pred in trace["predicted"].items():
        left.plot(t[:k], pred[:k], lw=1, marker=".", ms=3, label=f"predicted, {name}")
        above = float(np.mean(change[name] >= 0))
        right.hist(
            np.clip(change[name], edges[0], edges[-1]),
            bins=edges,
            histtype="step",
            lw=1.3,
            label=f"{name}: {above:.1%} >= 0",
        )
    right.axvline(0.0, color="k", lw=1)
    left.set(
        xlabel="time (s)",
        ylabel="energy",
        title=f"Energy at t and predicted at t+1 (seed {trace['seed']})",
    )
    if quick:
        fig.suptitle(f"Pendulum energy{quick_mark(quick)}")
    right.set(
        xlabel="E(predicted t+1) - E(current t)\n(the edge bins also count the changes "
        "beyond the 0.5 % and 99.5 % quantiles)",
        ylabel="test samples",
        title=f"Predicted energy change, seed {trace['seed']} (right of 0 breaks the rule)",
    )
    for ax in (left, right):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    save_figure(fig, path)
    return path.name


def write_main_figures(results: dict[str, Any], trace: dict[str, Any], out_dir: Path) -> list[str]:
    """All figures of ``deepctrl reproduce pendulum``."""
    names = alpha_figures_of_run(results, out_dir)
    names.append(energy_figure(trace, out_dir / "energy.png", results["quick"]))
    return names


def alpha_figures_of_run(results: dict[str, Any], out_dir: Path) -> list[str]:
    """The alpha figures of a pendulum run, marking the alpha the verification proxy
    chose."""
    proxy = results["selection"]["proxy"]["alpha"]
    return alpha_figures(results, out_dir, proxy, best_label="alpha by verification proxy")


def tsne_figure(
    latents: np.ndarray,
    encoder: np.ndarray,
    mixed: np.ndarray,
    mixed_alpha: np.ndarray,
    path: Path,
    quick: bool = False,
) -> str:
    """t-SNE maps (App. A.3, Fig. 9): z_r against z_d, and z over several alphas; ``quick``
    marks the figure of a ``--quick`` run."""
    fig, (left, right) = subplots(1, 2, figsize=(11, 4.8))
    for label, color in (("z_r (rule encoder)", "tab:red"), ("z_d (data encoder)", "tab:blue")):
        mask = encoder == label[:3]
        left.scatter(latents[mask, 0], latents[mask, 1], s=3, c=color, label=label)
    left.set_title(f"t-SNE of z_r and z_d{quick_mark(quick)}")
    left.legend(markerscale=4, fontsize=8)
    points = right.scatter(mixed[:, 0], mixed[:, 1], s=3, c=mixed_alpha, cmap="viridis")
    fig.colorbar(points, ax=right, label="alpha")
    right.set_title("t-SNE of z = cat(alpha z_r, (1 - alpha) z_d)")
    for ax in (left, right):
        ax.set_xticks([])
        ax.set_yticks([])
    save_figure(fig, path)
    return path.name
