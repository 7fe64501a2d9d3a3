import pytest
import torch
from scipy import stats

from deepctrl.core.priors import Beta, Fixed, Uniform


@pytest.mark.parametrize(("a", "b"), [(0.1, 0.1), (0.5, 0.5), (1.0, 1.0), (2.0, 3.0)])
def test_beta_draws_follow_the_beta_distribution(a, b):
    draws = Beta(a, b, seed=3).sample(20_000, torch.float64).numpy()
    assert ((draws >= 0) & (draws <= 1)).all()
    assert stats.kstest(draws, stats.beta(a, b).cdf).pvalue > 1e-3


def test_uniform_and_fixed():
    assert stats.kstest(Uniform(seed=0).sample(5000).numpy(), "uniform").pvalue > 1e-3
    assert Fixed(0.3).sample(4).tolist() == pytest.approx([0.3] * 4)


def test_state_dict_restores_the_stream():
    prior = Beta(0.1, 0.1, seed=7)
    prior.sample(10)
    state = prior.state_dict()
    expected = prior.sample(5)
    other = Beta(0.1, 0.1, seed=99)
    other.load_state_dict(state)
    assert torch.equal(other.sample(5), expected)
    with pytest.raises(ValueError, match="prior state is for"):
        Beta(0.5, 0.5).load_state_dict(state)


def test_spawn_gives_independent_reproducible_streams():
    prior = Beta(0.1, 0.1)
    assert torch.equal(prior.spawn(1).sample(8), prior.spawn(1).sample(8))
    assert not torch.equal(prior.spawn(1).sample(8), prior.spawn(2).sample(8))


def test_beta_rejects_bad_parameters():
    with pytest.raises(ValueError, match="a > 0 and b > 0"):
        Beta(0.0, 1.0)


def test_a_prior_pickles_and_copies_with_its_generator_state():
    import copy
    import pickle

    prior = Beta(0.1, 0.1).spawn(3)
    prior.sample(5)
    clones = [pickle.loads(pickle.dumps(prior)), copy.deepcopy(prior)]
    expected = prior.sample(4)  # the original goes on where it stood
    for clone in clones:
        assert clone.params() == prior.params()
        assert torch.equal(clone.sample(4), expected)
