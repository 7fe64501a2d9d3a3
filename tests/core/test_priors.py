import pytest
import torch
from scipy import stats

from deepctrl.core.priors import Beta, Fixed, Prior, Uniform


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
    with pytest.raises(ValueError, match="Beta's a must be > 0, got 0"):
        Beta(0.0, 1.0)
    with pytest.raises(ValueError, match="Beta's b must be > 0, got -1"):
        Beta(1.0, -1.0)


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


SPAWN_CHILD = """
import sys
import torch
import torch.multiprocessing as mp
from deepctrl.core.priors import Beta


def child(rank, prior, expected):
    assert torch.equal(prior.sample(4), expected)  # the stream goes on where it stood


if __name__ == "__main__":
    prior = Beta(0.1, 0.1).spawn(3)
    prior.sample(5)
    expected = Beta(0.1, 0.1).spawn(3)
    expected.sample(5)
    mp.start_processes(child, args=(prior, expected.sample(4)), nprocs=1, start_method="spawn")
    print("child ok")
"""


def test_a_prior_reaches_a_spawned_process(tmp_path):
    # Lightning's ddp_spawn sends the module, priors included, through
    # torch.multiprocessing, which shares tensors by file descriptor
    import subprocess
    import sys

    script = tmp_path / "spawn_prior.py"
    script.write_text(SPAWN_CHILD)
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0 and done.stdout.strip() == "child ok", done.stderr[-2000:]


class _Constant(Prior):
    """A prior of one's own that draws ``value`` in ``shape``."""

    def __init__(self, value: float, shape: tuple[int, ...] | None = None) -> None:
        super().__init__()
        self.value, self.shape = value, shape

    def sample(self, n: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.full(self.shape or (n,), self.value, dtype=dtype)

    def params(self) -> dict[str, float]:
        return {"value": self.value}


@pytest.mark.parametrize(
    ("prior", "message"),
    [
        (_Constant(1.8), "_Constant drew alpha 1.8, outside \\[0, 1\\]: the training objective"),
        (_Constant(float("nan")), "_Constant drew alpha nan, outside \\[0, 1\\]"),
        (
            _Constant(0.5, (8, 1)),
            "_Constant.sample\\((\\d+)\\) returned \\(8, 1\\); it must return shape \\(\\1,\\)",
        ),
    ],
)
def test_a_prior_of_ones_own_must_draw_n_alphas_in_0_1(prior, message):
    import deepctrl as dc

    x = torch.randn(8, 2)
    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    objective = dc.Objective(
        model, dc.rules.Monotonic(0, "increasing"), dc.methods.DeepCTRL(prior, rho=1.0)
    )
    with pytest.raises(ValueError, match=message):
        objective(x, x[:, :1])
    with pytest.raises(ValueError, match=message):
        dc.fit(
            model,
            dc.rules.Monotonic(0, "increasing"),
            dc.methods.DeepCTRL(prior, rho=1.0),
            train=(x, x[:, :1]),
            max_epochs=1,
            task_loss="mse",
        )
    objective = dc.Objective(
        model, dc.rules.Monotonic(0, "increasing"), dc.methods.DeepCTRL(_Constant(0.25), rho=1.0)
    )
    assert torch.isfinite(objective(x, x[:, :1]).loss)


def test_the_docs_prior_of_ones_own_trains(capsys):
    import re
    from pathlib import Path

    import deepctrl as dc

    doc = (Path(__file__).resolve().parents[2] / "docs" / "core-api.md").read_text()
    block = re.search(
        r"```python\n(import torch\nimport deepctrl as dc\n\n\nclass UpperHalf.*?)```", doc, re.S
    )
    namespace: dict = {}
    exec(compile(block.group(1), "core-api.md", "exec"), namespace)
    draws = [float(v) for v in capsys.readouterr().out.strip()[len("tensor([") : -2].split(",")]
    assert len(draws) == 3 and all(0.5 <= d <= 1.0 for d in draws)
    x = torch.randn(32, 2)
    model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
    rule = dc.rules.Monotonic(0, "increasing")
    result = dc.fit(
        model, rule, namespace["method"], train=(x, x[:, :1]), max_epochs=2, task_loss="mse"
    )
    assert result.epochs == [2]


class Opening(Prior):
    """Uniform on [0, min(1, drawn / 8)]: its range opens over the first draws, and it logs
    them in a list."""

    def __init__(self, seed=None):
        super().__init__(seed)
        self.drawn, self.log = 0, []

    def sample(self, n, dtype=torch.float32):
        top = ((self.drawn + torch.arange(1, n + 1, dtype=torch.float64)) / 8).clamp(max=1)
        self.drawn += n
        a = top * torch.rand(n, generator=self.generator, dtype=torch.float64)
        self.log.extend(a.tolist())
        return a.to(dtype)

    def params(self):
        return {}

    def get_extra_state(self):
        return {"drawn": self.drawn}

    def set_extra_state(self, state):
        self.drawn = state["drawn"]


def test_a_prior_of_ones_own_resumes_its_extra_state_and_seeds_share_nothing():
    import deepctrl as dc

    def objective():
        torch.manual_seed(0)
        model = dc.DeepCTRL(dc.mlp(2, 4), dc.mlp(2, 4), dc.mlp(8, 1))
        return dc.Objective(
            model,
            dc.rules.Monotonic(0, "increasing"),
            dc.methods.DeepCTRL(Opening(), rho=1.0),
            seed=0,
        )

    X, y = torch.randn(16, 2), torch.randn(16, 1)
    first = objective()
    for _ in range(3):
        first(X, y)
    saved = first.state_dict()
    assert saved["method"]["priors"][0]["extra_state"] == {"drawn": 3}
    ahead = [first(X, y).alpha for _ in range(4)]
    again = objective()
    again.load_state_dict(saved)
    assert [again(X, y).alpha for _ in range(4)] == ahead  # the range opens where it stood
    template = Opening()
    one, two = template.spawn(1), template.spawn(2)
    one.sample(3)
    assert (len(one.log), len(two.log), len(template.log)) == (3, 0, 0)


class _UpperHalf(Prior):
    """A prior with no parameters, like Uniform: only its class tells the two apart."""

    def sample(self, n, dtype=torch.float32):
        return 0.5 + 0.5 * torch.rand(n, generator=self.generator, dtype=dtype)

    def params(self):
        return {}


def test_a_state_of_another_prior_class_with_the_same_parameters_is_refused():
    state = _UpperHalf(seed=1).state_dict()
    assert state["prior"] == "_UpperHalf" and Uniform().params() == state["params"] == {}
    with pytest.raises(ValueError, match="prior state is a _UpperHalf's, this prior is a Uniform"):
        Uniform().load_state_dict(state)
    older = {k: v for k, v in state.items() if k not in ("prior", "seed")}  # a state from before
    Uniform().load_state_dict(older)


def test_a_loaded_prior_reports_the_seed_its_stream_came_from():
    saved = Beta(0.1, 0.1, seed=8050335724093666056)
    loaded = Beta(0.1, 0.1, seed=0)
    loaded.load_state_dict(saved.state_dict())
    assert loaded.seed == 8050335724093666056
    assert repr(loaded) == "Beta(a=0.1, b=0.1, seed=8050335724093666056)"
    unseeded = Uniform()
    unseeded.load_state_dict(Uniform().state_dict())
    assert unseeded.seed is None and repr(unseeded) == "Uniform()"
