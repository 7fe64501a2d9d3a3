"""``dc.fit(compile=True)``: the compiled step trains what the eager step trains (float64
runs, so that float rounding stays far below the tolerance)."""

import logging

import pytest
import torch
from torch._dynamo.utils import counters

import deepctrl as dc

TORCH = tuple(int(p) for p in torch.__version__.split("+")[0].split(".")[:2])
# torch 2.3 and 2.4 cannot compile torch.func.grad_and_value with inductor ("Cannot access
# storage of TensorWrapper"), 2.5 specialises the batch size marked dynamic: the step then
# trains eagerly (the same numbers) and these tests, which count graphs, have nothing to count
builds_graphs = pytest.mark.skipif(
    TORCH < (2, 6), reason="the compiled step falls back to eager training on torch < 2.6"
)


def _problem():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 3, generator=g, dtype=torch.float64)
    y = X.sum(1, keepdim=True) + 0.1 * torch.randn(200, 1, generator=g, dtype=torch.float64)
    return (X[:150], y[:150]), (X[150:], y[150:])


def _fit(compile: bool, **kw):
    train, val = _problem()
    net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
    return dc.fit(
        net,
        dc.rules.Monotonic(0, "increasing"),
        dc.methods.DeepCTRL(rho=1.0),
        train=train,
        val=val,
        seeds=[0, 1],
        batch_size=64,
        compile=compile,
        **kw,
    )


@pytest.mark.slow
@builds_graphs
def test_compiled_training_matches_eager_training_in_float64(caplog):
    # 150 rows in batches of 64 (two full batches and one of 22 rows per epoch); a large
    # learning rate and patience 1 stop one seed before the other
    kw = dict(max_epochs=10, patience=1, lr=0.05)
    eager = _fit(False, **kw)
    assert eager.epochs[0] != eager.epochs[1]
    counters.clear()
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        compiled = _fit(True, **kw)
    assert "the training step of 2 networks (every method's seeds, stacked)" in caplog.text
    # one graph for stacks of 2 and batches of 64 and 22 rows, one more for a stack of 1
    assert counters["stats"]["unique_graphs"] == 2
    _assert_same_training(eager, compiled, 1e-10)
    for ha, hb in zip(eager.history, compiled.history, strict=True):
        assert hb["train_loss"] == pytest.approx(ha["train_loss"], rel=1e-12)


def _assert_same_training(eager, compiled, atol):
    assert compiled.epochs == eager.epochs and compiled.best_epochs == eager.best_epochs
    for a, b in zip(eager.models, compiled.models, strict=True):
        for name, value in a.state_dict().items():
            torch.testing.assert_close(b.state_dict()[name], value, rtol=0, atol=atol)


@pytest.mark.slow
@builds_graphs
def test_a_last_batch_of_one_row_gets_its_own_graph_and_trains_as_eager():
    # 129 rows in batches of 64: 64, 64 and 1; a size of one is specialised, so the batch of
    # one row needs a graph of its own, built the first time it comes
    train, val = _problem()
    train = (train[0][:129], train[1][:129])

    def run(compile: bool):
        net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
        return dc.fit(
            net,
            dc.rules.Monotonic(0, "increasing"),
            dc.methods.DeepCTRL(rho=1.0),
            train=train,
            val=val,
            seeds=[0, 1],
            max_epochs=3,
            compile=compile,
        )

    counters.clear()
    compiled = run(True)
    assert counters["stats"]["unique_graphs"] == 2
    _assert_same_training(run(False), compiled, 1e-10)


@pytest.mark.slow
def test_a_compiled_run_repeats_bit_for_bit():
    train, val = _problem()
    runs = []
    for _ in range(2):
        net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
        runs.append(
            dc.fit(
                net,
                dc.rules.Monotonic(0, "increasing"),
                dc.methods.DeepCTRL(),
                train=(train[0].float(), train[1].float()),
                val=(val[0].float(), val[1].float()),
                seeds=[0, 1, 2],
                max_epochs=6,
                patience=1,
                lr=0.05,
                compile=True,
            )
        )
    first, second = runs
    assert first.epochs == second.epochs and len(set(first.epochs)) > 1  # the stack shrank
    for a, b in zip(first.models, second.models, strict=True):
        for name, value in a.state_dict().items():
            assert torch.equal(b.state_dict()[name], value), name


