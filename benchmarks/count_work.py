"""The work one training step does, counted rather than timed: PyTorch operator calls and
Python function calls per step of ``dc.fit`` on the pendulum (paper network, batch 64,
100 steps), for 1 and 10 seeds.

    python benchmarks/count_work.py
    PYTHONPATH=<checkout of another commit>/src python benchmarks/count_work.py

Counts do not depend on what else the machine is doing, so two versions of the code can be
compared on a noisy machine. Every aten call is counted by a ``TorchDispatchMode``, every
Python call by ``sys.setprofile``; setup (the output check, the stacking) is included and
spread over the 100 steps. Prints one JSON object.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

import deepctrl as dc
from deepctrl.paper.datasets import pendulum
from deepctrl.paper.experiments.pendulum_setup import deepctrl_net, energy_rule

STEPS = 100


class CountOperators(TorchDispatchMode):
    """Counts the aten operators that run inside it."""

    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None):
        self.calls += 1
        return func(*args, **(kwargs or {}))


def per_step(seeds: int, train: tuple[torch.Tensor, torch.Tensor]) -> dict[str, float]:
    kw = dict(train=train, max_epochs=1, seeds=list(range(seeds)), input_noise=0.01)
    dc.fit(deepctrl_net(), energy_rule(), dc.methods.DeepCTRL(rho=1.0), **kw)  # warm-up
    python_calls = 0

    def profile(frame: Any, event: str, arg: Any) -> None:
        nonlocal python_calls
        if event == "call":
            python_calls += 1

    operators = CountOperators()
    sys.setprofile(profile)
    try:
        with operators:
            dc.fit(deepctrl_net(), energy_rule(), dc.methods.DeepCTRL(rho=1.0), **kw)
    finally:
        sys.setprofile(None)
    return {
        "operator_calls_per_step": operators.calls / STEPS,
        "python_calls_per_step": python_calls / STEPS,
    }


def main() -> None:
    torch.set_num_threads(1)
    data = pendulum.load("paper")
    train = (data.train[0][: 64 * STEPS], data.train[1][: 64 * STEPS])
    print(
        json.dumps(
            {
                "benchmark": "count_work",
                "steps": STEPS,
                "batch_size": 64,
                "seeds": {str(s): per_step(s, train) for s in (1, 10)},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
