"""A fit is explicit steps: check, calibrate (the method's state), run."""

import pytest
import torch

import deepctrl as dc
from deepctrl.engine.options import Options
from deepctrl.engine.trainer import Trainer
from helpers import small_net


def _trainer(max_epochs: int = 2) -> Trainer:
    g = torch.Generator().manual_seed(0)
    X = torch.randn(32, 3, generator=g)
    return Trainer(
        [small_net()],
        dc.rules.Monotonic(0, "increasing"),
        dc.methods.DeepCTRL(rho=0.5),
        (X, X[:, :1]),
        None,
        Options(max_epochs=max_epochs, batch_size=8),
        copy_seeds=[0],
        device=torch.device("cpu"),
    )


def test_the_constructor_makes_no_state_and_run_needs_calibrate_first():
    trainer = _trainer()
    assert len(trainer.state) == 0
    with pytest.raises(RuntimeError, match="call calibrate"):
        trainer.run("test")
    trainer.check()
    trainer.calibrate()
    assert trainer.state["rho"].tolist() == [0.5] and len(trainer.state.priors) == 1
    history, epochs, _, _ = trainer.run("test")
    assert epochs == [2] and len(history[0]["train_loss"]) == 2


def test_a_chunk_gathers_no_more_input_bytes_than_the_cap(monkeypatch):
    from deepctrl.engine import epoch_training

    # 3 float32 inputs are 12 bytes a row: a 200-byte cap keeps 16 rows, two batches of 8
    monkeypatch.setattr(epoch_training, "CHUNK_BYTES", 200)
    seen = []
    original = epoch_training.perturb_seeds

    def spy(rule, xs, gens):
        seen.append(xs.shape[1])
        return original(rule, xs, gens)

    monkeypatch.setattr(epoch_training, "perturb_seeds", spy)
    trainer = _trainer(max_epochs=1)
    assert trainer.chunk == 2
    trainer.check()
    trainer.calibrate()
    trainer.run("test")
    assert seen == [16, 16]  # 32 rows, 16 at a time
    assert epoch_training.chunk_rows((torch.zeros(4, 3, dtype=torch.float64), None)) == 8
