import subprocess
import sys
from pathlib import Path

import torch

import deepctrl as dc

WORKER = Path(__file__).with_name("ddp_worker.py")


def test_two_gloo_ranks_end_where_one_process_ends(tmp_path, free_port):
    single, multi = tmp_path / "single.safetensors", tmp_path / "ddp.safetensors"
    subprocess.run([sys.executable, str(WORKER), str(single)], check=True, timeout=300)
    ddp = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2",
                          "--master_addr", "127.0.0.1", "--master_port", str(free_port),
                          str(WORKER), str(multi)], timeout=300, capture_output=True, text=True)
    assert ddp.returncode == 0, ddp.stderr[-3000:]
    a, b = dc.read_checkpoint(single), dc.read_checkpoint(multi)
    assert (a.config["world_size"], b.config["world_size"]) == (1, 2)
    assert a.config["epochs"] == b.config["epochs"]
    for k, v in a.state_dict.items():
        assert torch.allclose(v, b.state_dict[k], atol=1e-4), k
    assert max(abs(x - y) for x, y in zip(a.config["rho"], b.config["rho"], strict=True)) < 1e-5
