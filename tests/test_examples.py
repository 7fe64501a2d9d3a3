"""The examples run as a user runs them, in their small settings (--quick); their full
settings and measured results are in docs/examples.md."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(name: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / name), "--quick", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


@pytest.mark.slow
def test_pendulum_with_a_recurrent_encoder():
    out = run("pendulum_recurrent.py")
    deep, task = out["DeepCTRL"], out["TaskOnly"]
    assert deep["path"] == task["path"] == "loop"  # vmap has no batching rule for GRU
    ratios = deep["verification_ratio"]
    assert ratios[-1] >= 0.95 and ratios[-1] > ratios[0]
    assert task["verification_ratio"][0] < ratios[-1]
    assert len(deep["mae"]) == len(out["alphas"]) == 11


@pytest.mark.slow
def test_cnn_on_digits_with_a_shift_rule():
    out = run("digits_cnn.py")
    deep = out["DeepCTRL"]
    assert deep["path"] == ("vmap" if len(out["settings"]["seeds"]) > 1 else "loop")
    assert deep["accuracy"][0] > 0.5  # ten classes: chance is 0.1
    # 15 epochs on 600 images: the trend shows by alpha 0.8 (the full run: docs/examples.md)
    assert deep["verification_ratio"][8] > deep["verification_ratio"][0] + 0.05
    assert deep["accuracy_shifted"][8] > deep["accuracy_shifted"][0] + 0.05


@pytest.mark.parametrize("amp", [False, True], ids=["float32", "bfloat16-autocast"])
def test_plain_pytorch_loop_with_objective(amp):
    out = run("custom_loop.py", *(["--amp"] if amp else []))
    ratios = out["test"]["verification_ratio"]
    assert out["rho"] > 0 and len(ratios) == 11
    assert ratios[-1] >= 0.95 > ratios[0]  # the data break the rule at high prices
    assert out["test"]["mse"][-1] > out["test"]["mse"][0]


def test_lightning_module_with_objective():
    pytest.importorskip("lightning")
    out = run("lightning_module.py")
    assert out["epochs"] == 2 and out["rho"] > 0
    assert len(out["test"]["auc"]) == 11 and out["test"]["auc"][0] > 0.6


def test_the_lightning_module_calls_after_step_once_per_optimizer_step(tmp_path):
    L = pytest.importorskip("lightning")
    import importlib.util

    import torch
    from torch.utils.data import DataLoader, TensorDataset

    import deepctrl as dc

    spec = importlib.util.spec_from_file_location(
        "lightning_module", EXAMPLES / "lightning_module.py"
    )
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    X = torch.rand(80, 3, generator=torch.Generator().manual_seed(0))
    y = (X[:, :1] > 0.5).float()
    loader = DataLoader(TensorDataset(X, y), batch_size=8)  # 10 batches an epoch
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1, out_activation="sigmoid"))
    module = example.DeepCTRLModule(model, dc.rules.Monotonic(0, "increasing"))
    calls = []
    after_step = module.objective.after_step
    module.objective.after_step = lambda out: (calls.append(out), after_step(out))
    trainer = L.Trainer(
        max_epochs=3,
        accumulate_grad_batches=3,  # steps after batches 3, 6, 9 and the epoch's last, 10
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=tmp_path,
    )
    trainer.fit(module, loader)
    assert trainer.global_step == 12 and len(calls) == 12
