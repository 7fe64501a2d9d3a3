"""The double pendulum with friction of the paper's Sec. 4.1: simulator, energy and splits.

A state is ``(theta1, omega1, theta2, omega2)`` (angles in rad, angular velocities in
rad/s), the order the paper uses. One trajectory starts at rest from theta1 = 0.4725,
theta2 = 0.3449 and is integrated for 3000 s at 200 Hz with LSODA (scipy's ``odeint``,
rtol = atol = 1e-10). Friction makes the energy decrease: 9.338 at t = 0, about 7.56 at
1800 s and 6.74 at 3000 s (energy is zero at rest). The simulator checks that the energy
never rises between fine steps by more than ``energy_tolerance``.

Presets of (state, next state) pairs, 30,000 each, split in time order 60/10/30
(18,000 / 3,000 / 9,000):

* ``"paper"`` (default): consecutive states at 10 Hz, the target is 100 ms ahead;
* ``"authors"``: every 20th fine state paired with the NEXT fine state, 5 ms ahead, as
  the authors' scripts do.

Datasets are cached as ``.npz`` files keyed by every parameter, in ``cache_dir``, else
``$DEEPCTRL_CACHE``, else ``~/.cache/deepctrl``.

>>> import torch
>>> round(float(energy(torch.tensor([[0.4725, 0.0, 0.3449, 0.0]]))[0]), 3)
9.338
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import itertools
import json
import math
import os
import sys
import warnings
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import Tensor

from deepctrl.io.file_format import write_atomic

PRESETS = ("paper", "authors")
CACHE_ENV = "DEEPCTRL_CACHE"
_CACHE_FORMAT = 1


@dataclass(frozen=True)
class PendulumConfig:
    """Physical constants, initial state and integration settings (the values of paper
    Sec. 4.1 and of the authors' published scripts)."""

    l1: float = 1.0
    l2: float = 1.0
    m1: float = 1.0
    m2: float = 5.0
    g: float = 9.81
    f1: float = 0.001
    f2: float = 0.001
    theta1: float = 0.4725
    omega1: float = 0.0
    theta2: float = 0.3449
    omega2: float = 0.0
    duration: float = 3000.0
    rate: float = 200.0
    rtol: float = 1e-10
    atol: float = 1e-10
    energy_tolerance: float = 1e-8

    @property
    def n_steps(self) -> int:
        """Number of fine steps (states minus one)."""
        return round(self.duration * self.rate)


DEFAULT = PendulumConfig()


def energy(x: Tensor, config: PendulumConfig = DEFAULT) -> Tensor:
    """Total energy of states ``x`` (..., 4), zero at rest; differentiable.

    >>> abs(float(energy(torch.zeros(1, 4))[0])) < 1e-4  # zero at rest, to float32 rounding
    True
    """
    c = config
    th1, w1, th2, w2 = x.unbind(-1)
    potential = (
        -(c.m1 + c.m2) * c.l1 * c.g * torch.cos(th1)
        - c.m2 * c.l2 * c.g * torch.cos(th2)
        + c.m1 * c.g * c.l1
        + c.m2 * c.g * (c.l1 + c.l2)
    )
    v1, v2 = c.l1 * w1, c.l2 * w2
    kinetic = 0.5 * c.m1 * v1**2 + 0.5 * c.m2 * (v1**2 + v2**2 + 2 * v1 * v2 * torch.cos(th1 - th2))
    return potential + kinetic


def energy_increase(x: Tensor, y: Tensor) -> Tensor:
    """E(y) - E(x) per sample, computed in float64: the energy rule is violated when > 0.

    float64 keeps the tiny energy drop of a 5 ms step (about 4e-6 of 9) above rounding.

    >>> x = torch.tensor([[0.4725, 0.0, 0.3449, 0.0]])
    >>> float(energy_increase(x, torch.zeros(1, 4))[0]) < 0
    True
    """
    return energy(y.double()) - energy(x.double())


def _derivative(config: PendulumConfig):
    """The right-hand side ds/dt of the equations of motion (scalar ``math``: fastest)."""
    c = config
    a11 = (c.m1 + c.m2) * c.l1
    a22 = c.m2 * c.l2
    cos, sin = math.cos, math.sin

    def rhs(s: np.ndarray, _t: float) -> tuple[float, float, float, float]:
        th1, w1, th2, w2 = s
        d = th1 - th2
        cd, sd = cos(d), sin(d)
        a12, a21 = c.m2 * c.l2 * cd, c.m2 * c.l1 * cd
        b1 = -c.m2 * c.l2 * w2 * w2 * sd - (c.m1 + c.m2) * c.g * sin(th1) - c.f1 * c.l1 * w1
        b2 = c.m2 * c.l1 * w1 * w1 * sd - c.m2 * c.g * sin(th2) - c.f2 * c.l2 * w2
        det = a11 * a22 - a12 * a21
        return w1, (b1 * a22 - a12 * b2) / det, w2, (a11 * b2 - a21 * b1) / det

    return rhs


def check_energy(states: np.ndarray, times: np.ndarray, config: PendulumConfig = DEFAULT) -> None:
    """Raise ValueError if the energy rises by more than the tolerance between steps."""
    e = energy(torch.from_numpy(states), config).numpy()
    rise = np.diff(e)
    worst = int(np.argmax(rise))
    if rise[worst] > config.energy_tolerance:
        raise ValueError(
            f"pendulum energy rises by {rise[worst]:.3g} at t = {times[worst + 1]:.3f} s"
            f" (tolerance {config.energy_tolerance:g}): tighten rtol/atol or check friction"
        )


def simulate(config: PendulumConfig = DEFAULT) -> tuple[np.ndarray, np.ndarray]:
    """Times (n,) and states (n, 4) of the fine trajectory, float64, energy checked.

    >>> t, s = simulate(PendulumConfig(duration=1.0))
    >>> s.shape, float(t[-1])
    ((201, 4), 1.0)
    """
    from scipy.integrate import odeint

    if config.duration <= 0 or config.rate <= 0:
        raise ValueError(f"duration and rate must be > 0, got {config.duration}, {config.rate}")
    times = np.arange(config.n_steps + 1) / config.rate
    start = (config.theta1, config.omega1, config.theta2, config.omega2)
    states = odeint(_derivative(config), start, times, rtol=config.rtol, atol=config.atol)
    check_energy(states, times, config)
    return times, states


def make_pairs(
    times: np.ndarray, states: np.ndarray, preset: str = "paper", stride: int = 20
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, t_x): every ``stride``-th fine state and its successor for the preset.

    ``"paper"``: the successor is ``stride`` fine steps ahead (10 Hz from 200 Hz);
    ``"authors"``: one fine step ahead.

    >>> t = np.arange(61.0); s = np.repeat(t[:, None], 4, axis=1)
    >>> [a[:, 0].tolist() if a.ndim == 2 else a.tolist() for a in make_pairs(t, s, "authors")]
    [[0.0, 20.0, 40.0], [1.0, 21.0, 41.0], [0.0, 20.0, 40.0]]
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    ahead = stride if preset == "paper" else 1
    idx = np.arange(0, len(states) - ahead, stride)
    return states[idx], states[idx + ahead], times[idx]


def split_sizes(n: int, fractions: tuple[float, float, float] = (0.6, 0.1, 0.3)) -> list[int]:
    """Chronological train/val/test sizes.

    >>> split_sizes(30000)
    [18000, 3000, 9000]
    """
    n_train, n_val = round(n * fractions[0]), round(n * fractions[1])
    return [n_train, n_val, n - n_train - n_val]


@dataclass
class PendulumData:
    """Train/val/test (x, y) float32 tensors and the time (s) of every x."""

    preset: str
    train: tuple[Tensor, Tensor]
    val: tuple[Tensor, Tensor]
    test: tuple[Tensor, Tensor]
    times: tuple[Tensor, Tensor, Tensor]
    config: PendulumConfig


def cache_folder(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """``cache_dir``, else ``$DEEPCTRL_CACHE``, else ``~/.cache/deepctrl``."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get(CACHE_ENV)
    return Path(env) if env else Path.home() / ".cache" / "deepctrl"


def cache_path(
    preset: str, config: PendulumConfig = DEFAULT, cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The cache file of a preset and configuration (a hash of every parameter)."""
    key = json.dumps(
        {"format": _CACHE_FORMAT, "preset": preset, **dataclasses.asdict(config)}, sort_keys=True
    )
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return cache_folder(cache_dir) / f"pendulum-{preset}-{digest}.npz"


def _read_cache(path: Path) -> dict[str, np.ndarray] | None:
    """The arrays of a cache file, or None when it is missing or unreadable."""
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as f:
            arrays = {k: f[k] for k in ("x", "y", "t")}
    except (OSError, ValueError, KeyError, zipfile.BadZipFile, EOFError):
        return None
    n = len(arrays["x"])
    if arrays["x"].shape != (n, 4) or arrays["y"].shape != (n, 4) or arrays["t"].shape != (n,):
        return None
    return arrays


def generate(preset: str = "paper", config: PendulumConfig = DEFAULT) -> dict[str, np.ndarray]:
    """Simulate and build the pairs of ``preset``: arrays ``x``, ``y``, ``t`` (float64)."""
    times, states = simulate(config)
    x, y, t = make_pairs(times, states, preset, stride=round(config.rate / 10))
    return {"x": x, "y": y, "t": t}


def _unwritable(folder: Path) -> str | None:
    """Why the cache ``folder`` cannot be made or written in, or None when it can."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return exc.strerror or type(exc).__name__
    if not os.access(folder, os.W_OK):
        return "permission denied"
    return None


def load(
    preset: str = "paper",
    cache_dir: str | os.PathLike[str] | None = None,
    config: PendulumConfig = DEFAULT,
) -> PendulumData:
    """The pendulum dataset of ``preset``, from the cache or simulated (then cached).

    >>> data = load("paper")                    # doctest: +SKIP
    >>> [len(x) for x, _ in (data.train, data.val, data.test)]  # doctest: +SKIP
    [18000, 3000, 9000]
    """
    if preset not in PRESETS:
        raise ValueError(f"preset must be one of {PRESETS}, got {preset!r}")
    path = cache_path(preset, config, cache_dir)
    arrays = _read_cache(path)
    if arrays is None:
        unwritable = _unwritable(path.parent)
        print(
            f"simulating {config.duration:g} s of the double pendulum ("
            + (f"once; cached in {path.parent})" if unwritable is None else "not cached)"),
            file=sys.stderr,
        )
        if unwritable is not None:
            warnings.warn(
                f"the simulation cache {path.parent} cannot be written ({unwritable}), so the "
                "simulation runs again next time: set DEEPCTRL_CACHE to a writable folder",
                UserWarning,
                stacklevel=2,
            )
        arrays = generate(preset, config)
        if unwritable is None:
            buffer = io.BytesIO()
            np.savez(buffer, x=arrays["x"], y=arrays["y"], t=arrays["t"])
            write_atomic(path, buffer.getvalue())
    bounds = np.cumsum([0, *split_sizes(len(arrays["x"]))])
    parts = [slice(int(a), int(b)) for a, b in itertools.pairwise(bounds)]

    def tensor(name: str, part: slice) -> Tensor:
        return torch.from_numpy(np.ascontiguousarray(arrays[name][part])).float()

    pairs = [(tensor("x", p), tensor("y", p)) for p in parts]
    t_train, t_val, t_test = (torch.from_numpy(arrays["t"][p].copy()) for p in parts)
    return PendulumData(preset, pairs[0], pairs[1], pairs[2], (t_train, t_val, t_test), config)
