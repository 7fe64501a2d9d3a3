"""The double-pendulum simulator, energy, pairs, splits and cache."""

import math

import numpy as np
import pytest
import torch

from deepctrl.paper.datasets import pendulum as pend


@pytest.fixture(scope="module")
def trajectory():
    """The full default trajectory, simulated once (about 3 s)."""
    return pend.simulate()


def test_energy_of_hand_computed_states():
    states = torch.tensor(
        [
            [0.0, 0.0, 0.0, 0.0],  # at rest: zero
            [0.0, 1.0, 0.0, 0.0],  # T = 1/2*1*1 + 1/2*5*1 = 3
            [0.0, 0.0, 0.0, 1.0],  # T = 1/2*5*1 = 2.5
            [0.0, 1.0, 0.0, 1.0],  # T = 0.5 + 2.5*(1 + 1 + 2) = 10.5
            [math.pi / 2, 0.0, 0.0, 0.0],  # V = -5 g + g + 10 g = 6 g
        ],
        dtype=torch.float64,
    )
    expected = [0.0, 3.0, 2.5, 10.5, 6 * 9.81]
    assert pend.energy(states).tolist() == pytest.approx(expected, abs=1e-12)


def test_energy_is_differentiable_in_float64():
    x = torch.randn(5, 4, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(pend.energy, (x,))


def test_energy_increase_is_float64_and_signed():
    x = torch.tensor([[0.0, 1.0, 0.0, 0.0]])
    y = torch.tensor([[0.0, 0.0, 0.0, 1.0]])
    assert pend.energy_increase(x, y).dtype == torch.float64
    assert pend.energy_increase(x, y).item() == pytest.approx(-0.5)
    assert pend.energy_increase(y, x).item() == pytest.approx(0.5)


def test_initial_energy_and_damping(trajectory):
    times, states = trajectory
    assert states.shape == (600_001, 4)
    assert times[-1] == pytest.approx(3000.0)
    e = pend.energy(torch.from_numpy(states)).numpy()
    assert e[0] == pytest.approx(9.338, abs=1e-3)
    assert e[360_000] == pytest.approx(7.56, abs=0.01)
    assert e[-1] == pytest.approx(6.74, abs=0.01)
    assert np.diff(e).max() <= pend.DEFAULT.energy_tolerance
    assert np.diff(e).min() < 0


def test_rising_energy_is_reported():
    with pytest.raises(ValueError, match="energy rises"):
        pend.simulate(pend.PendulumConfig(f1=-0.5, duration=5.0))


@pytest.mark.parametrize("preset", pend.PRESETS)
def test_pairs_and_split_sizes(trajectory, preset):
    times, states = trajectory
    x, y, t = pend.make_pairs(times, states, preset)
    assert x.shape == y.shape == (30_000, 4)
    assert np.array_equal(x, states[::20][:30_000])
    assert np.allclose(np.diff(t), 0.1)
    if preset == "paper":
        assert np.array_equal(y[:-1], x[1:])  # consecutive 10 Hz states
    else:
        assert np.array_equal(y, states[1::20][:30_000])  # next fine state, 5 ms ahead
    assert pend.split_sizes(len(x)) == [18_000, 3_000, 9_000]


def test_unknown_preset_is_an_error(trajectory):
    with pytest.raises(ValueError, match="preset"):
        pend.make_pairs(*trajectory, preset="hourly")
    with pytest.raises(ValueError, match="preset"):
        pend.load("hourly")


@pytest.fixture
def fast_simulation(monkeypatch, trajectory):
    """Let ``load`` reuse the module trajectory; counts how often it simulates."""
    calls = []

    def simulate(config=pend.DEFAULT):
        calls.append(config)
        return trajectory

    monkeypatch.setattr(pend, "simulate", simulate)
    return calls


@pytest.mark.parametrize("preset", pend.PRESETS)
def test_load_splits_in_time_order(tmp_path, fast_simulation, preset):
    data = pend.load(preset, cache_dir=tmp_path)
    sizes = [len(x) for x, _ in (data.train, data.val, data.test)]
    assert sizes == [18_000, 3_000, 9_000]
    assert data.train[0].dtype == torch.float32
    assert data.times[0].max() < data.times[1].min() <= data.times[1].max() < data.times[2].min()
    assert data.train[0][0].tolist() == pytest.approx([0.4725, 0.0, 0.3449, 0.0])


def test_cache_hit_skips_generation(tmp_path, fast_simulation):
    first = pend.load("authors", cache_dir=tmp_path)
    assert len(fast_simulation) == 1
    assert pend.cache_path("authors", cache_dir=tmp_path).is_file()
    again = pend.load("authors", cache_dir=tmp_path)
    assert len(fast_simulation) == 1
    assert torch.equal(first.test[1], again.test[1])
    pend.load("paper", cache_dir=tmp_path)  # another preset: another file
    assert len(fast_simulation) == 2


def test_a_cache_that_cannot_be_written_is_warned_about_and_the_data_still_load(
    tmp_path, fast_simulation
):
    (tmp_path / "a_file").write_text("x")
    beneath = tmp_path / "a_file" / "cache"  # no folder can be made under a file
    with pytest.warns(
        UserWarning,
        match=r"the simulation cache .*a_file/cache cannot be "
        r"written \(.*\), so the simulation runs again next time: set "
        r"DEEPCTRL_CACHE to a writable folder",
    ):
        data = pend.load("authors", cache_dir=beneath)
    assert len(data.test[0]) == 9_000 and len(fast_simulation) == 1


def test_cache_key_covers_parameters(tmp_path):
    base = pend.cache_path("paper", pend.DEFAULT, tmp_path)
    assert base != pend.cache_path("authors", pend.DEFAULT, tmp_path)
    assert base != pend.cache_path("paper", pend.PendulumConfig(m2=4.0), tmp_path)
    assert base == pend.cache_path("paper", pend.PendulumConfig(), tmp_path)


def test_corrupt_cache_is_regenerated(tmp_path, fast_simulation):
    path = pend.cache_path("paper", cache_dir=tmp_path)
    path.write_bytes(b"not a zip file")
    data = pend.load("paper", cache_dir=tmp_path)
    assert len(fast_simulation) == 1 and len(data.test[0]) == 9_000
    with np.load(path, allow_pickle=False) as f:
        assert f["x"].shape == (30_000, 4)


def test_cache_folder_from_argument_env_or_home(tmp_path, monkeypatch):
    monkeypatch.setenv(pend.CACHE_ENV, str(tmp_path / "env"))
    assert pend.cache_folder() == tmp_path / "env"
    assert pend.cache_folder(tmp_path / "arg") == tmp_path / "arg"
    monkeypatch.delenv(pend.CACHE_ENV)
    assert pend.cache_folder().parts[-2:] == (".cache", "deepctrl")
