"""What the reproductions' figures show, read back from their matplotlib objects."""

import json
from pathlib import Path

import numpy as np
import pytest

from deepctrl.io.figures import subplots
from deepctrl.paper.plots import cardio, pendulum, retail
from deepctrl.paper.plots.common import metric_vs_alpha

STORED = Path(__file__).parents[2] / "docs" / "results"
QUICK = "(QUICK smoke run)"


def _stored(name: str) -> dict:
    return json.loads((STORED / name / "results.json").read_text())


@pytest.fixture
def drawn(monkeypatch):
    """The figures the plot modules save, kept open instead of written."""
    figures = []

    def keep(fig, path):
        figures.append(fig)
        return Path(path)

    for module in (cardio, pendulum, retail):
        monkeypatch.setattr(module, "save_figure", keep)
    return figures


def _vertical_lines(ax) -> list[float]:
    return [
        float(line.get_xdata()[0])
        for line in ax.get_lines()
        if len(line.get_xdata()) == 2 and line.get_xdata()[0] == line.get_xdata()[1]
    ]


def _band_heights(ax) -> np.ndarray:
    return np.concatenate([p.vertices[:, 1] for c in ax.collections for p in c.get_paths()])


@pytest.mark.parametrize("metric", ["bce", "accuracy", "verification_ratio"])
def test_every_cardio_grid_draws_the_line_its_caption_names(drawn, metric):
    results = _stored("cardio")
    cardio.domain_grid(results, metric, "unused.png")
    fig = drawn[0]
    assert "dashed vertical line = alpha of lowest test BCE of DeepCTRL" in fig._suptitle.get_text()
    best = [block["best_alpha"] for block in results["domains"].values()]
    assert [_vertical_lines(ax) for ax in fig.axes] == [[b] for b in best]
    assert best == [0.0, 1.1, 0.4, 0.2]


def test_bands_of_fractions_stay_in_0_to_1_and_others_are_not_clipped():
    stats = {"mean": [0.5, 0.95], "std": [0.6, 0.1]}
    methods = {"DeepCTRL": {"test": {"verification_ratio": stats, "mae": stats}}}
    _, (ratio, mae) = subplots(1, 2)
    metric_vs_alpha(ratio, [0.0, 1.0], methods, "verification_ratio")
    metric_vs_alpha(mae, [0.0, 1.0], methods, "mae")
    ratio_band, mae_band = _band_heights(ratio), _band_heights(mae)
    assert ratio_band.min() == 0.0 and ratio_band.max() == 1.0
    assert mae_band.min() == pytest.approx(-0.1) and mae_band.max() == pytest.approx(1.1)


def test_the_stored_cardio_verification_bands_end_at_1(drawn):
    """Source DeepCTRL(rho=0.01) has a mean + std of 1.066 at its highest."""
    cardio.domain_grid(_stored("cardio"), "verification_ratio", "unused.png")
    heights = np.concatenate([_band_heights(ax) for ax in drawn[0].axes])
    assert heights.max() == 1.0 and heights.min() >= 0.0


@pytest.mark.parametrize("quick", [True, False])
def test_pendulum_and_ablation_figures_of_a_quick_run_say_so(drawn, quick, tmp_path):
    run = {**_stored("pendulum/paper"), "quick": quick}
    pendulum.alpha_figures_of_run(run, tmp_path)
    study = {**_stored("pendulum-ablations/rho"), "quick": quick}
    pendulum.alpha_figures(study, tmp_path, title="rho: ")
    titles = [fig.axes[0].get_title() for fig in drawn]
    assert titles[2] == "rho: test MAE vs rule strength" + (f" {QUICK}" if quick else "")
    assert [QUICK in t for t in titles] == [quick] * 4
    t = np.linspace(0.0, 1.0, 200)
    trace = {
        "seed": 10,
        "time": t,
        "current": np.ones_like(t),
        "predicted": {"TaskOnly": 1.0 + np.linspace(-0.5, 0.5, 200)},
    }
    pendulum.energy_figure(trace, tmp_path / "energy.png", quick)
    points = np.random.default_rng(0).normal(size=(20, 2))
    labels = np.array(["z_r"] * 10 + ["z_d"] * 10)
    pendulum.tsne_figure(points, labels, points, np.zeros(20), tmp_path / "tsne.png", quick)
    cardio.domains_overlay({**_stored("cardio"), "quick": quick}, "unused.png")
    for fig in drawn[4:]:
        titles = [ax.get_title() for ax in fig.axes] + [t.get_text() for t in fig.texts]
        assert any(QUICK in t for t in titles) is quick


def test_the_energy_histogram_says_its_edge_bins_gather_the_tails(drawn, tmp_path):
    t = np.linspace(0.0, 1.0, 1000)
    change = np.r_[np.zeros(990), np.full(10, 50.0)]  # beyond the 99.5 % quantile
    trace = {"seed": 0, "time": t, "current": np.ones_like(t), "predicted": {"m": 1.0 + change}}
    pendulum.energy_figure(trace, tmp_path / "energy.png")
    right = drawn[0].axes[1]
    assert "edge bins also count the changes beyond the 0.5 % and 99.5 % quantiles" in (
        right.get_xlabel()
    )


def test_a_retail_figure_of_one_seed_says_one_seed(drawn):
    results = {**_stored("retail"), "seeds": [0]}
    retail.candidate_rule_figure(results, "unused.png", ["DeepCTRL", "TaskOnly"])
    assert "mean and std over 1 seed)" in drawn[0]._suptitle.get_text()


def test_drawing_a_figure_leaves_the_sessions_backend_and_figures_alone(tmp_path):
    import matplotlib
    import matplotlib.pyplot as plt

    from deepctrl.io.figures import save_figure

    before = matplotlib.get_backend()
    plt.switch_backend("svg")  # a notebook's inline backend, say
    try:
        opened = plt.figure()
        fig, ax = subplots(1, 2, figsize=(4, 2), layout="constrained")
        ax[0].plot([0, 1], [1, 0])
        assert save_figure(fig, tmp_path / "line.png").read_bytes()[:4] == b"\x89PNG"
        assert matplotlib.get_backend() == "svg"
        assert plt.get_fignums() == [opened.number]  # the user's figure, and no other
    finally:
        plt.close("all")
        plt.switch_backend(before)
