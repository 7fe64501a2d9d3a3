"""Reproduce the double-pendulum experiment (paper Sec. 4.1, Fig. 4, App. A.4).

``reproduce`` trains DeepCTRL (rho auto), TaskOnly, RuleOnly, TaskAndRule(0.01/0.1/1.0)
and the Lagrangian dual framework (dual lr 0.01/0.1/1.0, reported as LDF-MAE and
LDF-Ratio) over seeds 10, 11, ... (the authors' pendulum seeds), sweeps alpha on the
validation and test sets, picks alpha on validation and writes results.json, report.md
and figures. ``deepctrl reproduce pendulum`` calls it.

Validation sweeps use the validation inputs with N(0, 0.01^2) noise drawn ONCE from a
fixed generator (seed ``VAL_NOISE_SEED``), the same for every method and seed; test
sweeps use clean inputs. Early stopping inside ``fit`` uses its own per-seed noisy copy.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

from deepctrl.engine.workers import default_workers, single_thread
from deepctrl.io import reports
from deepctrl.io.file_format import written_together
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments import common
from deepctrl.paper.experiments.common import MethodRun, alpha_grid
from deepctrl.paper.experiments.pendulum_evaluation import checks, ground_truth, select
from deepctrl.paper.experiments.pendulum_report import report_markdown
from deepctrl.paper.experiments.pendulum_setup import (
    INPUT_NOISE,
    LAMBDAS,
    VAL_NOISE_SEED,
    Settings,
)
from deepctrl.paper.experiments.pendulum_training import (
    dual_lr,
    method_groups,
    run_all,
    time_one_seed,
)

METHOD_KEYS = (
    "DeepCTRL",
    "TaskOnly",
    "RuleOnly",
    *(f"TaskAndRule({lam})" for lam in LAMBDAS),
    "LDF-MAE",
    "LDF-Ratio",
)


def rewrite_report(out: str = "results/pendulum") -> Path:
    """Write report.md and the alpha figures of the pendulum run in ``out`` again from its
    results.json, without training (the energy figure needs the models and stays). Brings
    a run of an earlier version to the current layout: each baseline's own alpha, its
    curves held at that alpha (:func:`~deepctrl.paper.experiments.common.at_eval_alpha`)
    and the true next states' verification ratio (from the run's data).

    Raises:
        ValueError: When ``out`` holds no results.json of a pendulum run.
    """
    from deepctrl.paper.plots.pendulum import alpha_figures_of_run

    out_dir = Path(out)
    path = out_dir / "results.json"
    if not path.is_file():
        raise ValueError(f"{path} does not exist: --report-only re-renders a finished run's --out")
    try:
        results = json.loads(path.read_text())
    except (OSError, ValueError, RecursionError):
        raise ValueError(f"{path} is not the results.json of a pendulum run") from None
    needed = ("experiment", "methods", "alphas", "preset")
    if not (isinstance(results, dict) and all(k in results for k in needed)):
        raise ValueError(f"{path} is not the results.json of a pendulum run")
    if results["experiment"] != "pendulum" or not isinstance(results["methods"], dict):
        raise ValueError(f"{path} is not the results.json of a pendulum run")
    own = {
        name: m.val_alpha
        for names, _, methods in method_groups(Settings.make(1, True))
        for name, m in zip(names, methods, strict=True)
        if not m.draws_alpha
    }
    for name, entry in results["methods"].items():
        if "eval_alpha" not in entry:
            entry["eval_alpha"] = None if name == "DeepCTRL" else own.get(name, 0.0)
    results["methods"] = {
        name: common.at_eval_alpha(entry, results["alphas"])
        for name, entry in results["methods"].items()
    }
    if "ground_truth" not in results:
        results["ground_truth"] = ground_truth(pendulum.load(results["preset"]))
    results.pop("claims", None)  # an earlier version's name and layout of the checks
    results["checks"] = checks(results["preset"], results["methods"], results["selection"])
    with written_together():  # the figures, results and report of one run, or none
        results["figures"] = [
            *alpha_figures_of_run(results, out_dir),
            *[f for f in results.get("figures", []) if f == "energy.png"],
        ]
        reports.write_json(path, results)
        report = reports.write_text(out_dir / "report.md", report_markdown(results))
    print(f"pendulum: rewrote {report} and the alpha figures from {path}")
    return report


@torch.no_grad()
def _energy_trace(
    runs: dict[str, MethodRun], pend: pendulum.PendulumData, sel: dict[str, Any]
) -> dict[str, Any]:
    """Current and predicted energy over the test period for the first seed (Fig. 4c)."""
    x = pend.test[0]

    def predicted(model: nn.Module, *alpha: float) -> Any:
        y_hat = model(x.to(next(model.parameters()).device), *alpha)
        return pendulum.energy(y_hat.cpu().double()).numpy()

    out = {name: predicted(runs[name].fit.models[0]) for name in ("TaskOnly", "TaskAndRule(1.0)")}
    for a in sorted({0.0, sel["proxy"]["alpha"], 1.0}):
        out[f"DeepCTRL alpha={a:g}"] = predicted(runs["DeepCTRL"].fit.models[0], a)
    return {
        "seed": runs["DeepCTRL"].fit.seeds[0],
        "time": pend.times[2].numpy(),
        "current": pendulum.energy(x.double()).numpy(),
        "predicted": out,
    }


def prepare(
    seeds: int, quick: bool, out: str, device: str, preset: str, workers: int | None
) -> tuple[Settings, int, Path, pendulum.PendulumData]:
    """Settings, number of worker processes, output folder (created) and data of a run."""
    s = Settings.make(seeds, quick)
    workers = default_workers(device) if workers is None else workers
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    return s, workers, out_dir, pendulum.load(preset)


def reproduce(
    seeds: int = 10,
    quick: bool = False,
    out: str = "results/pendulum",
    device: str = "cpu",
    progress: bool = True,
    preset: str = "paper",
    workers: int | None = None,
    save_models: bool = False,
) -> dict[str, Any]:
    """Run the pendulum experiment and write OUT/results.json, OUT/report.md and figures
    (and with ``save_models`` every trained network, LDF candidates included).

    ``workers`` processes train methods side by side (default: one per CPU core).
    """
    from deepctrl.paper.plots.pendulum import write_main_figures

    wall = time.perf_counter()
    s, workers, out_dir, pend = prepare(seeds, quick, out, device, preset, workers)
    runs, ldf = run_all(preset, s, device, progress, workers)
    entries = {name: run.entry() for name, run in runs.items() if not name.startswith("LDF(")}
    entries["DeepCTRL"]["rho"] = runs["DeepCTRL"].fit.state["rho"].tolist()
    for key in ("LDF-MAE", "LDF-Ratio"):
        entries[key] = {**runs[ldf[key]].entry(), "dual_lr": dual_lr(runs[ldf[key]])}
    alphas = alpha_grid()
    sel = {**select(entries, alphas), "ldf": ldf}
    with single_thread():
        timed = time_one_seed(pend, s, device)
    results = {
        "experiment": "pendulum",
        "preset": preset,
        "quick": s.quick,
        "seeds": list(s.seeds),
        "alphas": alphas,
        "methods": {k: entries[k] for k in METHOD_KEYS},
        "selection": sel,
        "settings": {
            **dataclasses.asdict(s),
            "input_noise": INPUT_NOISE,
            "val_noise_seed": VAL_NOISE_SEED,
            "device": device,
            "workers": workers,
            "sizes": [len(p[0]) for p in (pend.train, pend.val, pend.test)],
        },
        "timing": {
            "one_seed": timed,
            "all_seeds": {
                k: {f: entries[k][f] for f in ("train_seconds", "epochs")}
                for k in ("TaskOnly", "DeepCTRL")
            },
        },
        "checks": checks(preset, entries, sel),
        "ground_truth": ground_truth(pend),
    }
    with written_together():  # the figures, results and report of one run, or none
        figures = write_main_figures(results, _energy_trace(runs, pend, sel), out_dir)
        results["figures"] = figures
        results["wall_seconds"] = round(time.perf_counter() - wall, 1)
        reports.write_json(out_dir / "results.json", results)
        reports.write_text(out_dir / "report.md", report_markdown(results))
    if save_models:
        print(f"pendulum: wrote the networks to {common.save_models(runs, out_dir, 'pendulum')}")
    common.announce_written(
        f"pendulum ({preset}{', quick' if s.quick else ''})",
        out_dir,
        results,
    )
    return results
