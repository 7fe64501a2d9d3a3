"""Mistakes in the core API get one clear ValueError naming the problem."""

import warnings

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import deepctrl as dc


def data(n=64, outputs=1):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :outputs] * 2


def net(outputs=1, sigmoid=False):
    head = dc.mlp(16, 8, outputs, out_activation="sigmoid" if sigmoid else None)
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), head)


RULE = dc.rules.Monotonic(0, "increasing")


def one_line(excinfo):
    text = str(excinfo.value)
    assert "\n" not in text
    return text


@pytest.mark.skipif(torch.cuda.is_available(), reason="needs a machine without CUDA")
def test_unavailable_device():
    with pytest.raises(ValueError, match="'cuda' is not available") as e:
        dc.fit(net(), RULE, train=data(), device="cuda")
    one_line(e)
    with pytest.raises(ValueError, match="unknown device 'gpu'"):
        dc.fit(net(), RULE, train=data(), device="gpu")
    for other in ("meta", "xpu", "vulkan"):  # devices PyTorch names but nothing trains on
        with pytest.raises(ValueError, match=f"unknown device '{other}': use cpu, cuda"):
            dc.fit(net(), RULE, train=data(), device=other)


def test_target_and_output_shapes_that_do_not_match():
    X, y = data(outputs=2)
    with pytest.raises(
        ValueError,
        match=r"target has 2 values per row \(shape \(8, 2\)\) but "
        r"the model outputs 1",
    ) as e:
        dc.fit(net(), RULE, train=(X, y), task_loss="mse", max_epochs=1)
    one_line(e)
    loader = DataLoader(TensorDataset(X, y), batch_size=16)
    with pytest.raises(ValueError, match="target has 2 values per row"):
        dc.fit(net(), RULE, dc.methods.DeepCTRL(rho=1.0), train=loader, max_epochs=1)
    with pytest.raises(ValueError, match="target has 2 values per row"):
        dc.fit(net(), RULE, train=TensorDataset(X, y), max_epochs=1)


def test_probability_loss_on_outputs_outside_zero_one_says_what_to_change():
    X, y = data()
    labels = (y > 0).float()
    with pytest.raises(
        ValueError,
        match=r"needs probabilities in \[0, 1\].*out_activation="
        r"'sigmoid'",
    ) as e:
        dc.fit(net(), RULE, train=(X * 50, labels), task_loss="bce", max_epochs=1)
    one_line(e)
    with pytest.raises(ValueError, match=r"targets in \[0, 1\]"):
        dc.fit(net(sigmoid=True), RULE, train=(X, labels * 3), task_loss="bce", max_epochs=1)
    result = dc.fit(net(sigmoid=True), RULE, train=(X, labels), task_loss="bce", max_epochs=1)
    assert result.epochs == [1]


def test_class_labels_out_of_range():
    X, _ = data()
    labels = torch.arange(64) % 5
    with pytest.raises(
        ValueError,
        match=r"labels must be in 0\.\.2 for 3 model outputs, got "
        r"0\.\.4",
    ):
        dc.fit(net(outputs=3), RULE, train=(X, labels), task_loss="cross_entropy", max_epochs=1)
    with pytest.raises(
        ValueError,
        match=r"one integer class label per row, got float32 targets of 1 value\(s\) per row: "
        r"give labels 0, 1, ... as a long tensor \(y.long\(\)\)",
    ):
        dc.fit(
            net(outputs=3), RULE, train=(X, labels.float()), task_loss="cross_entropy", max_epochs=1
        )
    with pytest.raises(
        ValueError,
        match=r"class labels need a metric of classes \(mae and mse compare numbers\): "
        r"dc.sweep\(..., metrics=\('cross_entropy', 'accuracy'\)\)",
    ):
        dc.sweep(net(outputs=3), RULE, X, labels % 3, alphas=[0.0])  # mae by default


