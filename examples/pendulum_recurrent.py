"""The double pendulum (paper Sec. 4.1) with a recurrent encoder: a GRU reads the last k
noisy states and predicts the change to the next one, while DeepCTRL teaches the rule
"with friction, energy never rises". The rule strength alpha is chosen after training.

    python examples/pendulum_recurrent.py            # the full settings (see docs/examples.md)
    python examples/pendulum_recurrent.py --quick    # a smoke run of a few seconds

Prints one JSON object: test MAE and verification ratio at every alpha for DeepCTRL and
for the same network trained on the data alone (TaskOnly).
"""

import argparse
import json
import time

import torch
from torch import nn

import deepctrl as dc
from deepctrl.paper.datasets import pendulum


class GRUEncoder(nn.Module):
    """(batch, k, 4) states -> (batch, width): a GRU over the window, from its last step."""

    def __init__(self, hidden: int, width: int) -> None:
        super().__init__()
        self.gru = nn.GRU(4, hidden, batch_first=True)
        self.head = nn.Linear(hidden, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.gru(x)[0][:, -1]))


def windows(x: torch.Tensor, y: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs (n - k + 1, k, 4): each state with the k - 1 before it (the pairs are
    consecutive in time); targets: the change from the last state to the next."""
    n = x.shape[0]
    w = torch.stack([x[j : n - k + 1 + j] for j in range(k)], dim=1)
    return w, y[k - 1 :] - x[k - 1 :]


def energy_rule() -> dc.rules.Penalty:
    """E(last state + predicted change) < E(last state), on the noisy inputs as in the paper."""
    return dc.rules.Penalty(
        lambda w, change: pendulum.energy_increase(w[:, -1], w[:, -1] + change), strict=True
    )


def network(hidden: int) -> dc.DeepCTRL:
    return dc.DeepCTRL(GRUEncoder(hidden, 32), GRUEncoder(hidden, 32), dc.mlp(64, 64, 4))


SETTINGS = {
    "full": dict(
        k=8,
        hidden=32,
        rows=(18000, 3000, 9000),
        seeds=[0, 1, 2],
        max_epochs=300,
        val_every=5,
        patience=10,
    ),
    "quick": dict(
        k=4, hidden=16, rows=(1500, 300, 600), seeds=[0], max_epochs=4, val_every=2, patience=2
    ),
}


def main(quick: bool) -> dict:
    s = SETTINGS["quick" if quick else "full"]
    data = pendulum.load("paper")
    parts = [
        windows(x[:n], y[:n], s["k"])
        for (x, y), n in zip((data.train, data.val, data.test), s["rows"], strict=True)
    ]
    train, val, test = parts
    rule, alphas = energy_rule(), [round(0.1 * i, 1) for i in range(11)]
    fit = dict(
        train=train,
        val=val,
        batch_size=64,
        max_epochs=s["max_epochs"],
        val_every=s["val_every"],
        patience=s["patience"],
        input_noise=0.01,
        seeds=s["seeds"],
        progress=not quick,
    )
    out = {
        "settings": {k: v for k, v in s.items() if k != "rows"} | {"rows": list(s["rows"])},
        "alphas": alphas,
    }
    for name, method in (("DeepCTRL", dc.methods.DeepCTRL()), ("TaskOnly", dc.methods.TaskOnly())):
        start = time.perf_counter()
        result = dc.fit(network(s["hidden"]), rule, method, desc=name, **fit)
        grid = alphas if name == "DeepCTRL" else [0.0]  # TaskOnly trains at alpha 0 only
        tables = [dc.sweep(m, rule, *test, alphas=grid) for m in result.models]
        out[name] = {
            key: [sum(t[key][i] for t in tables) / len(tables) for i in range(len(grid))]
            for key in ("mae", "verification_ratio")
        }
        out[name].update(
            epochs=result.epochs, path=result.path, seconds=round(time.perf_counter() - start, 1)
        )
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    print(json.dumps(main(parser.parse_args().quick), indent=2))
