from pathlib import Path

import pytest
import torch

import deepctrl as dc

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.parametrize("compile", [False, True], ids=["eager", "compiled"])
def test_two_gloo_ranks_end_where_one_process_ends(single_and_ddp, compile):
    # compiled: each rank's graph gives its shard's gradients, all-reduced before Adam
    single, multi = single_and_ddp(WORKER, *(["compile"] if compile else []))
    a, b = dc.read_checkpoint(single), dc.read_checkpoint(multi)
    assert (a.config["world_size"], b.config["world_size"]) == (1, 2)
    assert a.config["epochs"] == b.config["epochs"]
    for k, v in a.state_dict.items():
        assert torch.allclose(v, b.state_dict[k], atol=1e-4), k
    assert max(abs(x - y) for x, y in zip(a.config["rho"], b.config["rho"], strict=True)) < 1e-5
