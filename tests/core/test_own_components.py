"""Rules, methods and priors of one's own that break their contract get one ValueError
naming them, in `dc.fit` and in `dc.Objective` alike; NaN outputs are not judged."""

import math
import warnings

import pytest
import torch

import deepctrl as dc


def data(n=64):
    g = torch.Generator().manual_seed(0)
    X = torch.randn(n, 3, generator=g)
    return X, X[:, :1] * 2


def net():
    return dc.DeepCTRL(dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1))


class Rises(dc.rules.Rule):
    """Output 0 does not fall when feature 0 rises by U[0, 0.3]."""

    def perturb(self, x, generator=None):
        xp = x.clone()
        xp[:, 0] += 0.3 * torch.rand(x.shape[0], generator=generator, dtype=x.dtype)
        return xp

    def diff(self, ctx):
        return ctx.y_hat_p[:, 0] - ctx.y_hat[:, 0]

    def loss(self, ctx):
        return torch.relu(-self.diff(ctx))

    def satisfied(self, ctx):
        return self.diff(ctx) >= 0


def one_line(excinfo):
    text = str(excinfo.value)
    assert "\n" not in text
    return text


def fit(rule, method, **kw):
    return dc.fit(net(), rule, method, train=data(), max_epochs=1, **kw)


def step(rule, method):
    return dc.Objective(net(), rule, method)(*data(32))


# -- a negative rule loss, where rho is measured ---------------------------------------
class Negative(Rises):
    def loss(self, ctx):
        return -super().loss(ctx) - 0.1


@pytest.mark.parametrize("rho", ["auto", "paper"])
def test_a_negative_loss_of_a_perturbation_rule_is_refused_where_rho_is_measured(rho):
    with pytest.raises(ValueError, match="Negative.loss gave a negative value") as e:
        fit(Negative(), dc.methods.DeepCTRL(rho=rho))
    one_line(e)
    with pytest.raises(ValueError, match="Negative.loss gave a negative value"):
        dc.Objective(net(), Negative(), dc.methods.DeepCTRL(rho=rho)).calibrate(data())
    with pytest.raises(ValueError, match="Negative.loss gave a negative value"):
        step(Negative(), dc.methods.DeepCTRL(rho=rho))


# -- alphas a method draws itself --------------------------------------------------------
class Wide(dc.methods.LinearMethod):
    draws_alpha = True

    def __init__(self, draw):
        self.draw = draw

    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(1 - alpha, alpha, 0.0)

    def draw_alphas(self, n, state):
        return self.draw(len(state), n)


@pytest.mark.parametrize(
    ("draw", "message"),
    [
        (
            lambda s, n: torch.full((s, n), 2.5),
            r"Wide.draw_alphas drew alpha 2.5, outside \[0, 1\]",
        ),
        (lambda s, n: torch.full((s, n), math.nan), "Wide.draw_alphas drew alpha nan"),
        (lambda s, n: torch.full((n,), 0.5), r"Wide.draw_alphas\(\d+\) returned \(\d+,\)"),
    ],
)
def test_alphas_a_method_draws_are_checked(draw, message):
    with pytest.raises(ValueError, match=message) as e:
        fit(Rises(), Wide(draw))
    one_line(e)
    with pytest.raises(ValueError, match=message):
        step(Rises(), Wide(draw))


def test_alphas_a_method_draws_are_checked_in_a_stack_of_methods():
    bad = Wide(lambda s, n: torch.full((s, n), 2.5))
    with pytest.raises(ValueError, match="Wide.draw_alphas drew alpha 2.5"):
        dc.fit_methods(
            net(), Rises(), [dc.methods.DeepCTRL(rho=1.0), bad], train=data(), max_epochs=1
        )


# -- a rule loss without a gradient ---------------------------------------------------
class Bool(Rises):
    def loss(self, ctx):
        return super().loss(ctx) > 0


class Count(Rises):
    def loss(self, ctx):
        return (super().loss(ctx) > 0).long()


class Detached(Rises):
    def loss(self, ctx):
        return super().loss(ctx).detach()


@pytest.mark.parametrize(
    ("rule", "kind"), [(Bool, "bool"), (Count, "int64"), (Detached, "float32")]
)
def test_a_rule_loss_without_a_gradient_is_refused(rule, kind):
    message = f"{rule.__name__}.loss returned a {kind} tensor without a gradient"
    with pytest.raises(ValueError, match=message) as e:
        fit(rule(), dc.methods.DeepCTRL(rho=1.0))
    one_line(e)
    with pytest.raises(ValueError, match=message):
        fit(rule(), dc.methods.TaskAndRule(1.0), compile=True)
    with pytest.raises(ValueError, match=message):
        step(rule(), dc.methods.DeepCTRL(rho=1.0))


