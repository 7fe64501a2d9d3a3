"""Per-row sample weights in ``dc.fit(train=(X, y, w), val=(Xv, yv, wv))``.

Run as a script (``python test_sample_weights.py OUT.json``, alone or under torchrun) it
trains with weights and writes seed 0's weights and rho, for the data-parallel test.
"""

import json
import os
import sys
from pathlib import Path

import pytest
import torch
from torch.utils.data import TensorDataset

import deepctrl as dc


class Shift(dc.rules.Perturbation):
    """A fixed shift of 0.1: repeated rows get the same perturbed copies."""

    def delta(self, values, generator=None):
        return torch.full_like(values, 0.1)

    def config(self):
        return {"kind": "shift"}


MONOTONIC = dc.rules.Monotonic(0, "increasing", perturbation=Shift())
PENALTY = dc.rules.Penalty(lambda x, y_hat: y_hat[:, 0] - x[:, 0] - 1.0)


def problem(n=60, seed=0, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    X = torch.randn(n, 3, generator=g, dtype=dtype)
    y = X[:, :1] - 0.5 * X[:, 1:2] + 0.1 * torch.randn(n, 1, generator=g, dtype=dtype)
    w = torch.randint(0, 4, (n,), generator=g)
    w[:4] = torch.tensor([0, 1, 2, 3])
    return X, y, w


def repeated(X, y, w):
    """The rows of (X, y), row i repeated w_i times."""
    idx = torch.repeat_interleave(torch.arange(len(w)), w.long())
    return X[idx], y[idx]


def net(dtype=torch.float32):
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).to(dtype)


def assert_same_weights(a, b, atol=0.0):
    for k, v in a.model.state_dict().items():
        if atol == 0:
            assert torch.equal(b.model.state_dict()[k], v), k
        else:
            torch.testing.assert_close(b.model.state_dict()[k], v, rtol=0, atol=atol)


@pytest.mark.parametrize("rule", [MONOTONIC, PENALTY], ids=["monotonic", "penalty"])
@pytest.mark.parametrize("rho", ["paper", "auto"])
def test_rho_with_integer_weights_is_rho_on_the_repeated_rows(rule, rho):
    X, y, w = problem()

    def rho_of(train):
        result = dc.fit(net(), rule, dc.methods.DeepCTRL(rho=rho), train=train, max_epochs=0)
        return float(result.state["rho"][0])

    weighted = rho_of((X, y, w))
    assert weighted != 1.0  # measured, not the fallback
    assert weighted == pytest.approx(rho_of(repeated(X, y, w)), rel=1e-6)
    # only the weights' proportions count
    assert rho_of((X, y, 0.37 * w)) == pytest.approx(weighted, rel=1e-6)
    assert rho_of((X, y, w.numpy())) == pytest.approx(weighted, rel=1e-6)


def test_validation_loss_with_integer_weights_is_the_loss_on_the_repeated_rows():
    X, y, _ = problem()
    Xv, yv, wv = problem(30, seed=1)

    def val_loss(val):
        result = dc.fit(
            net(),
            MONOTONIC,
            dc.methods.DeepCTRL(rho=1.0),
            train=(X, y),
            val=val,
            max_epochs=2,
            seeds=[0, 1],
        )
        return [h["val_loss"] for h in result.history]

    weighted = val_loss((Xv, yv, wv))
    for a, b in zip(weighted, val_loss(repeated(Xv, yv, wv)), strict=True):
        assert a == pytest.approx(b, rel=1e-6)


METHODS = {
    "task-only": (None, dc.methods.TaskOnly()),
    "deepctrl": (MONOTONIC, dc.methods.DeepCTRL(dc.priors.Fixed(0.3), rho=2.0)),
    "penalty": (PENALTY, dc.methods.DeepCTRL(dc.priors.Fixed(0.6), rho=0.5)),
    "dual": (MONOTONIC, dc.methods.LagrangianDual(0.5)),
}


