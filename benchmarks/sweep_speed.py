"""Cost of an alpha sweep: 101 alphas on the 9,000 pendulum test samples with dc.sweep
(encoders once, decision block once on all alphas) against 101 separate forwards, and
against a single-alpha evaluation.

    python benchmarks/sweep_speed.py [--repeats 5]

Prints one JSON object. Every variant computes MAE and the energy-rule verification ratio;
``outputs_only`` times the predictions alone (no metrics), to split the cost between the
network and the per-alpha metrics.
"""

from __future__ import annotations

import argparse
import json
import time

import torch

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule


def best_of(repeats: int, fn) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


@torch.no_grad()
def separate_forwards(model, rule, X, y, alphas) -> list[tuple[float, float]]:
    out = []
    for a in alphas:
        y_hat = model(X, a)
        ok = rule.satisfied(dc.rules.Context(X, y_hat)).float().mean()
        out.append((float((y_hat - y).abs().mean()), float(ok)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    X, y = pendulum.load("paper").test
    torch.manual_seed(0)
    model, rule = deepctrl_net().eval(), energy_rule()
    alphas = [i / 100 for i in range(101)]
    sweep = best_of(args.repeats, lambda: dc.sweep(model, rule, X, y, alphas, ("mae",)))
    single = best_of(args.repeats, lambda: dc.sweep(model, rule, X, y, [0.5], ("mae",)))
    separate = best_of(args.repeats, lambda: separate_forwards(model, rule, X, y, alphas))
    with torch.no_grad():
        outputs = best_of(args.repeats, lambda: dc.predict_sweep(model, None, X, alphas))
        outputs_single = best_of(args.repeats, lambda: dc.predict_sweep(model, None, X, [0.5]))
    table = dc.sweep(model, rule, X, y, alphas, ("mae",))
    check = separate_forwards(model, rule, X, y, alphas)
    max_diff = max(abs(m - c[0]) for m, c in zip(table["mae"], check, strict=True))
    print(
        json.dumps(
            {
                "benchmark": "alpha_sweep_seconds",
                "alphas": len(alphas),
                "samples": len(X),
                "threads": torch.get_num_threads(),
                "sweep_101": round(sweep, 4),
                "single_alpha": round(single, 4),
                "separate_101_forwards": round(separate, 4),
                "sweep_over_single": round(sweep / single, 2),
                "separate_over_sweep": round(separate / sweep, 2),
                "outputs_only_101": round(outputs, 4),
                "outputs_only_single": round(outputs_single, 4),
                "outputs_only_over_single": round(outputs / outputs_single, 2),
                "max_mae_difference": max_diff,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