def test_rule_feature_that_does_not_exist():
    with pytest.raises(ValueError, match="feature index 7 is out of range for 3 input features"):
        dc.fit(net(), dc.rules.Monotonic(7, "increasing"), train=data(), max_epochs=1)
    with pytest.raises(ValueError, match="is a column name"):
        dc.fit(net(), dc.rules.Monotonic("price", "increasing"), train=data(), max_epochs=1)


def test_model_without_parameters():
    with pytest.raises(ValueError, match="no parameters"):
        dc.fit(torch.nn.Identity(), None, dc.methods.TaskOnly(), train=data())


def test_alphas_that_are_not_numbers_or_do_not_fit_the_batch():
    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    x = torch.randn(7, 2)
    rule = dc.Monotonic(0, "increasing")
    with pytest.raises(ValueError, match="alpha must be a finite number, got nan"):
        model(x, float("nan"))
    with pytest.raises(ValueError, match="alpha has 3 values for a batch of 7 rows"):
        model(x, torch.full((3,), 0.5))
    assert model(x, torch.full((1,), 0.5)).shape == (7, 1)  # one alpha for every row
    for text in ("0.5", None):
        with pytest.raises(TypeError, match="alpha must be a number, or a tensor of one per"):
            model(x, text)
    with pytest.raises(ValueError, match="alphas must be finite numbers, got nan"):
        dc.sweep(model, rule, x, x[:, :1], alphas=[0.0, float("nan")])
    with pytest.raises(ValueError, match="alpha must be finite, got inf"):
        dc.verification_ratio(model, rule, x, alpha=float("inf"))


def test_sweep_alphas_that_are_text_none_or_booleans_are_refused_naming_alphas():
    model = net()
    X, y = data(8)
    for bad, shown in ((["a"], "'a'"), ([None], "None"), ([True, False], "True")):
        with pytest.raises(ValueError, match=f"^alphas must be finite numbers, got {shown}$"):
            dc.sweep(model, RULE, X, y, alphas=bad)
    with pytest.raises(ValueError, match=r"^alphas must be finite numbers, got '0\.5x'$"):
        dc.predict_sweep(model, RULE, X, ["0.5x"])
    with pytest.raises(ValueError, match="^alphas must be finite numbers, got True$"):
        dc.sweep(model, RULE, X, y, alphas=torch.tensor([True]))
    table = dc.sweep(model, RULE, X, y, alphas=[torch.tensor(0.5), np.array(0.25), np.array([1])])
    assert table["alpha"] == [0.5, 0.25, 1.0]
    with pytest.raises(
        ValueError, match=r"^alphas must be finite numbers, got array\(\[ True\]\)$"
    ):
        dc.sweep(model, RULE, X, y, alphas=[np.array([True])])


def test_a_perturbation_of_the_wrong_shape_is_refused_by_the_sweep_too():
    class Widening(dc.rules.Monotonic):
        def perturb(self, x, generator=None):
            return torch.cat([x, x], dim=1)

    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    x = torch.randn(7, 2)
    with pytest.raises(ValueError, match="Widening.perturb returned .* a perturbed input has"):
        dc.sweep(model, Widening(0, "increasing"), x, x[:, :1], alphas=[0.0])


def test_a_task_loss_that_returns_one_number_is_refused_before_training():
    X, y = data()
    with pytest.raises(ValueError, match=r"the task loss gave \(\) for 64 samples: it must"):
        dc.fit(
            net(), RULE, train=(X, y), max_epochs=1, task_loss=lambda a, b: ((a - b) ** 2).mean()
        )


@pytest.mark.parametrize("seeds", [[0], [0, 1]])
def test_a_model_that_returns_a_tuple_is_refused_by_fit(seeds):
    class TwoHeads(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 1), torch.nn.Linear(3, 1)

        def forward(self, x, alpha=0.0):
            return self.a(x), self.b(x)

    X, y = data()
    with pytest.raises(ValueError, match="the model returned a tuple, where training needs one"):
        dc.fit(TwoHeads(), RULE, train=(X, y), max_epochs=1, seeds=seeds)


