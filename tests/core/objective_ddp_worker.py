"""One step of dc.Objective under DistributedDataParallel (torchrun, 2 gloo ranks, each
with half of the batch) or alone on the whole batch; saves what the step computed.

Used by test_objective_distributed.py: both runs must agree.

The DistributedDataParallel wrapper and the objectives are released before the process group
is destroyed: a wrapper still alive at interpreter exit tears its gloo state down after the
group is gone, which under CPU load sometimes aborted a rank ("terminate called without an
active exception") after the results were written.
"""

import gc
import os
import sys

import torch
from safetensors.torch import save_file
from torch.nn.parallel import DistributedDataParallel

import deepctrl as dc


def main(path: str) -> None:
    torch.set_num_threads(1)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world > 1:
        torch.distributed.init_process_group("gloo")
    rank = int(os.environ.get("RANK", "0"))
    g = torch.Generator().manual_seed(0)
    X = torch.randn(128, 3, generator=g)
    y = X[:, :1] - 0.5 * X[:, 1:2]
    part = slice(rank * 128 // world, (rank + 1) * 128 // world)
    torch.manual_seed(0)
    model = dc.DeepCTRL(dc.mlp(3, 16, 8), dc.mlp(3, 16, 8), dc.mlp(16, 8, 1))
    wrapped = DistributedDataParallel(model) if world > 1 else model
    rule = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0])
    saved = {}
    for name, method in (
        ("deepctrl", dc.methods.DeepCTRL(rho="paper")),
        ("ldf", dc.methods.LagrangianDual(0.5)),
    ):
        objective = dc.Objective(wrapped, rule, method, seed=3).calibrate((X[part], y[part]))
        for step in range(2):  # the second step uses the multipliers of the first
            model.zero_grad()
            out = objective(X[part], y[part])
            out.loss.backward()
            objective.after_step(out)
            saved[f"{name}.grad{step}"] = torch.cat(
                [p.grad.reshape(-1) for p in model.parameters()]
            )
            saved[f"{name}.alpha{step}"] = torch.tensor([out.alpha])
        if name == "deepctrl":
            saved["rho"] = torch.tensor([objective.rho])
        else:
            saved["multipliers"] = objective.state["multipliers"].clone()
    if rank == 0:
        save_file(saved, path)
    del wrapped, objective
    gc.collect()
    if world > 1:
        torch.distributed.barrier()
        torch.distributed.destroy_process_group()


if __name__ == "__main__":
    main(sys.argv[1])
