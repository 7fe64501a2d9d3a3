"""How rho decides whether alpha = 0 behaves like TaskOnly and alpha = 1 like RuleOnly,
on a perturbation rule that the data contradict (y = -2 x0 + x1 + noise, rule: y rises
with x0).

    python benchmarks/rho_study.py [--seeds 3] [--out docs/results/rho.json]

Prints (and writes) JSON: for each task loss and rho setting, the test MAE and
verification ratio at alpha 0 and 1 (mean over seeds), next to TaskOnly and RuleOnly.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import torch

import deepctrl as dc
from deepctrl.io.reports import write_json

RHOS = ("paper", "auto", 0.01, 0.1, 1.0)


def contradicted(n: int, g: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    X = torch.randn(n, 3, generator=g)
    return X, -2 * X[:, :1] + X[:, 1:2] + 0.1 * torch.randn(n, 1, generator=g)


def net() -> dc.DeepCTRL:
    return dc.DeepCTRL(dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 32, 1))


def ends(result: dc.FitResult, rule: dc.rules.Rule, test) -> dict[str, float]:
    tables = [dc.sweep(m, rule, *test, [0.0, 1.0], ("mae",)) for m in result.models]
    mae = np.mean([t["mae"] for t in tables], axis=0)
    vr = np.mean([t["verification_ratio"] for t in tables], axis=0)
    return {
        "mae_alpha0": float(mae[0]),
        "mae_alpha1": float(mae[1]),
        "ratio_alpha0": float(vr[0]),
        "ratio_alpha1": float(vr[1]),
    }


def study(task_loss: str, seeds: list[int]) -> dict[str, dict[str, float]]:
    g = torch.Generator().manual_seed(0)
    train, val, test = contradicted(1000, g), contradicted(300, g), contradicted(1000, g)
    rule = dc.rules.Monotonic(0, "increasing")
    kw = dict(
        train=train,
        val=val,
        task_loss=task_loss,
        batch_size=32,
        max_epochs=300,
        patience=10,
        seeds=seeds,
    )
    rows = {
        "TaskOnly": ends(dc.fit(net(), rule, dc.methods.TaskOnly(), **kw), rule, test),
        "RuleOnly": ends(dc.fit(net(), rule, dc.methods.RuleOnly(), **kw), rule, test),
    }
    for rho in RHOS:
        result = dc.fit(net(), rule, dc.methods.DeepCTRL(rho=rho), **kw)
        row = ends(result, rule, test)
        row["rho"] = float(result.state["rho"].mean())
        rows[f"DeepCTRL(rho={rho})"] = row
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    seeds = list(range(args.seeds))
    result = {
        "benchmark": "rho_study",
        "seeds": seeds,
        "losses": {loss: study(loss, seeds) for loss in ("mae", "mse")},
    }
    print(json.dumps(result, indent=2))
    if args.out:
        write_json(Path(args.out), result)


if __name__ == "__main__":
    main()
