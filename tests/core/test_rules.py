import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import deepctrl as dc
from deepctrl.core.rules import (
    Additive,
    AllOf,
    Context,
    Monotonic,
    Penalty,
    Relative,
    Standardized,
    Threshold,
    rule_from_config,
)
from deepctrl.core.rules.base import violation_of


def test_penalty_loss_and_satisfaction_by_hand():
    rule = Penalty(lambda x, y: y[:, 0] - x[:, 0], tau=0.5)
    ctx = Context(torch.tensor([[1.0], [1.0], [1.0]]), torch.tensor([[3.0], [1.5], [0.0]]))
    assert rule.loss(ctx).tolist() == [1.5, 0.0, 0.0]
    assert rule.satisfied(ctx).tolist() == [False, True, True]
    strict = Penalty(lambda x, y: y[:, 0] - x[:, 0], tau=0.5, strict=True)
    assert strict.satisfied(ctx).tolist() == [False, False, True]


def test_penalty_gradient_in_float64():
    x = torch.randn(6, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    energy = lambda s: 0.5 * (s**2).sum(dim=1)  # noqa: E731
    rule = Penalty(lambda x, y: energy(y) - energy(x))
    # |y| > |x| in every coordinate, so every sample violates: relu is smooth here
    y = (x * 1.3 + 0.05 * x.sign()).requires_grad_(True)
    assert torch.autograd.gradcheck(lambda y: rule.loss(Context(x, y)), (y,))
    assert torch.allclose(torch.autograd.grad(rule.loss(Context(x, y)).sum(), y)[0], y)


def test_a_violation_is_computed_once_per_context_and_grad_mode():
    calls = []
    rule = Penalty(lambda x, y: calls.append(1) or (y - x)[:, 0])
    y = torch.tensor([[2.0], [0.0]], requires_grad=True)
    ctx = Context(torch.ones(2, 1), y)
    with torch.no_grad():
        assert rule.satisfied(ctx).tolist() == [False, True]
    loss = rule.loss(ctx)  # not the no-grad value: the loss must reach y
    assert violation_of(rule, ctx) is violation_of(rule, ctx) and len(calls) == 2
    (loss.sum() + violation_of(rule, ctx).sum()).backward()
    assert y.grad.flatten().tolist() == [2.0, 1.0]  # relu' + 1, then 0 + 1


def test_penalty_rejects_a_function_returning_the_wrong_shape():
    rule = Penalty(lambda x, y: y)
    with pytest.raises(ValueError, match="one value per sample"):
        rule.loss(Context(torch.ones(3, 2), torch.ones(3, 2)))


def test_monotonic_losses_by_hand():
    x = torch.tensor([[1.0, 5.0], [2.0, 5.0]])
    ctx = Context(x, torch.tensor([[2.0], [2.0]]), x + 0.1, torch.tensor([[1.5], [2.5]]))
    inc, dec = Monotonic(0, "increasing"), Monotonic(0, "decreasing")
    assert inc.loss(ctx).tolist() == [0.5, 0.0] and inc.satisfied(ctx).tolist() == [False, True]
    assert dec.loss(ctx).tolist() == [0.0, 0.5] and dec.satisfied(ctx).tolist() == [True, False]
    assert inc.violation(ctx).tolist() == [0.5, -0.5]


def test_monotonic_counts_an_unchanged_output_as_a_violation():
    x = torch.zeros(1, 1)
    ctx = Context(x, torch.ones(1, 1), x + 0.1, torch.ones(1, 1))
    assert not Monotonic(0, "increasing").satisfied(ctx).item()


def test_monotonic_does_not_judge_a_feature_the_perturbation_left_in_place():
    # a relative shift leaves 0 at 0: the outputs cannot differ, so the row is not judged
    rule = Monotonic(0, "increasing")
    x = torch.tensor([[0.0, 1.0], [2.0, 1.0]])
    ctx = Context(x, torch.ones(2, 1), rule.perturb(x), torch.tensor([[1.0], [1.5]]))
    assert rule.applicable(ctx).tolist() == [False, True]
    assert rule.satisfied(ctx).tolist() == [True, True]
    # a model rising with x0, a tenth of whose rows sit at 0: every judged row is kept
    model = torch.nn.Linear(2, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[1.0, 0.0]]))
    X = torch.rand(100, 2, generator=torch.Generator().manual_seed(0)) + 0.5
    X[::10, 0] = 0.0
    assert dc.verification_ratio(model, rule, X) == 1.0