@pytest.mark.parametrize("name", list(METHODS))
def test_full_batch_steps_with_integer_weights_are_steps_on_the_repeated_rows(name):
    # one batch per epoch (batch_size >= rows): the weighted sum / n with w / mean(w) is
    # the repeated rows' sum / sum(w)
    rule, method = METHODS[name]
    X, y, w = problem(dtype=torch.float64)

    def train(data):
        return dc.fit(
            net(torch.float64),
            rule,
            method,
            train=data,
            batch_size=1000,
            shuffle=False,
            max_epochs=3,
            lr=0.01,
            seeds=[0, 1],
        )

    weighted, plain = train((X, y, w)), train(repeated(X, y, w))
    for a, b in zip(weighted.models, plain.models, strict=True):
        for k, v in a.state_dict().items():
            torch.testing.assert_close(b.state_dict()[k], v, rtol=0, atol=1e-10)
    for ha, hb in zip(weighted.history, plain.history, strict=True):
        # the history sums the epoch's loss in float32
        assert ha["train_loss"] == pytest.approx(hb["train_loss"], rel=1e-6)
    if name == "dual":
        torch.testing.assert_close(
            weighted.state["multipliers"], plain.state["multipliers"], rtol=1e-10, atol=1e-12
        )


@pytest.mark.parametrize(
    "method", [dc.methods.DeepCTRL(), dc.methods.LagrangianDual(0.5)], ids=["deepctrl", "dual"]
)
def test_all_ones_weights_train_as_no_weights_to_float_rounding(method):
    X, y, _ = problem(80, dtype=torch.float64)
    Xv, yv, _ = problem(20, seed=1, dtype=torch.float64)
    ones, ones_v = torch.ones(80), torch.ones(20)
    rule = dc.rules.Monotonic(0, "increasing")  # random perturbations: the same draws

    def train(tr, va):
        return dc.fit(
            net(torch.float64),
            rule,
            method,
            train=tr,
            val=va,
            batch_size=16,
            max_epochs=3,
            input_noise=0.01,
            seeds=[0, 1],
        )

    plain, weighted = train((X, y), (Xv, yv)), train((X, y, ones), (Xv, yv, ones_v))
    for a, b in zip(plain.models, weighted.models, strict=True):
        for k, v in a.state_dict().items():
            torch.testing.assert_close(b.state_dict()[k], v, rtol=0, atol=1e-10)
    for ha, hb in zip(plain.history, weighted.history, strict=True):
        assert hb["val_loss"] == pytest.approx(ha["val_loss"], rel=1e-6)
        assert hb["train_loss"] == pytest.approx(ha["train_loss"], rel=1e-6)
    if isinstance(method, dc.methods.DeepCTRL):
        assert float(weighted.state["rho"][0]) == pytest.approx(
            float(plain.state["rho"][0]), rel=1e-6
        )


def test_weights_none_is_the_pair():
    X, y, _ = problem()

    def train(data):
        return dc.fit(
            net(),
            MONOTONIC,
            dc.methods.DeepCTRL(),
            train=data,
            val=data,
            batch_size=16,
            max_epochs=2,
        )

    a, b = train((X, y)), train((X, y, None))
    assert_same_weights(a, b)
    assert a.history == b.history


def test_rows_of_weight_zero_have_no_influence():
    X, y, w = problem(80)
    Xv, yv, wv = problem(20, seed=1)
    zero, zero_v = w == 0, wv == 0
    assert zero.any() and zero_v.any()
    y2, yv2 = y.clone(), yv.clone()
    y2[zero] = 100.0 * torch.randn(int(zero.sum()), 1)
    yv2[zero_v] = -50.0

    def train(method, y, yv):
        return dc.fit(
            net(),
            dc.rules.Monotonic(0, "increasing"),
            method,
            train=(X, y, w),
            val=(Xv, yv, wv),
            batch_size=16,
            max_epochs=3,
            seeds=[0, 1],
        )

    for method in (dc.methods.DeepCTRL(), dc.methods.LagrangianDual(0.5)):
        a, b = train(method, y, yv), train(method, y2, yv2)
        for ma, mb in zip(a.models, b.models, strict=True):
            for k, v in ma.state_dict().items():
                assert torch.equal(mb.state_dict()[k], v), k
        assert a.history == b.history


