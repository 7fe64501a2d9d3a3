import math

import pytest
import torch
from sklearn.metrics import roc_auc_score

import deepctrl as dc
from deepctrl.core.metrics import auc, score
from deepctrl.core.rules import Monotonic, Penalty
from deepctrl.core.seeding import derive_seed


def model_and_data():
    torch.manual_seed(0)
    model = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 6, 1))
    X = torch.randn(40, 3)
    return model, X, X[:, :1] * 2.0


def test_sweep_equals_separate_evaluations():
    model, X, y = model_and_data()
    rule = Monotonic(0, "increasing", perturbation=dc.rules.Additive(0.5))
    alphas = [0.0, 0.3, 1.0, 1.4]
    table = dc.sweep(model, rule, X, y, alphas, metrics=("mae", "mse"))
    assert table["alpha"] == alphas
    for i, a in enumerate(alphas):
        y_hat = model(X, a).detach()
        assert table["mae"][i] == pytest.approx(float((y_hat - y).abs().mean()), rel=1e-5)
        assert table["mse"][i] == pytest.approx(float(((y_hat - y) ** 2).mean()), rel=1e-5)
        x_p = rule.perturb(X, torch.Generator().manual_seed(derive_seed(0, "eval")))
        expected = float((model(x_p, a) > model(X, a)).float().mean())
        assert table["verification_ratio"][i] == pytest.approx(expected)
        assert dc.verification_ratio(model, rule, X, a) == pytest.approx(expected)


def test_blocks_of_rows_join_to_the_whole_from_tensors_and_from_a_loader():
    from torch.utils.data import DataLoader, TensorDataset

    from deepctrl.core.sweep_outputs import JoinedRows, predict_sweep

    model, X, y = model_and_data()
    rule = Monotonic(0, "increasing", perturbation=dc.rules.Additive(0.5))
    alphas = [0.0, 0.5, 1.0]
    whole, ok = predict_sweep(model, rule, X, alphas, block_rows=40)
    parts, ok_parts = predict_sweep(model, rule, X, alphas, block_rows=7)  # 6 blocks, one of 5
    assert whole.shape == (3, 40, 1) and ok.shape == (3, 40)
    torch.testing.assert_close(parts, whole)
    torch.testing.assert_close(ok_parts, ok, equal_nan=True)
    streamed, _ = predict_sweep(model, None, DataLoader(TensorDataset(X, y), batch_size=9), alphas)
    torch.testing.assert_close(streamed, whole)
    # rows first, the number of rows unknown: the same rows in the same order
    known, unknown = JoinedRows(40), JoinedRows(None)
    for start in range(0, 40, 16):
        known.add(X[start : start + 16])
        unknown.add(X[start : start + 16])
    assert torch.equal(known.result(), X) and torch.equal(unknown.result(), X)


def test_each_rule_leaf_draws_its_own_stream_whatever_the_blocks():
    from torch.utils.data import DataLoader, TensorDataset

    from deepctrl.core.sweep_outputs import predict_sweep

    model, X, y = model_and_data()
    X = X.abs() + 0.1  # relative perturbations of positive values
    leaves = [
        Monotonic(0, "increasing", perturbation=dc.rules.Relative(0.3)),
        Monotonic(1, "decreasing", perturbation=dc.rules.Relative(0.3)),
    ]
    rule = dc.rules.AllOf(leaves)
    alphas = [0.0, 1.0]
    _, whole = predict_sweep(model, rule, X, alphas, block_rows=40)
    _, blocks = predict_sweep(model, rule, X, alphas, block_rows=7)
    _, streamed = predict_sweep(model, rule, DataLoader(TensorDataset(X, y), batch_size=9), alphas)
    assert torch.equal(blocks, whole) and torch.equal(streamed, whole)
    # leaf k's perturbations are the stream derive_seed(seed, "eval", k) drawn over all rows
    expected = torch.ones(2, 40)
    with torch.no_grad():
        for k, leaf in enumerate(leaves):
            x_p = leaf.perturb(X, torch.Generator().manual_seed(derive_seed(0, "eval", k)))
            for i, a in enumerate(alphas):
                ctx = dc.rules.Context(X, model(X, a), x_p, model(x_p, a))
                expected[i] *= leaf.satisfied(ctx).float()
    assert 0 < float(expected.mean()) < 1  # both outcomes occur, so the check can fail
    torch.testing.assert_close(whole, expected)