def test_threshold_only_judges_pairs_that_cross():
    rule = Threshold(0, 1.0, output=1, direction="increasing")
    x = torch.tensor([[0.95], [0.5], [1.2]])
    x_p = torch.tensor([[1.05], [0.55], [1.3]])
    y = torch.tensor([[0.0, 0.6], [0.0, 0.6], [0.0, 0.6]])
    y_p = torch.tensor([[0.0, 0.4], [0.0, 0.1], [0.0, 0.1]])
    ctx = Context(x, y, x_p, y_p)
    assert rule.applicable(ctx).tolist() == [True, False, False]
    assert torch.allclose(rule.loss(ctx), torch.tensor([0.2, 0.0, 0.0]))
    assert rule.satisfied(ctx).tolist() == [False, True, True]


def test_allof_weights_losses_and_needs_every_rule():
    a = Penalty(lambda x, y: y[:, 0] - 1.0)
    b = Penalty(lambda x, y: -y[:, 0])
    both = AllOf([a, b], weights=[2.0, 3.0])
    y = torch.tensor([[2.0], [-1.0], [0.5]])
    x = torch.zeros(3, 1)
    ctx = Context(x, y, parts=(Context(x, y), Context(x, y)))
    assert both.loss(ctx).tolist() == [2.0, 3.0, 0.0]
    assert both.satisfied(ctx).tolist() == [False, False, True]
    nested = AllOf([both, a], weights=[1.0, 0.5])
    assert nested.leaf_weights() == [2.0, 3.0, 0.5] and len(nested.leaves()) == 3


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.floats(0.2, 5.0), min_size=1, max_size=8),
    st.lists(st.booleans(), min_size=8, max_size=8),
    st.floats(0.01, 0.5),
)
def test_relative_moves_only_its_feature_by_at_most_u_abs_x(mags, signs, u):
    x = torch.tensor([[m if s else -m, 3.0] for m, s in zip(mags, signs, strict=False)])
    x_p = Monotonic(0, "decreasing", perturbation=Relative(u)).perturb(
        x, torch.Generator().manual_seed(1)
    )
    delta = x_p[:, 0] - x[:, 0]
    assert (delta >= 0).all()
    assert (delta <= u * x[:, 0].abs() * (1 + 1e-6)).all()
    assert torch.equal(x_p[:, 1], x[:, 1])


def test_additive_moves_zeros_and_relative_does_not():
    x = torch.zeros(200, 1)
    gen = torch.Generator().manual_seed(0)
    moved = Monotonic(0, "increasing", perturbation=Additive(0.3)).perturb(x, gen)[:, 0]
    assert (moved > 0).float().mean() > 0.99 and moved.max() <= 0.3
    assert torch.equal(Monotonic(0, "increasing").perturb(x, gen), x)


def test_standardized_perturbs_in_raw_units():
    mean, std = 100.0, 20.0
    x = torch.full((50, 1), (130.0 - mean) / std)
    delta = Standardized(Relative(0.1), mean, std).delta(x[:, 0], torch.Generator())
    raw_delta = delta * std
    assert (raw_delta >= 0).all() and (raw_delta <= 13.0 + 1e-4).all() and raw_delta.max() > 6.0