@pytest.mark.parametrize(
    ("weights", "message"),
    [
        (lambda w: w - 2.0, "train weights must be >= 0, got .* negative"),
        (lambda w: torch.where(w > 1, float("nan"), w), "train weights must be finite"),
        (lambda w: torch.where(w > 1, float("inf"), w), "train weights must be finite"),
        (lambda w: w[:-1], "train weights: 59 weights for 60 rows"),
        (lambda w: 0 * w, "train weights are all zero"),
        (lambda w: w[:, None], r"train weights must be 1-D .* shape \(60, 1\)"),
        (lambda w: ["a"] * len(w), "train weights must be numeric"),
    ],
    ids=["negative", "nan", "inf", "length", "all-zero", "2-d", "strings"],
)
def test_bad_weights_are_refused_with_a_clear_message(weights, message):
    X, y, w = problem()
    with pytest.raises(ValueError, match=message):
        dc.fit(net(), MONOTONIC, train=(X, y, weights(w.double())), max_epochs=1)


def test_bad_validation_weights_and_weighted_datasets_are_refused():
    X, y, w = problem()
    with pytest.raises(ValueError, match="val weights must be >= 0"):
        dc.fit(net(), MONOTONIC, train=(X, y), val=(X, y, -w), max_epochs=1)
    with pytest.raises(ValueError, match=r"supported for tensors only: pass train=\(X, y, w\)"):
        dc.fit(net(), MONOTONIC, train=TensorDataset(X, y, w.double()), max_epochs=1)
    with pytest.raises(ValueError, match=r"train must be \(X, y\), \(X, y, w\)"):
        dc.fit(net(), MONOTONIC, train=(X, y, w, w), max_epochs=1)


def test_fit_methods_takes_weights_like_fit():
    X, y, w = problem()
    methods = [dc.methods.DeepCTRL(rho="paper"), dc.methods.TaskOnly()]
    together = dc.fit_methods(
        net(), MONOTONIC, methods, train=(X, y, w), val=(X, y, w), max_epochs=2
    )
    for method, result in zip(methods, together, strict=True):
        alone = dc.fit(net(), MONOTONIC, method, train=(X, y, w), val=(X, y, w), max_epochs=2)
        assert_same_weights(alone, result, atol=1e-6)


@pytest.mark.slow
def test_the_compiled_step_takes_the_weights():
    X, y, w = problem(150, dtype=torch.float64)

    def train(compile):
        return dc.fit(
            net(torch.float64),
            MONOTONIC,
            dc.methods.LagrangianDual(0.5),
            train=(X, y, w),
            batch_size=64,
            max_epochs=3,
            seeds=[0, 1],
            compile=compile,
        )

    eager, compiled = train(False), train(True)
    for a, b in zip(eager.models, compiled.models, strict=True):
        for k, v in a.state_dict().items():
            torch.testing.assert_close(b.state_dict()[k], v, rtol=0, atol=1e-10)


@pytest.mark.slow
def test_two_gloo_ranks_shard_the_weights_with_their_rows(single_and_ddp):
    single, multi = single_and_ddp(Path(__file__), suffix=".json")
    a, b = json.loads(single.read_text()), json.loads(multi.read_text())
    assert (a["world_size"], b["world_size"]) == (1, 2)
    assert a["rho"] == pytest.approx(b["rho"], rel=1e-6)
    for one, two in zip(a["val_loss"], b["val_loss"], strict=True):
        assert one == pytest.approx(two, rel=1e-6)
    for k, v in a["weights"].items():
        assert torch.allclose(torch.tensor(v), torch.tensor(b["weights"][k]), atol=1e-6), k


def _ddp_worker(out: str) -> None:
    torch.set_num_threads(1)
    X, y, w = problem(90)
    Xv, yv, wv = problem(30, seed=1)
    result = dc.fit(
        net(),
        MONOTONIC,
        dc.methods.DeepCTRL(rho="auto"),
        train=(X, y, w),
        val=(Xv, yv, wv),
        batch_size=32,
        max_epochs=3,
        seeds=[0, 1],
        exact_sums=True,
    )
    if int(os.environ.get("RANK", "0")) == 0:
        world = torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1
        Path(out).write_text(
            json.dumps(
                {
                    "world_size": world,
                    "rho": result.state["rho"].tolist(),
                    "val_loss": [h["val_loss"] for h in result.history],
                    "weights": {k: v.tolist() for k, v in result.model.state_dict().items()},
                }
            )
        )


if __name__ == "__main__":
    _ddp_worker(sys.argv[1])
