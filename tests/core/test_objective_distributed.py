"""dc.Objective under torch.nn.parallel.DistributedDataParallel: two gloo ranks, each with
half of every batch, compute what one process computes on the whole batch."""

from pathlib import Path

import torch
from safetensors.torch import load_file

WORKER = Path(__file__).with_name("objective_ddp_worker.py")


def test_two_ddp_ranks_give_the_single_process_step(single_and_ddp):
    single, multi = single_and_ddp(WORKER)
    a, b = load_file(single), load_file(multi)
    assert sorted(a) == sorted(b)
    for key in a:
        assert torch.allclose(a[key], b[key], rtol=1e-5, atol=1e-7), key
    assert float(a["multipliers"].abs().sum()) > 0  # the dual step did move them
    assert not torch.equal(a["ldf.grad0"], a["ldf.grad1"])