def test_a_sweep_runs_the_forward_it_is_given_on_tensors_and_on_a_loader():
    from torch.utils.data import DataLoader, TensorDataset

    model, X, y = model_and_data()
    other = dc.DeepCTRL(dc.mlp(3, 8, 4), dc.mlp(3, 8, 4), dc.mlp(8, 6, 1))
    pair = torch.nn.ModuleList([model, other])

    def mean(x, alphas):
        return (model.forward_alphas(x, alphas) + other.forward_alphas(x, alphas)) / 2

    rule = Monotonic(0, "increasing", perturbation=dc.rules.Additive(0.5))
    alphas = [0.0, 0.5, 1.0]
    y_hat, ok = dc.predict_sweep(pair, rule, X, alphas, forward=mean)
    alone = [dc.predict_sweep(m, None, X, alphas)[0] for m in (model, other)]
    torch.testing.assert_close(y_hat, (alone[0] + alone[1]) / 2)
    x_p = rule.perturb(X, torch.Generator().manual_seed(derive_seed(0, "eval")))
    for i, a in enumerate(alphas):
        both = [(model(z, a) + other(z, a)).detach() / 2 for z in (X, x_p)]
        assert float(ok[i].mean()) == pytest.approx(float((both[1] > both[0]).float().mean()))
    table = dc.sweep(pair, rule, X, y, alphas, metrics=("mae",), forward=mean)
    streamed = dc.sweep(
        pair,
        rule,
        DataLoader(TensorDataset(X, y), batch_size=16),
        None,
        alphas,
        metrics=("mae",),
        forward=mean,
    )
    assert streamed["verification_ratio"] == pytest.approx(table["verification_ratio"])
    assert streamed["mae"] == pytest.approx(table["mae"], rel=1e-6)
    assert table["mae"] != dc.sweep(model, rule, X, y, alphas, metrics=("mae",))["mae"]
    assert dc.verification_ratio(pair, rule, X, 0.5, forward=mean) == pytest.approx(
        table["verification_ratio"][1]
    )


def test_verification_ratio_counts_only_samples_the_rule_can_judge():
    model, X, _ = model_and_data()
    rule = dc.rules.Threshold(
        0, 0.5, output=0, direction="increasing", perturbation=dc.rules.Additive(1.0)
    )
    y_hat, ok = dc.predict_sweep(model, rule, X, [0.5])
    x_p = rule.perturb(X, torch.Generator().manual_seed(derive_seed(0, "eval")))
    crossing = (X[:, 0] < 0.5) & (x_p[:, 0] > 0.5)
    assert torch.equal(~torch.isnan(ok[0]), crossing)
    y_p = model(x_p, 0.5).detach()[:, 0]
    expected = float((y_p[crossing] > y_hat[0, crossing, 0]).float().mean())
    assert dc.verification_ratio(model, rule, X, 0.5) == pytest.approx(expected)


def test_a_model_without_alpha_repeats_its_values():
    torch.manual_seed(0)
    X = torch.randn(30, 2)
    table = dc.sweep(
        dc.mlp(2, 1), Penalty(lambda x, y: y[:, 0]), X, X[:, :1], [0.0, 0.5, 1.0], metrics=("mae",)
    )
    assert len(set(table["mae"])) == 1 and len(set(table["verification_ratio"])) == 1