@pytest.mark.slow
def test_a_compiled_method_stack_matches_eager_training_in_float64():
    # every built-in method in one stack, and a rule of two leaves (the dual multipliers
    # see one signed violation each)
    train, val = _problem()
    rule = dc.rules.AllOf(
        [dc.rules.Monotonic(0, "increasing"), dc.rules.Penalty(lambda x, y: y[:, 0] - 3.0)]
    )
    methods = [
        dc.methods.DeepCTRL(rho="auto"),
        dc.methods.TaskOnly(),
        dc.methods.RuleOnly(),
        dc.methods.TaskAndRule(0.5),
        dc.methods.LagrangianDual(0.5),
    ]

    def run(compile: bool):
        net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
        return dc.fit_methods(
            net,
            rule,
            methods,
            train=train,
            val=val,
            seeds=[0, 1],
            max_epochs=4,
            patience=1,
            lr=0.02,
            compile=compile,
        )

    eager, compiled = run(False), run(True)
    for a, b in zip(eager, compiled, strict=True):
        # RuleOnly's output bias has a gradient of rounding residue alone (a pair's two
        # forwards share the bias, so its rule gradient cancels exactly): Adam steps it by
        # lr g / (|g| + 1e-8), so residues of 1e-17 in two summation orders part it by 4e-10
        _assert_same_training(a, b, 1e-8 if a.method.name == "RuleOnly" else 1e-10)
        for key, value in a.state.tensors.items():
            torch.testing.assert_close(b.state[key], value, rtol=0, atol=1e-10)
    assert compiled[-1].state["multipliers"].shape == (2, 2)


@pytest.mark.slow
@builds_graphs
def test_compiled_fits_of_other_rules_and_losses_in_one_process_do_not_share_a_graph():
    # the compiled step checks guards on its inputs only, not on what it closes over (the
    # rule, the loss): each fit must get a graph of its own, or the second would silently
    # train with the first one's rule
    train, val = _problem()
    shift = dc.rules.Penalty(lambda x, y: y[:, 0] - 2.0 * x[:, 1])
    cases = [(dc.rules.Monotonic(0, "increasing"), "mae"), (shift, "mae"), (shift, "mse")]

    def run(rule, loss, compile):
        net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
        return dc.fit(
            net,
            rule,
            dc.methods.DeepCTRL(rho=1.0),
            train=train,
            val=val,
            seeds=[0, 1],
            max_epochs=2,
            task_loss=loss,
            compile=compile,
        )

    counters.clear()
    compiled = [run(rule, loss, True) for rule, loss in cases]
    assert counters["stats"]["unique_graphs"] == len(cases)
    for (rule, loss), result in zip(cases, compiled, strict=True):
        _assert_same_training(run(rule, loss, False), result, 1e-10)


def test_methods_that_are_not_linear_train_eagerly_with_a_note(caplog):
    class Squared(dc.methods.Method):
        uses_rule = False

        def objective(self, t, state):
            return t.task**2

    train, _ = _problem()
    net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        result = dc.fit(net, None, Squared(), train=train, max_epochs=1, compile=True)
    assert "Squared is not a linear method" in caplog.text and result.epochs == [1]


def test_rules_that_cannot_be_traced_train_eagerly_with_a_note(caplog):
    # a Python branch on a tensor's value cannot be part of a graph
    rule = dc.rules.Penalty(lambda x, y: y[:, 0] if bool((y > 0).all()) else y[:, 0] - 1)
    train, _ = _problem()
    net = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1)).double()
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        result = dc.fit(
            net, rule, dc.methods.DeepCTRL(rho=1.0), train=train, max_epochs=2, compile=True
        )
    assert "could not be compiled" in caplog.text and result.epochs == [2]


def test_models_that_are_not_mlps_train_eagerly_with_a_note(caplog):
    class Custom(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = torch.nn.Linear(3, 1)

        def forward(self, x):
            return self.a(x) * 2.0

    train, _ = _problem()
    with caplog.at_level(logging.INFO, logger="deepctrl"):
        result = dc.fit(
            Custom().double(), None, dc.methods.TaskOnly(), train=train, max_epochs=1, compile=True
        )
    assert "only MLP-made models" in caplog.text and result.epochs == [1]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_compiled_training_matches_eager_training_on_cuda():
    kw = dict(max_epochs=3, patience=1, device="cuda")
    eager, compiled = _fit(False, **kw), _fit(True, **kw)
    _assert_same_training(eager, compiled, 1e-8)
