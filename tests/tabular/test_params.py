"""The estimators' parameters are declared once (tabular/params.py) and checked by fit."""

import inspect

import numpy as np
import pytest

import deepctrl as dc
from deepctrl.tabular.estimator_base import PARAMETERS
from deepctrl.tabular.params import COUNT_OR_AUTO, FRACTION, POSITIVE, SWITCHES, check

CHECKED_ELSEWHERE = {"rules", "alpha", "device", "random_state", "class_weight"}
"""Checked where they are used: rules by the resolver, alpha by check_alpha, the device by
resolve_device, random_state by scikit-learn, class_weight when the weights are built."""


@pytest.mark.parametrize("kind", [dc.DeepCTRLRegressor, dc.DeepCTRLClassifier])
def test_every_parameter_is_declared_or_checked_where_it_is_used(kind):
    names = set(inspect.signature(kind.__init__).parameters) - {"self"}
    assert names - CHECKED_ELSEWHERE == set(kind._parameters) | set(SWITCHES)


@pytest.mark.parametrize(
    ("value", "allowed", "ok"),
    [
        (0.1, POSITIVE, True),
        (0, POSITIVE, False),
        (True, POSITIVE, False),
        ("auto", COUNT_OR_AUTO, True),
        (3, COUNT_OR_AUTO, True),
        (2.5, COUNT_OR_AUTO, False),
        (np.int64(4), COUNT_OR_AUTO, True),
        ("all", COUNT_OR_AUTO, False),
        (0.0, FRACTION, True),
        (0.99, FRACTION, True),
        (1.0, FRACTION, False),
        (None, POSITIVE, False),
        (np.True_, SWITCHES["verbose"], True),
        (False, SWITCHES["verbose"], True),
        (1, SWITCHES["verbose"], False),
    ],
)
def test_what_each_kind_of_parameter_admits(value, allowed, ok):
    assert allowed.admits(value) is ok


@pytest.mark.parametrize(
    ("param", "value", "message"),
    [
        ("beta", -1, "beta must be a positive number, got -1"),
        ("rho", "always", "rho must be a positive number or one of ('auto', 'paper', 'epoch')"),
        ("patience", 0, "patience must be a positive integer or 'auto', got 0"),
        ("latent_size", 2.0, "latent_size must be a positive integer, got 2.0"),
        ("lr_schedule", "step", "lr_schedule must be 'auto' or one of ('constant', 'cosine')"),
        ("validation_fraction", 1, "validation_fraction must be in [0, 1), got 1"),
        ("loss", "huber", "loss must be one of ('mse', 'mae', 'poisson'), got 'huber'"),
        ("verbose", "no", "verbose must be True or False, got 'no'"),
        ("verbose", 1, "verbose must be True or False, got 1"),
    ],
)
def test_fit_names_the_parameter_out_of_bounds(param, value, message):
    est = dc.DeepCTRLRegressor(**{param: value})
    with pytest.raises(
        ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")
    ):
        est.fit(np.zeros((8, 2)), np.zeros(8))


def test_the_first_parameter_out_of_bounds_is_named():
    with pytest.raises(ValueError, match="^beta must"):
        check({"beta": 0, "n_seeds": 0}, {"beta": POSITIVE, "n_seeds": COUNT_OR_AUTO})
    assert set(PARAMETERS) <= set(dc.DeepCTRLClassifier._parameters)