def test_an_evaluation_call_first_neither_skips_the_check_nor_sets_rho():
    """A validation step under torch.no_grad before training (Lightning's sanity check)
    leaves the gradient check and the measure of rho to the first training call."""
    with pytest.raises(ValueError, match="Detached.loss returned a float32 tensor without"):
        objective = dc.Objective(net(), Detached(), dc.methods.DeepCTRL(rho=1.0))
        with torch.no_grad():
            objective(*data(16), alpha=0.0)
        objective(*data(32))
    X, y = data(64)
    torch.manual_seed(0)
    fresh = dc.Objective(net(), Rises(), dc.methods.DeepCTRL())
    fresh(X[:32], y[:32])
    torch.manual_seed(0)
    checked = dc.Objective(net(), Rises(), dc.methods.DeepCTRL())
    with torch.no_grad():  # one rho for every evaluation: loss = rho * task at alpha 0
        first = checked(X[32:], 100 * y[32:], alpha=0.0)
        second = checked(X[40:], y[40:], alpha=0.0)
    assert float(first.loss / first.task) == pytest.approx(float(second.loss / second.task))
    assert checked.state is None
    checked(X[:32], y[:32])
    assert checked.rho == fresh.rho and 0 < fresh.rho < 1


# -- NaN in training and in the verification ratio ---------------------------------------
class SqrtTrap(Rises):
    """The torch.where(sqrt) trap: a finite loss whose gradient is NaN on every row (the
    branch not taken takes the square root of a negative number)."""

    def loss(self, ctx):
        d = self.diff(ctx)
        return torch.where(d < 0, (-d).sqrt(), 0 * d.sqrt())


def test_a_training_loss_gone_nan_is_named_without_validation():
    with pytest.warns(
        RuntimeWarning,
        match=r"training loss went NaN or infinite \(seed 0 at "
        r"epoch 2\)",
    ) as record:
        result = dc.fit(net(), SqrtTrap(), dc.methods.DeepCTRL(rho=1.0), train=data(), max_epochs=2)
    assert math.isnan(result.history[0]["train_loss"][1])
    assert all("\n" not in str(w.message) for w in record)


def test_a_bce_loss_gone_nan_is_warned_about_as_the_others_are():
    """torch's binary cross entropy raises on a NaN probability; the objective gives NaN,
    as for mse, so that dc.fit warns and sweep reports NaN instead of blaming a sigmoid."""
    X, y = data()
    labels = (y > 0).float()
    sigmoid = lambda: dc.DeepCTRL(  # noqa: E731
        dc.mlp(3, 8), dc.mlp(3, 8), dc.mlp(16, 1, out_activation="sigmoid")
    )
    with pytest.warns(RuntimeWarning, match=r"training loss went NaN or infinite \(seed 0 at "):
        result = dc.fit(
            sigmoid(),
            SqrtTrap(),
            dc.methods.DeepCTRL(rho=1.0),
            train=(X, labels),
            task_loss="bce",
            max_epochs=2,
        )
    assert math.isnan(result.history[0]["train_loss"][1])
    holed = X.clone()
    holed[0, 1] = math.nan  # a batch with NaN in it: a NaN loss, for bce too
    out = dc.Objective(sigmoid(), Rises(), dc.methods.DeepCTRL(rho=1.0), task_loss="bce")(
        holed, labels
    )
    assert math.isnan(float(out.task))
    with pytest.raises(ValueError, match="end the decision block with a sigmoid"):
        dc.Objective(net(), Rises(), dc.methods.DeepCTRL(rho=1.0), task_loss="bce")(X, labels)
    with pytest.raises(ValueError, match=r"^task loss 'bce' needs targets in \[0, 1\], got -"):
        dc.sweep(sigmoid(), None, X, y, [0.0], metrics=("bce",))  # probabilities, but y is not


def test_a_training_loss_gone_nan_is_named_as_the_cause_with_validation():
    with pytest.warns(
        RuntimeWarning,
        match=r"never reached a finite validation loss \(the "
        r"training loss went NaN or infinite \(seed 0 at epoch 2\)",
    ):
        dc.fit(
            net(),
            SqrtTrap(),
            dc.methods.DeepCTRL(rho=1.0),
            train=data(),
            val=data(16),
            max_epochs=3,
            patience=2,
        )


def test_a_finite_training_loss_warns_nothing():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit(Rises(), dc.methods.DeepCTRL(rho=1.0))


class Halves(torch.nn.Module):
    """NaN outputs on the rows whose feature 1 is negative."""

    def forward(self, x, alpha=0.0):
        return torch.where(x[:, 1:2] < 0, math.nan, x[:, :1])


def test_rows_with_nan_outputs_are_not_judged():
    X, y = data()
    finite = X[:, 1] >= 0
    table = dc.sweep(Halves(), Rises(), X, y, alphas=[0.0])
    # the model rises with feature 0 wherever it is finite: every judged row holds
    assert table["verification_ratio"] == [1.0]
    assert dc.verification_ratio(Halves(), Rises(), X[finite]) == 1.0