def test_a_method_class_and_numpy_batches_are_named():
    X, y = data()
    with pytest.raises(
        ValueError, match=r"method must be a method object, dc.methods.DeepCTRL\(\), not the class"
    ):
        dc.fit(net(), RULE, train=(X, y), method=dc.methods.DeepCTRL, max_epochs=1)
    with pytest.raises(ValueError, match="method must be a method object"):
        dc.Objective(net(), RULE, dc.methods.DeepCTRL, seed=0)
    objective = dc.Objective(net(), RULE, seed=0)
    with pytest.raises(ValueError, match="an Objective takes torch tensors .* got ndarray"):
        objective(X.numpy(), y.numpy())


def test_a_batch_or_a_model_on_the_meta_device_is_named():
    with torch.device("meta"):
        model = net()
    objective = dc.Objective(model, RULE, seed=0)
    X, y = data()
    with pytest.raises(ValueError, match="the batch is on the meta device") as e:
        objective(X.to("meta"), y.to("meta"))
    one_line(e)
    for call in (
        lambda: objective(X, y),
        lambda: dc.fit(model, RULE, train=(X, y), max_epochs=1),
        lambda: dc.sweep(model, RULE, X, y, alphas=[0.0]),
    ):
        with pytest.raises(ValueError, match="the model's weights are on the meta device") as e:
            call()
        one_line(e)


def test_a_drawn_alpha_is_the_float_the_output_reports():
    objective = dc.Objective(net(), RULE, seed=3)
    X, y = data()
    out = objective(X, y)
    assert out.terms.alpha.shape == (1,) and out.alpha == float(out.terms.alpha[0])
    assert objective(X, y, alpha=0.25).alpha == 0.25


def test_per_row_alphas_may_be_a_list_or_an_array():
    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    x = torch.randn(3, 2)
    rows = torch.tensor([0.0, 0.5, 1.0])
    for given in ([0.0, 0.5, 1.0], rows.numpy()):
        torch.testing.assert_close(model(x, given), model(x, rows))
    with pytest.raises(ValueError, match="alpha must be a finite number, got inf"):
        model(x, float("inf"))
    with pytest.raises(ValueError, match=r"alpha 1e\+39 is beyond the range of .*float32"):
        model(x, 1e39)  # finite as a Python float, infinite in the model's float32
    assert torch.isfinite(model.double()(x.double(), 1e39)).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy's overflow warning of a float32 comparison
        model(x.double(), np.float32(0.5))


def test_a_negative_rule_loss_is_refused_where_rho_is_measured():
    class BelowCap(dc.rules.Rule):  # loss y_hat - 5: negative where the rule holds
        def loss(self, ctx):
            return ctx.y_hat[:, 0] - 5.0

        def satisfied(self, ctx):
            return ctx.y_hat[:, 0] <= 5.0

    X, y = data()
    with pytest.raises(ValueError) as caught:
        dc.fit(net(), BelowCap(), train=(X, y), max_epochs=1, progress=False)
    assert one_line(caught).startswith("BelowCap.loss gave a negative value on 64 of 64 rows")
    assert one_line(caught).endswith("a rule's loss must be >= 0, and 0 where the rule holds")
    objective = dc.Objective(net(), BelowCap(), seed=0)
    with pytest.raises(ValueError, match="BelowCap.loss gave a negative value on 64 of 64"):
        objective(X, y)
    with pytest.raises(ValueError, match="negative value on 64 of 64 rows"):  # not 192
        dc.fit(net(), BelowCap(), train=(X, y), max_epochs=1, seeds=[0, 1, 2])


