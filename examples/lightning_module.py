"""DeepCTRL inside a PyTorch Lightning ``LightningModule``: ``training_step`` returns the
loss of ``dc.Objective``, the method's hooks run after each optimizer step and epoch, and
Lightning keeps doing what it does (early stopping, logging, devices, strategies).

The task: learn how a patient's risk rises with blood pressure from noisy records; the rule
"risk rises with systolic pressure" (a perturbation rule, as in the paper's Sec. 4.3).

    python examples/lightning_module.py            # 30 epochs at most
    python examples/lightning_module.py --quick    # a smoke run

Needs ``pip install lightning``. Prints one JSON object: the test table over alpha.
"""

import argparse
import json
import logging

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc


class DeepCTRLModule(L.LightningModule):
    """Any DeepCTRL model trained with the DeepCTRL objective under Lightning."""

    def __init__(
        self, model: dc.DeepCTRL, rule: dc.rules.Rule, task_loss: str = "bce", lr: float = 1e-3
    ) -> None:
        super().__init__()
        self.model, self.lr = model, lr
        self.objective = dc.Objective(model, rule, dc.methods.DeepCTRL(), task_loss=task_loss)
        self.last = None

    def on_train_start(self) -> None:
        if self.objective.state is None:  # rho over the training set at the initial weights
            self.objective.calibrate(self.trainer.train_dataloader)  # (a resumed run has one)

    def training_step(self, batch, batch_idx):
        out = self.objective(*batch)
        self.log_dict(
            {
                "task": out.task,
                "rule": out.rule,
                "alpha": out.alpha,
                "verification": out.verification_ratio,
            },
            on_step=False,
            on_epoch=True,
            sync_dist=True,  # under DDP, the mean over every rank's share
        )
        self.last = out
        return out.loss

    def optimizer_step(self, *args, **kwargs) -> None:
        # once per optimizer step, after it: with accumulate_grad_batches, after the last
        # micro-batch of each accumulation (the epoch's last, shorter one too)
        super().optimizer_step(*args, **kwargs)
        self.objective.after_step(self.last)

    def on_train_epoch_end(self) -> None:
        self.objective.after_epoch(self.trainer.train_dataloader)

    def validation_step(self, batch, batch_idx):
        x, y = batch  # the paper validates the task loss at alpha = 0
        self.log("val_bce", torch.nn.functional.binary_cross_entropy(self.model(x, 0.0), y))

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    def on_save_checkpoint(self, checkpoint: dict) -> None:
        checkpoint["deepctrl_objective"] = self.objective.state_dict()

    def on_load_checkpoint(self, checkpoint: dict) -> None:
        self.objective.load_state_dict(checkpoint["deepctrl_objective"])


def records(n: int, seed: int) -> TensorDataset:
    """Standardized systolic pressure, age and weight; risk from a logistic model in which
    pressure matters, with label noise."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, 3, generator=g)
    logit = 1.2 * x[:, 0] + 0.6 * x[:, 1] + 0.3 * x[:, 2] - 0.2
    y = (torch.rand(n, generator=g) < torch.sigmoid(logit)).float()
    return TensorDataset(x, y[:, None])


def main(quick: bool) -> dict:
    L.seed_everything(0, verbose=False)
    logging.getLogger("lightning.pytorch").setLevel(logging.WARNING)
    train = DataLoader(records(400 if quick else 3000, 0), batch_size=32, shuffle=True)
    val, test = (DataLoader(records(1000, s), batch_size=1000) for s in (1, 2))
    model = dc.DeepCTRL(
        dc.mlp(3, 32, 16), dc.mlp(3, 32, 16), dc.mlp(32, 16, 1, out_activation="sigmoid")
    )
    rule = dc.rules.Monotonic(0, "increasing", perturbation=dc.rules.Additive(0.2))
    module = DeepCTRLModule(model, rule)
    trainer = L.Trainer(
        max_epochs=2 if quick else 30,
        accelerator="cpu",
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[L.pytorch.callbacks.EarlyStopping("val_bce", patience=5)],
    )
    trainer.fit(module, train, val)
    alphas = [round(0.1 * i, 1) for i in range(11)]
    return {
        "rho": module.objective.rho,
        "epochs": trainer.current_epoch,
        "test": dc.sweep(model, rule, test, alphas=alphas, metrics=("bce", "auc")),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke run")
    print(json.dumps(main(parser.parse_args().quick), indent=2))
