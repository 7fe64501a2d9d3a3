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