def test_rule_arguments_of_the_wrong_kind_are_one_clear_error():
    m = dc.rules.Monotonic(0, "increasing")
    for call, message in [
        (lambda: dc.rules.AllOf(m), "AllOf takes a list of rules, got Monotonic"),
        (lambda: dc.rules.AllOf(r for r in [m]), "AllOf takes a list of rules, got generator"),
        (lambda: dc.rules.AllOf([m], 1.0), "AllOf's weights must be a list, one per rule"),
        (lambda: dc.rules.Penalty(abs, strict="no"), "strict must be True or False, got 'no'"),
    ]:
        with pytest.raises(ValueError, match=message):
            call()
    assert dc.rules.AllOf((m, m), np.array([1.0, 2.0])).weights == [1.0, 2.0]
    assert dc.rules.Penalty(abs, strict=np.bool_(True)).strict is True


def test_a_perturbation_that_lowers_the_value_is_refused():
    class Down(dc.rules.Perturbation):
        def delta(self, values, generator):
            return torch.full_like(values, -0.5)

    X, _ = data()
    rule = dc.rules.Monotonic(0, "increasing", perturbation=Down())
    with pytest.raises(ValueError, match=r"Down.delta returned a negative shift \(-0.5\)"):
        dc.verification_ratio(net(), rule, X, alpha=0.0)


def test_alphas_goals_and_configs_that_are_the_wrong_kind_are_named():
    X, y = data()
    model = net()
    with pytest.raises(ValueError, match=r"alphas must be a sequence of numbers, got 0.5: for"):
        dc.sweep(model, RULE, X, y, alphas=0.5)
    table = dc.sweep(model, RULE, X, y, alphas=torch.tensor([0.0, 1.0]))
    assert table["alpha"] == [0.0, 1.0] or list(table["alpha"]) == [0.0, 1.0]
    with pytest.raises(ValueError, match=r"in \(0, 1\], got 95 \(for 95 %, give 0.95\)"):
        dc.select_alpha(table, min_verification=95)
    with pytest.raises(ValueError, match="alpha must be a number, got None"):
        dc.verification_ratio(model, RULE, X, alpha=None)
    with pytest.raises(ValueError, match=r"a Tensor of shape \(1,\) is not a number"):
        dc.save(model, "unused.safetensors", {"a": torch.ones(1)})


def test_shapes_that_would_broadcast_are_named():
    with pytest.raises(ValueError, match=r"output needs the input's shape: got \(1,\) per row"):
        dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1), residual=True)(torch.randn(4, 3))
    with pytest.raises(ValueError, match=r"got \(1,\) per row for inputs of \(3,\)"):
        dc.Residual(dc.mlp(3, 1))(torch.randn(4, 3))
    with pytest.raises(ValueError, match="rule encoder gives 8, the data encoder 6"):
        dc.DeepCTRL(dc.mlp(3, 6), dc.mlp(3, 8), dc.mlp(8, 1), merge="add")(torch.randn(4, 3))
    penalty = dc.rules.Penalty(lambda x, y: 0.5)
    with pytest.raises(ValueError, match="Penalty fn must return a tensor .* got float"):
        dc.sweep(net(), penalty, *data(), alphas=[0.0])


def test_select_alpha_names_columns_it_cannot_minimise_and_empty_tables():
    table = {"alpha": [0.0, 1.0], "mae": [2.0, 1.0], "verification_ratio": [0.1, 0.9]}
    with pytest.raises(ValueError, match="'verification_ratio' is not an error to minimise"):
        dc.select_alpha(table, metric="verification_ratio")
    with pytest.raises(ValueError, match="objective must be 'min_error'"):
        dc.select_alpha(table, min_verification=0.5, objective="max_accuracy")
    with pytest.raises(ValueError, match="min_verification must be a number, got True"):
        dc.select_alpha(table, min_verification=True)
    with pytest.raises(ValueError, match="the table has no alphas"):
        dc.select_alpha({"alpha": [], "mae": []})
    assert dc.sweep(net(), None, *data(), alphas=[0.0], metrics="mse").keys() == {"alpha", "mse"}