def test_select_alpha():
    table = {
        "alpha": [0.0, 0.5, 1.0],
        "mae": [3.0, 1.0, 2.0],
        "accuracy": [0.6, 0.7, 0.9],
        "verification_ratio": [0.2, 0.91, 0.99],
    }
    assert dc.select_alpha(table, min_verification=0.9) == 0.5
    assert dc.select_alpha(table) == 0.5
    assert dc.select_alpha(table, metric="accuracy") == 1.0
    with pytest.raises(ValueError, match=r"highest 0.990 at alpha 1.0"):
        dc.select_alpha(table, min_verification=0.995)
    just_under = {**table, "verification_ratio": [0.2, 0.91, 95 / 96]}  # 0.98958
    with pytest.raises(ValueError, match=r"highest 0.9896 at alpha 1.0"):  # not 0.990
        dc.select_alpha(just_under, min_verification=0.99)
    # a metric with a goal: the best value among the alphas that reach it
    reached = {**table, "verification_ratio": [0.9, 0.95, 0.99]}
    assert dc.select_alpha(reached, min_verification=0.9) == 0.0
    assert dc.select_alpha(reached, min_verification=0.9, metric="mae") == 0.5
    assert dc.select_alpha(reached, min_verification=0.9, metric="accuracy") == 1.0
    assert dc.select_alpha(reached, min_verification=0.95, metric="mae") == 0.5
    with pytest.raises(ValueError, match="metric 'no_such' is not in the table"):
        dc.select_alpha(reached, min_verification=0.9, metric="no_such")
    tied = {"alpha": [1.0, 0.5, 0.0], "mae": [2.0, 1.0, 1.0], "verification_ratio": [1, 1, 1]}
    assert dc.select_alpha(tied) == 0.0  # the smallest on ties, as the estimators choose
    assert dc.select_alpha(tied, min_verification=0.9, metric="mae") == 0.0
    with pytest.raises(ValueError, match=r"no alpha has a value of mae \(every one is NaN\)"):
        dc.select_alpha({"alpha": [0.0, 1.0], "mae": [math.nan, math.nan]})


def test_classification_metrics_match_references():
    g = torch.Generator().manual_seed(1)
    p = torch.rand(300, 1, generator=g).round(decimals=1)  # many ties
    y = (torch.rand(300, 1, generator=g) < p).float()
    assert float(auc(p, y)) == pytest.approx(roc_auc_score(y.numpy(), p.numpy()), abs=1e-6)
    bce = torch.nn.functional.binary_cross_entropy(p.clamp(1e-6, 1 - 1e-6), y)
    assert float(score("bce", p.clamp(1e-6, 1 - 1e-6), y)) == pytest.approx(float(bce), rel=1e-5)
    assert float(score("accuracy", p, y)) == pytest.approx(
        float(((p > 0.5) == (y > 0.5)).float().mean())
    )
    assert math.isnan(float(auc(p, torch.ones_like(y))))
    logits = torch.tensor([[2.0, 0.0, 0.0], [0.0, 0.0, 3.0]])
    assert float(score("accuracy", logits, torch.tensor([0, 1]))) == 0.5
    with pytest.raises(ValueError, match="unknown metric"):
        score("r2", p, y)


def test_a_loader_of_inputs_alone_is_read_as_inputs():
    # TensorDataset(X) yields batches of one tensor: the inputs, with no targets
    from torch.utils.data import DataLoader, TensorDataset

    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    X = torch.randn(48, 2, generator=torch.Generator().manual_seed(0))
    rule = dc.Monotonic(0, "increasing")
    loader = DataLoader(TensorDataset(X), batch_size=48)
    assert dc.verification_ratio(model, rule, loader, alpha=0.3) == dc.verification_ratio(
        model, rule, X, alpha=0.3
    )
    weighted = DataLoader(TensorDataset(X, X[:, :1], torch.ones(48)), batch_size=16)
    with pytest.raises(ValueError, match=r"got batches of 3 parts: make its items \(x, y\)"):
        dc.fit(model, rule, train=weighted, max_epochs=1)
    records = [{"x": x, "y": x[:1]} for x in X]
    objective = dc.Objective(model, rule, seed=0)
    with pytest.raises(ValueError, match=r"batches of type dict \(keys 'x', 'y'\): make its"):
        objective.calibrate(DataLoader(records, batch_size=16))


def test_select_alpha_reads_a_filtered_data_frame_and_tensors_by_position():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame(
        {"alpha": [0.0, 0.5, 1.0], "mae": [3.0, 1.0, 2.0], "verification_ratio": [0.2, 0.8, 0.99]}
    )
    kept = frame[frame["alpha"] > 0]  # index 1, 2: position 0 is alpha 0.5
    assert dc.select_alpha(kept, min_verification=0.9) == 1.0
    assert dc.select_alpha(kept) == 0.5
    tensors = {k: torch.tensor(v.to_numpy()) for k, v in frame.items()}
    chosen = dc.select_alpha(tensors, min_verification=0.5, metric="mae")
    assert type(chosen) is float and chosen == 0.5


