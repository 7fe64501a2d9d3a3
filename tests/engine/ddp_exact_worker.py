"""Trains every case of the data-parallel agreement test and writes the validation losses.

``python ddp_exact_worker.py OUT.json [float32]`` alone and under ``torchrun
--nproc_per_node 2`` must write the same numbers (test_distributed.py). Cases: 1, 2 and 3
seeds; rho measured from the data and fixed; a perturbation rule and a penalty rule; with
and without early stopping. ``float32`` trains with float32 gradient sums (the default of
``dc.fit``) instead of ``exact_sums=True``.
"""

import itertools
import json
import os
import sys

import torch

import deepctrl as dc


def rules() -> dict[str, dc.rules.Rule]:
    return {
        "monotonic": dc.rules.Monotonic(0, "decreasing"),
        "penalty": dc.rules.Penalty(lambda x, y: (y[:, 0] + x[:, 0]).abs(), tau=0.5),
    }


def main(out: str, exact: bool) -> None:
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    X = torch.randn(1000, 3, generator=g)
    y = -X[:, :1] + 0.5 * X[:, 1:2] ** 2 + 0.1 * torch.randn(1000, 1, generator=g)
    cases = {}
    for n_seeds, rho, rule, early in itertools.product(
        (1, 2, 3), ("auto", 1.0), rules(), (False, True)
    ):
        model = dc.DeepCTRL(dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 32, 1))
        result = dc.fit(
            model,
            rules()[rule],
            dc.methods.DeepCTRL(rho=rho),
            train=(X[:800], y[:800]),
            val=(X[800:1000], y[800:1000]),
            batch_size=32,
            max_epochs=6 if early else 3,
            patience=1,
            seeds=list(range(n_seeds)),
            exact_sums=exact,
        )
        cases[f"{n_seeds} seeds, rho {rho}, {rule}, early stopping {early}"] = {
            "val_loss": [h["val_loss"] for h in result.history],
            "epochs": result.epochs,
            "rho": result.state["rho"].tolist(),
        }
    if int(os.environ.get("RANK", "0")) == 0:
        world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
        with open(out, "w") as f:
            json.dump({"world_size": world, "cases": cases}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] != ["float32"])