class Increasing(torch.nn.Module):
    """Strictly increasing in feature 0 by construction (positive slope, monotone tanh)."""

    def __init__(self, sign: float = 1.0) -> None:
        super().__init__()
        self.sign = sign
        self.w = torch.nn.Parameter(torch.tensor([0.7, -1.3]))

    def forward(self, x):
        return self.sign * torch.tanh(0.3 * x[:, :1]) + x[:, 1:2] * self.w[1] + self.w[0]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.floats(0.1, 3.0), st.booleans(), st.floats(-3, 3)), min_size=1, max_size=30
    ),
    st.integers(0, 10_000),
)
def test_monotone_model_verifies_fully_and_reversed_model_never(rows, seed):
    x = torch.tensor([[m if s else -m, z] for m, s, z in rows])
    rule = Monotonic(0, "increasing", perturbation=Relative(0.1))
    assert dc.verification_ratio(Increasing(), rule, x, seed=seed) == 1.0
    assert dc.verification_ratio(Increasing(-1.0), rule, x, seed=seed) == 0.0
    dec = Monotonic(0, "decreasing", perturbation=Additive(0.5))
    assert dc.verification_ratio(Increasing(-1.0), dec, x, seed=seed) == 1.0


def test_rules_round_trip_through_their_config():
    rule = AllOf(
        [
            Monotonic(2, "decreasing", perturbation=Additive(0.2)),
            Threshold(
                1,
                0.5,
                output=0,
                direction="increasing",
                perturbation=Standardized(Relative(0.1), 3.0, 2.0),
            ),
        ],
        [1.0, 0.5],
    )
    again = rule_from_config(rule.config())
    assert again.config() == rule.config()
    assert again == rule and hash(again) == hash(rule)
    with pytest.raises(ValueError, match="cannot be described"):
        Penalty(lambda x, y: y[:, 0]).config()


def test_rule_errors_name_the_problem():
    with pytest.raises(ValueError, match="direction must be"):
        Monotonic(0, "up")
    with pytest.raises(ValueError, match="column name"):
        Monotonic("price", "decreasing").perturb(torch.ones(2, 2))
    with pytest.raises(ValueError, match="out of range"):
        Monotonic(5, "decreasing").perturb(torch.ones(2, 2))
    with pytest.raises(ValueError, match="u must be > 0"):
        Relative(0.0)
    assert math.isclose(Relative(0.25).u, 0.25)


def test_rules_show_what_they_say():
    rule = dc.Monotonic("price", "decreasing", perturbation=dc.rules.Additive(0.5), output=1)
    assert repr(rule) == (
        "Monotonic(feature='price', direction='decreasing', output=1, "
        "perturbation=Additive(scale=0.5))"
    )
    both = dc.rules.AllOf([dc.Monotonic(0, "increasing"), rule], [1.0, 2.0])
    assert (
        repr(both)
        == f"AllOf([Monotonic(feature=0, direction='increasing'), {rule!r}], weights=[1.0, 2.0])"
    )
    assert repr(dc.rules.Penalty(lambda x, y: y.sum(dim=1))) == "Penalty(fn=<lambda>)"

    def energy_gap(x, y_hat):
        return y_hat[:, 0] - x[:, 0]

    assert repr(dc.rules.Penalty(energy_gap, tau=0.5, strict=True)) == (
        "Penalty(fn=energy_gap, tau=0.5, strict=True)"
    )
    assert repr(dc.rules.Relative(0.2)) == "Relative(u=0.2)"
    assert repr(dc.rules.Standardized(dc.rules.Additive(2.0), 1.0, 3.0)) == (
        "Standardized(inner=Additive(scale=2.0), mean=1.0, std=3.0)"
    )


def test_rules_are_equal_when_they_say_the_same():
    rule = Monotonic("price", "decreasing", perturbation=Additive(0.5))
    assert rule == Monotonic("price", "decreasing", perturbation=Additive(0.5))
    assert len({rule, Monotonic("price", "decreasing", perturbation=Additive(0.5))}) == 1
    assert rule != Monotonic("price", "increasing", perturbation=Additive(0.5))
    assert rule != Monotonic("price", "decreasing", perturbation=Additive(0.25))
    assert rule != Monotonic("price", "decreasing")
    assert rule != Threshold("price", 0.0, direction="decreasing", perturbation=Additive(0.5))
    assert AllOf([rule], [2.0]) != AllOf([rule], [1.0])
    assert Additive(0.1) != Relative(0.1) and Relative(0.1) == Relative(0.1)
    code = Penalty(lambda x, y: y[:, 0])
    assert code == code and code != Penalty(lambda x, y: y[:, 0])
