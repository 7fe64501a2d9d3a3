"""A convolutional network on images with a rule about images: "shifting a digit by one
pixel does not change what digit it is". scikit-learn's 8x8 digits ship with it (1,797
images, nothing is downloaded). The rule is a custom one, written in a few lines.

    python examples/digits_cnn.py            # the full settings (see docs/examples.md)
    python examples/digits_cnn.py --quick    # a smoke run of a few seconds

Prints one JSON object: test accuracy on clean and on shifted digits, and how often a shift
keeps the prediction (the verification ratio), at every alpha, for DeepCTRL and for the same
network trained on the data alone (TaskOnly).
"""

import argparse
import json
import time

import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from torch import nn

import deepctrl as dc


class ShiftInvariant(dc.rules.Rule):
    """The predicted digit survives a one-pixel shift (up, down, left or right, drawn per
    image). Loss: how far the predicted class distributions move (total variation) beyond
    ``tau``; satisfied when the predicted class stays the same."""

    def __init__(self, tau: float = 0.05) -> None:
        self.tau = tau

    def perturb(self, x: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        n = x.shape[0]
        padded = F.pad(x, (1, 1, 1, 1))
        shifted = torch.stack(
            [
                padded[..., 2:, 1:-1],
                padded[..., :-2, 1:-1],
                padded[..., 1:-1, 2:],
                padded[..., 1:-1, :-2],
            ]
        )
        way = torch.randint(0, 4, (n,), generator=generator, device=x.device)
        return shifted[way, torch.arange(n, device=x.device)]

    def loss(self, ctx: dc.rules.Context) -> torch.Tensor:
        p, q = ctx.y_hat.softmax(dim=1), ctx.y_hat_p.softmax(dim=1)
        return torch.relu(0.5 * (p - q).abs().sum(dim=1) - self.tau)

    def satisfied(self, ctx: dc.rules.Context) -> torch.Tensor:
        return ctx.y_hat.argmax(dim=1) == ctx.y_hat_p.argmax(dim=1)


def cnn(width: int = 32) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(8, 16, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(16 * 4 * 4, width),
    )


def network() -> dc.DeepCTRL:
    return dc.DeepCTRL(cnn(), cnn(), dc.mlp(64, 64, 10))  # outputs: logits of the 10 digits


SETTINGS = {
    "full": dict(train_rows=None, seeds=[0, 1, 2], max_epochs=300, patience=15),
    "quick": dict(train_rows=600, seeds=[0], max_epochs=15, patience=3),
}


def mean(tables: list[dict], key: str) -> list[float]:
    """Mean over seeds of one column of their sweep tables."""
    return [sum(t[key][i] for t in tables) / len(tables) for i in range(len(tables[0][key]))]


def main(quick: bool) -> dict:
    s = SETTINGS["quick" if quick else "full"]
    digits = load_digits()
    X = torch.tensor(digits.images, dtype=torch.float32)[:, None] / 16.0
    y = torch.tensor(digits.target)
    idx = torch.arange(len(y)).numpy()
    train_idx, test_idx = train_test_split(
        idx, test_size=0.2, stratify=digits.target, random_state=0
    )
    train_idx, val_idx = train_test_split(
        train_idx, test_size=0.25, stratify=digits.target[train_idx], random_state=0
    )
    train_idx = train_idx[: s["train_rows"]]
    rule, alphas = ShiftInvariant(), [round(0.1 * i, 1) for i in range(11)]
    X_test, y_test = X[test_idx], y[test_idx]
    X_shifted = rule.perturb(X_test, torch.Generator().manual_seed(1))
    out = {
        "settings": s,
        "alphas": alphas,
        "rows": {"train": len(train_idx), "val": len(val_idx), "test": len(test_idx)},
    }
    for name, method in (("DeepCTRL", dc.methods.DeepCTRL()), ("TaskOnly", dc.methods.TaskOnly())):
        start = time.perf_counter()
        result = dc.fit(
            network(),
            rule,
            method,
            train=(X[train_idx], y[train_idx]),
            val=(X[val_idx], y[val_idx]),
            task_loss="cross_entropy",
            batch_size=32,
            max_epochs=s["max_epochs"],
            patience=s["patience"],
            seeds=s["seeds"],
            progress=not quick,
            desc=name,
        )
        grid = alphas if name == "DeepCTRL" else [0.0]  # TaskOnly trains at alpha 0 only
        clean = [dc.sweep(m, rule, X_test, y_test, grid, ("accuracy",)) for m in result.models]
        moved = [dc.sweep(m, None, X_shifted, y_test, grid, ("accuracy",)) for m in result.models]

        out[name] = {
            "accuracy": mean(clean, "accuracy"),
            "accuracy_shifted": mean(moved, "accuracy"),
            "verification_ratio": mean(clean, "verification_ratio"),
            "epochs": result.epochs,
            "path": result.path,
            "seconds": round(time.perf_counter() - start, 1),
        }
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run of a few seconds")
    print(json.dumps(main(parser.parse_args().quick), indent=2))
