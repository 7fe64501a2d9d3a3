"""Can the pendulum's energy rule run in float32? The rule compares E(y_hat) with E(x),
which differ by about 4e-6 of 9 over a 5 ms step: float32 rounding (1e-7 relative) is close.

    python benchmarks/energy_dtype.py [--threads 1]

Compares three ways of computing E(y) - E(x) against float64: float32 as written, and float32
rewritten as a sum of differences (cos a - cos b = -2 sin((a+b)/2) sin((a-b)/2), u^2 - v^2 =
(u - v)(u + v)), which never subtracts two large, nearly equal energies. Counts the rows whose
verdict (rise or not) changes, on the test set's true pairs and on the predictions of a
DeepCTRL model at alpha 0, 0.1, ..., 1, and times forward and backward on a batch of 10 x 64 rows.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable

import torch
from torch import Tensor

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule

C = pendulum.DEFAULT


def cos_difference(a: Tensor, b: Tensor) -> Tensor:
    return -2 * torch.sin(0.5 * (a + b)) * torch.sin(0.5 * (a - b))


def rise_compensated(x: Tensor, y: Tensor) -> Tensor:
    """E(y) - E(x) in the inputs' dtype, as a sum of differences."""
    tx1, wx1, tx2, wx2 = x.unbind(-1)
    ty1, wy1, ty2, wy2 = y.unbind(-1)
    potential = -(C.m1 + C.m2) * C.l1 * C.g * cos_difference(
        ty1, tx1
    ) - C.m2 * C.l2 * C.g * cos_difference(ty2, tx2)
    a1, b1, a2, b2 = C.l1 * wy1, C.l1 * wx1, C.l2 * wy2, C.l2 * wx2
    cross = ((a1 - b1) * a2 + b1 * (a2 - b2)) * torch.cos(ty1 - ty2) + b1 * b2 * cos_difference(
        ty1 - ty2, tx1 - tx2
    )
    kinetic = (
        0.5 * (C.m1 + C.m2) * (a1 - b1) * (a1 + b1)
        + 0.5 * C.m2 * (a2 - b2) * (a2 + b2)
        + C.m2 * cross
    )
    return potential + kinetic


def rise_float32(x: Tensor, y: Tensor) -> Tensor:
    return pendulum.energy(y.float()) - pendulum.energy(x.float())


WAYS: dict[str, Callable[[Tensor, Tensor], Tensor]] = {
    "float64": pendulum.energy_increase,
    "float32": rise_float32,
    "float32_compensated": rise_compensated,
}


def changed(x: Tensor, y: Tensor) -> dict[str, int]:
    """Rows whose verdict (E(y) < E(x)) differs from float64's, per way."""
    truth = pendulum.energy_increase(x, y) < 0
    return {name: int(((f(x, y) < 0) != truth).sum()) for name, f in WAYS.items()}


def microseconds(f: Callable[[Tensor, Tensor], Tensor], x: Tensor, y: Tensor) -> float:
    y = y.clone().requires_grad_(True)
    for _ in range(20):
        torch.relu(f(x, y)).sum().backward()
    start = time.perf_counter()
    for _ in range(300):
        torch.relu(f(x, y)).sum().backward()
    return (time.perf_counter() - start) / 300 * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    data = pendulum.load("paper")
    x, y = data.test
    model = dc.fit(
        deepctrl_net(),
        energy_rule(),
        dc.methods.DeepCTRL(rho=1.0),
        train=data.train,
        max_epochs=3,
        input_noise=0.01,
    ).model
    predicted = {}
    with torch.no_grad():
        for i in range(11):
            for name, n in changed(x, model(x, i / 10)).items():
                predicted[name] = predicted.get(name, 0) + n
    batch_x, batch_y = data.train[0][:640], data.train[1][:640]
    print(
        json.dumps(
            {
                "benchmark": "energy_dtype",
                "threads": args.threads,
                "test_true_pairs": {"rows": len(x), "verdicts_changed": changed(x, y)},
                "test_predictions_alpha_0_to_1": {
                    "rows": 11 * len(x),
                    "verdicts_changed": predicted,
                },
                "forward_backward_us_640_rows": {
                    name: round(microseconds(f, batch_x, batch_y), 1) for name, f in WAYS.items()
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
