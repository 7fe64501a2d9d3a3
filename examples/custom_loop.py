"""Your own training loop with ``dc.Objective``: your DataLoader, your optimizer (AdamW
here), mixed precision, validation and early stopping; DeepCTRL supplies the loss of each
batch and the rule strength is chosen after training.

The data: weekly sales with a price, a season and promotions. The rule says "sales fall
when the price rises"; in these data a premium segment buys more at the highest prices
(about one row in six), so the data alone learn a curve the rule forbids there, and alpha
moves the model between the two.

    python examples/custom_loop.py            # 40 epochs
    python examples/custom_loop.py --quick    # a smoke run
    python examples/custom_loop.py --amp      # bfloat16 autocast on the CPU

Prints one JSON object: the test table over alpha and the alpha chosen for 95 %
verification on the validation rows.
"""

import argparse
import copy
import json
import math

import torch
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc


def sales(n: int, seed: int) -> TensorDataset:
    """Standardized price, season and promotion; sales fall with the price below one
    standard deviation above the mean and rise above it."""
    g = torch.Generator().manual_seed(seed)
    price, week = torch.randn(n, generator=g), torch.rand(n, generator=g) * 52
    promo = (torch.rand(n, generator=g) < 0.2).float()
    x = torch.stack([price, torch.sin(2 * math.pi * week / 52), promo], dim=1)
    effect = -0.5 * price + 0.25 * price**2
    y = 2.0 + effect + 0.5 * x[:, 1] + 0.7 * promo + 0.3 * torch.randn(n, generator=g)
    return TensorDataset(x, y[:, None])


def main(quick: bool, amp: bool) -> dict:
    torch.manual_seed(0)
    train = DataLoader(
        sales(4000 if not quick else 800, 0),
        batch_size=64,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
    )
    val, test = (DataLoader(sales(1000, s), batch_size=500) for s in (1, 2))
    model = dc.DeepCTRL(dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 32, 1))
    rule = dc.rules.Monotonic(0, "decreasing", perturbation=dc.rules.Additive(0.1))
    objective = dc.Objective(model, rule, dc.methods.DeepCTRL(), task_loss="mse", seed=0)
    objective.calibrate(train)  # rho over the training set at the initial weights (paper)
    opt = torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=1e-4)

    best, best_state, waited, patience = math.inf, None, 0, 5
    for _epoch in range(40 if not quick else 3):
        model.train()
        for x, y in train:
            with torch.autocast("cpu", dtype=torch.bfloat16, enabled=amp):
                out = objective(x, y)  # alpha drawn, x and its perturbation in one forward
            opt.zero_grad()
            out.loss.backward()
            opt.step()
            objective.after_step(out)  # method state (LagrangianDual's multipliers)
        objective.after_epoch(train)  # method state per epoch (rho="epoch")
        val_mse = dc.sweep(model, rule, val, alphas=[0.0], metrics=("mse",))["mse"][0]
        if val_mse < best:
            best, best_state, waited = val_mse, copy.deepcopy(model.state_dict()), 0
        else:
            waited += 1
            if waited >= patience:
                break
    model.load_state_dict(best_state)

    alphas = [round(0.1 * i, 1) for i in range(11)]
    chosen = dc.select_alpha(
        dc.sweep(model, rule, val, alphas=alphas, metrics=("mse",)), min_verification=0.95
    )
    return {
        "rho": objective.rho,
        "best_val_mse": best,
        "chosen_alpha": chosen,
        "test": dc.sweep(model, rule, test, alphas=alphas, metrics=("mse",)),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    parser.add_argument("--amp", action="store_true", help="bfloat16 autocast on the CPU")
    args = parser.parse_args()
    print(json.dumps(main(args.quick, args.amp), indent=2))