def test_select_alpha_names_what_is_wrong_with_a_table():
    table = {"alpha": [0.0, 1.0], "verification_ratio": [math.nan, 0.5]}
    with pytest.raises(ValueError, match=r"\(highest 0.500 at alpha 1.0\)"):
        dc.select_alpha(table, min_verification=0.9)
    with pytest.raises(ValueError, match="no alpha has a verification ratio"):
        dc.select_alpha({"alpha": [0.0], "verification_ratio": [math.nan]}, min_verification=0.9)
    with pytest.raises(ValueError, match="verification_ratio has 1 for 2 alphas"):
        dc.select_alpha({"alpha": [0.0, 1.0], "verification_ratio": [0.5]}, min_verification=0.1)


def test_a_sweep_under_mixed_precision_judges_the_models_own_outputs():
    class Shifted(torch.nn.Module):  # rises with x0 by a step bfloat16 cannot see at 100
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(2, 1)
            with torch.no_grad():
                self.linear.weight.copy_(torch.tensor([[1.0, 0.0]]))
                self.linear.bias.fill_(100.0)

        def forward(self, x, alpha=0.0):
            return self.linear(x)

    model = Shifted()
    rule = dc.rules.Monotonic(0, "increasing")
    X = torch.rand(256, 2, generator=torch.Generator().manual_seed(0)) + 1.0
    y = model(X).detach()
    outside = dc.sweep(model, rule, X, y, alphas=[0.0], metrics=("mae",))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        inside = dc.sweep(model, rule, X, y, alphas=[0.0], metrics=("mae",))
        ratio = dc.verification_ratio(model, rule, X)
    assert outside["verification_ratio"] == inside["verification_ratio"] == [1.0]
    assert ratio == 1.0 and inside["mae"] == outside["mae"] == [0.0]


def test_a_sweep_runs_a_wrapped_deepctrl_once_for_every_alpha_and_names_tuple_outputs():
    class Wrapper(torch.nn.DataParallel):  # DDP and torch.compile are looked through too
        calls = 0

        def forward(self, x, alpha=0.0):
            self.calls += 1
            return super().forward(x, alpha)

    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    X = torch.randn(32, 2, generator=torch.Generator().manual_seed(0))
    y = X[:, :1]
    rule = Monotonic(0, "increasing")
    wrapped = Wrapper(model)
    alphas = [0.0, 0.25, 0.5, 1.0]
    table = dc.sweep(wrapped, rule, X, y, alphas=alphas, metrics=("mae",))
    assert wrapped.calls == 0  # the encoders ran once, not once per alpha
    assert table == dc.sweep(model, rule, X, y, alphas=alphas, metrics=("mae",))

    class TwoHeads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, x, alpha=0.0):
            out = self.linear(x)
            return out[:, :1], out[:, 1:]

    with pytest.raises(ValueError, match="the model returned a tuple, where a sweep needs one"):
        dc.sweep(TwoHeads(), rule, X, y, alphas=[0.0, 1.0])


def test_a_verification_ratio_of_whole_counts_is_exact():
    # the rule holds on 95 of 100 rows: in float32 the share reads 0.94999999 < 0.95
    x = torch.cat([-torch.ones(95, 1), torch.ones(5, 1)])
    rule = Penalty(lambda x, y_hat: x[:, 0])  # holds where x0 < 0
    model = dc.DeepCTRL(dc.mlp(1, 4), dc.mlp(1, 4), dc.mlp(8, 1))
    table = dc.sweep(model, rule, x, torch.zeros(100, 1), alphas=[0.0, 1.0])
    assert table["verification_ratio"] == [0.95, 0.95]
    assert dc.select_alpha(table, min_verification=0.95) == 0.0
    assert dc.verification_ratio(model, rule, x) == 0.95
    est_like = float(torch.tensor([1.0] * 95 + [0.0] * 5).nanmean())
    assert est_like < 0.95  # what the float32 mean gave


def test_a_streamed_sweep_scores_auc_like_tensors_for_one_and_several_outputs():
    g = torch.Generator().manual_seed(0)
    X = torch.randn(200, 3, generator=g)
    labels = torch.randint(0, 3, (200,), generator=g)
    for outputs, y in ((1, (labels > 0).float()[:, None]), (3, labels)):
        torch.manual_seed(0)
        model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 8, outputs))
        rule = dc.rules.Monotonic(0, "increasing")
        whole = dc.sweep(model, rule, X, y, alphas=[0.0, 1.0], metrics=("auc",))
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=64)
        streamed = dc.sweep(model, rule, loader, alphas=[0.0, 1.0], metrics=("auc",))
        assert streamed["auc"] == whole["auc"]  # float64 both ways, not float32 through a loader