def test_a_recurrent_encoder_that_returns_a_tuple_is_one_clear_error():
    model = dc.DeepCTRL(
        nn.GRU(4, 3, batch_first=True), nn.GRU(4, 3, batch_first=True), dc.mlp(6, 1)
    )
    with pytest.raises(
        ValueError,
        match=r"the rule encoder returned a tuple, where DeepCTRL needs one tensor .* out\[:, -1\]",
    ):
        model(torch.randn(2, 5, 4), 0.5)
    with pytest.raises(ValueError, match="the rule encoder returned a tuple"):
        dc.fit(
            model,
            dc.rules.Monotonic(1, "increasing"),
            train=(torch.randn(20, 5, 4), torch.randn(20, 1)),
            max_epochs=1,
        )


class ScalarSatisfied(dc.rules.Rule):
    def loss(self, ctx):
        return torch.relu(ctx.y_hat[:, 0])

    def satisfied(self, ctx):
        return (ctx.y_hat <= 0).any()


def test_satisfied_of_the_wrong_shape_or_type_is_one_clear_error():
    model = dc.DeepCTRL(dc.mlp(3, 4), dc.mlp(3, 4), dc.mlp(8, 1))
    x, y = torch.randn(8, 3), torch.randn(8, 1)
    message = (
        r"ScalarSatisfied.satisfied gave bool of shape \(\) for 8 samples: it must return one "
        "bool per sample"
    )
    with pytest.raises(ValueError, match=message):
        dc.Objective(model, ScalarSatisfied(), dc.methods.DeepCTRL(rho=1.0))(x, y)
    with pytest.raises(
        ValueError, match=r"ScalarSatisfied.satisfied gave bool of shape \(\) for 16 samples"
    ):
        dc.sweep(model, ScalarSatisfied(), x, y, alphas=[0.0, 1.0])

    class FloatSatisfied(ScalarSatisfied):
        def satisfied(self, ctx):
            return (ctx.y_hat[:, 0] <= 0).float()

    with pytest.raises(ValueError, match=r"FloatSatisfied.satisfied gave float32 of shape \(8,\)"):
        dc.verification_ratio(model, FloatSatisfied(), x)


def test_a_dict_batch_with_inputs_of_other_lengths_is_one_clear_error():
    class Enc(nn.Module):
        def __init__(self):
            super().__init__()
            self.l = nn.Linear(5, 4)

        def forward(self, d):
            return self.l(torch.cat([d["num"], d["b"]], -1))

    model = dc.DeepCTRL(Enc(), Enc(), dc.mlp(8, 1))
    obj = dc.Objective(
        model, dc.rules.Monotonic(1, "decreasing", input="num"), dc.methods.DeepCTRL(rho=1.0)
    )
    with pytest.raises(
        ValueError,
        match=r"the inputs of the batch have different numbers of rows: \{'num': 7, 'b': 5\}",
    ):
        obj({"num": torch.randn(7, 4), "b": torch.randn(5, 1)}, torch.randn(7, 1))


def test_seeds_are_whole_and_never_negative():
    X, y = data()
    result = dc.fit(net(), RULE, train=(X, y), max_epochs=1, seeds=[0, 2**32], progress=False)
    first, second = (list(m.state_dict().values()) for m in result.models)
    assert not all(torch.equal(a, b) for a, b in zip(first, second, strict=True))
    with pytest.raises(ValueError, match=r"seeds must be integers >= 0, got \[0, -1\]"):
        dc.fit(net(), RULE, train=(X, y), max_epochs=1, seeds=[0, -1])
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -3"):
        dc.Objective(net(), RULE, seed=-3)
    with pytest.raises(ValueError, match="seed must be an integer >= 0, got -2"):
        dc.sweep(net(), RULE, X, y, seed=-2)


def test_an_alpha_of_many_values_is_named_by_its_shape_in_one_line():
    model = dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))
    x = torch.randn(64, 3)
    with pytest.raises(ValueError, match=r"^alpha must be one number, got a tensor of shape \(64"):
        dc.verification_ratio(model, dc.Monotonic(0, "increasing"), x, alpha=torch.rand(64))
