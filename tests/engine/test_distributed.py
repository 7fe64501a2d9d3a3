import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import deepctrl as dc

WORKER = Path(__file__).with_name("ddp_worker.py")


@pytest.mark.parametrize(
    "mode",
    ["", pytest.param("compile", marks=pytest.mark.slow), "folds"],
    ids=["eager", "compiled", "folds"],
)
def test_two_gloo_ranks_end_where_one_process_ends(single_and_ddp, mode):
    # compiled: each rank's graph gives its shard's gradients, all-reduced before Adam;
    # folds: each seed's own rows are sharded, and its rho and data scales summed over ranks
    single, multi = single_and_ddp(WORKER, *([mode] if mode else []))
    a, b = dc.read_checkpoint(single), dc.read_checkpoint(multi)
    assert (a.config["world_size"], b.config["world_size"]) == (1, 2)
    assert a.config["epochs"] == b.config["epochs"]
    for k, v in a.state_dict.items():
        assert torch.allclose(v, b.state_dict[k], atol=1e-4), k
    assert max(abs(x - y) for x, y in zip(a.config["rho"], b.config["rho"], strict=True)) < 1e-5


EXACT_WORKER = Path(__file__).with_name("ddp_exact_worker.py")


@pytest.mark.slow
def test_with_exact_sums_every_seed_ends_where_one_process_ends(single_and_ddp):
    # 1, 2 and 3 seeds; rho measured and fixed; perturbation and penalty rules; with and
    # without early stopping. With float32 sums one seed parts by 0.4 % here (24 % at 1,500
    # training rows and 8 epochs).
    single, multi = single_and_ddp(EXACT_WORKER, suffix=".json")
    a, b = json.loads(single.read_text()), json.loads(multi.read_text())
    assert (a["world_size"], b["world_size"]) == (1, 2)
    assert len(a["cases"]) == 24
    for case, one in a["cases"].items():
        two = b["cases"][case]
        assert one["epochs"] == two["epochs"], case
        assert one["rho"] == pytest.approx(two["rho"], rel=1e-6), case
        for seed_one, seed_two in zip(one["val_loss"], two["val_loss"], strict=True):
            assert seed_one == pytest.approx(seed_two, rel=1e-5), case


MISMATCH_WORKER = Path(__file__).with_name("ddp_mismatch_worker.py")
TORCHRUN = ["-m", "torch.distributed.run", "--standalone", "--nproc_per_node", "2"]


def _torchrun(mode: str) -> subprocess.CompletedProcess[str]:
    """The worker under two gloo ranks; a hang fails the test by its timeout."""
    return subprocess.run(
        [sys.executable, *TORCHRUN, str(MISMATCH_WORKER), mode],
        capture_output=True,
        text=True,
        timeout=240,
    )


@pytest.mark.parametrize(
    ("mode", "what"),
    [
        ("seeds", "different seeds"),
        ("shards", "different training data"),
        ("lr", "different lr"),
        ("order", "different training data"),
        (
            "subtle",
            "different method, rule, seeds, task_loss, training data, training weights",
        ),
        ("sampler", "train is a DataLoader with a DistributedSampler"),
    ],
)
def test_ranks_given_different_seeds_options_or_data_stop_together_with_one_line(mode, what):
    done = _torchrun(mode)
    assert done.returncode != 0
    for rank in (0, 1):
        assert f"rank {rank}: " in done.stderr and what in done.stderr, done.stderr[-2000:]


def test_a_rank_that_fails_ends_the_job_instead_of_waiting_for_it():
    done = _torchrun("fail")
    assert done.returncode != 0 and "rank 1 fails in a callback" in done.stderr


@pytest.mark.parametrize("mode", ["stop", "tiny"])
def test_one_rank_stopping_and_batches_smaller_than_the_ranks_end_alike(mode):
    # stop: a callback stops rank 0 alone at epoch 2; tiny: a last batch of one row, and
    # one validation row, for two ranks
    done = _torchrun(mode)
    assert done.returncode == 0, done.stderr[-2000:]
    # the ranks' lines may interleave on one line of the joined output
    found = dict(re.findall(r"rank (\d): (epochs \[[^\]]*\] val \[[^\]]*\])", done.stdout))
    assert set(found) == {"0", "1"} and found["0"] == found["1"], done.stdout
    if mode == "stop":
        assert found["0"].startswith("epochs [2, 2]")
