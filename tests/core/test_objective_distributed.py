"""dc.Objective under torch.nn.parallel.DistributedDataParallel: two gloo ranks, each with
half of every batch, compute what one process computes on the whole batch."""

import subprocess
import sys
from pathlib import Path

import torch
from safetensors.torch import load_file

WORKER = Path(__file__).with_name("objective_ddp_worker.py")


def test_two_ddp_ranks_give_the_single_process_step(tmp_path, free_port):
    single, multi = tmp_path / "single.safetensors", tmp_path / "ddp.safetensors"
    subprocess.run([sys.executable, str(WORKER), str(single)], check=True, timeout=300)
    ddp = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                          "--master_addr", "127.0.0.1", "--master_port", str(free_port),
                          str(WORKER), str(multi)], timeout=300, capture_output=True, text=True)
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    a, b = load_file(single), load_file(multi)
    assert sorted(a) == sorted(b)
    for key in a:
        assert torch.allclose(a[key], b[key], rtol=1e-5, atol=1e-7), key
    assert float(a["multipliers"].abs().sum()) > 0  # the dual step did move them
    assert not torch.equal(a["ldf.grad0"], a["ldf.grad1"])