def test_a_model_of_nan_outputs_has_no_verification_ratio():
    class Nan(torch.nn.Module):
        def forward(self, x, alpha=0.0):
            return torch.full((x.shape[0], 1), math.nan)

    X, y = data()
    assert math.isnan(dc.verification_ratio(Nan(), Rises(), X))
    assert math.isnan(dc.sweep(Nan(), Rises(), X, y, alphas=[0.0, 1.0])["verification_ratio"][1])
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(X, y), batch_size=16)
    assert math.isnan(dc.sweep(Nan(), Rises(), loader, alphas=[0.0])["verification_ratio"][0])


# -- unclear errors --------------------------------------------------------------------
def test_an_objective_whose_model_cannot_take_the_rows_says_so():
    y = data(16)[1]
    for method in (dc.methods.DeepCTRL(rho=1.0), dc.methods.DeepCTRL()):
        with pytest.raises(
            ValueError,
            match=r"the model cannot take the given rows \(shape and "
            r"dtype of one row: \(\(4,\), 'torch.float32'\)\)",
        ) as e:
            dc.Objective(net(), Rises(), method)(torch.randn(16, 4), y)
        one_line(e)


def test_an_objective_names_a_decision_block_of_the_wrong_width():
    model = dc.DeepCTRL(dc.mlp(3, 16), dc.mlp(3, 16), dc.mlp(30, 1))
    with pytest.raises(ValueError, match="the decision block takes 30 features") as e:
        dc.Objective(model, Rises(), dc.methods.DeepCTRL(rho=1.0))(*data(16))
    one_line(e)


@pytest.mark.parametrize(
    ("args", "got"),
    [
        ((dc.methods.DeepCTRL(), Rises()), "Rises"),
        ((Rises(), dc.priors.Uniform()), "Uniform"),
    ],
)
def test_a_method_out_of_place_names_the_order(args, got):
    order = r"the order is fit\(model, rule, method, \.\.\.\)"
    with pytest.raises(ValueError, match=f"got {got}: {order}") as e:
        dc.fit(net(), *args, train=data(), max_epochs=1)
    one_line(e)
    with pytest.raises(ValueError, match=f"got {got}: the order is Objective"):
        dc.Objective(net(), *args)
    with pytest.raises(ValueError, match=f"got {got}: {order}"):
        dc.fit_methods(net(), args[0], [args[1]], train=data(), max_epochs=1)


class Wider(Rises):
    def perturb(self, x, generator=None):
        return super().perturb(x, generator).double()


def test_a_perturbation_of_another_dtype_is_refused():
    message = r"Wider.perturb returned float64 for inputs of float32: .* dtype of x"
    with pytest.raises(ValueError, match=message) as e:
        fit(Wider(), dc.methods.DeepCTRL(rho=1.0))
    one_line(e)
    with pytest.raises(ValueError, match=message):
        step(Wider(), dc.methods.DeepCTRL(rho=1.0))
    with pytest.raises(ValueError, match=message):
        dc.sweep(net(), Wider(), *data(), alphas=[0.0])


class Scalar(dc.methods.Method):
    def objective(self, t, state):
        return (t.task + t.rule).sum()


class Column(dc.methods.Method):
    def objective(self, t, state):
        return (t.task + t.rule)[:, None]


class FiveSeeds(dc.methods.LinearMethod):
    def coefficients(self, alpha, state):
        return dc.methods.Coefficients(torch.ones(5), 1.0, 0.0)


@pytest.mark.parametrize(
    ("method", "message"),
    [
        (Scalar(), r"Scalar.objective returned \(\) for 1 seed\(s\): .* shape \(1,\)"),
        (Column(), r"Column.objective returned \(1, 1\) for 1 seed\(s\)"),
        (FiveSeeds(), r"FiveSeeds.coefficients gave task of shape \(5,\) for 1 seed\(s\)"),
    ],
)
def test_a_method_of_the_wrong_shape_is_refused_in_fit_and_objective(method, message):
    with pytest.raises(ValueError, match=message) as e:
        fit(Rises(), method)
    one_line(e)
    with pytest.raises(ValueError, match=message):
        step(Rises(), method)


def test_a_prior_that_skipped_its_base_init_says_so():
    class NoSuper(dc.priors.Prior):
        def __init__(self, a=0.5):
            self.a = a

        def sample(self, n, dtype=torch.float32):
            return torch.full((n,), self.a)

        def params(self):
            return {"a": self.a}

    message = r"NoSuper.__init__ must call super\(\).__init__\(seed\)"
    with pytest.raises(ValueError, match=message) as e:
        fit(Rises(), dc.methods.DeepCTRL(NoSuper(), rho=1.0))
    one_line(e)
    with pytest.raises(ValueError, match=message):
        step(Rises(), dc.methods.DeepCTRL(NoSuper(), rho=1.0))
