"""Independent random streams derived from one seed."""

from __future__ import annotations

import numpy as np

_STREAMS = {
    "init": 0,
    "shuffle": 1,
    "noise": 2,
    "perturb": 3,
    "alpha": 4,
    "val": 5,
    "eval": 6,
    "forward": 7,
}


def derive_seed(seed: int, stream: str, index: int = 0) -> int:
    """A 63-bit seed for ``stream`` ("init", "shuffle", "noise", "perturb", "alpha", "val",
    "eval", or "forward": the dropout masks of a seed trained among others); ``index`` > 0
    gives further independent streams of the same kind (one per rule leaf, say).

    >>> derive_seed(0, "alpha") == derive_seed(0, "alpha") != derive_seed(1, "alpha")
    True
    >>> derive_seed(0, "eval", 1) != derive_seed(0, "eval")
    True
    >>> derive_seed(2**32, "init") != derive_seed(0, "init")  # every bit of a seed counts
    True
    """
    if int(seed) < 0:
        raise ValueError(f"a seed must be an integer >= 0, got {seed}")
    entropy = [int(seed), _STREAMS[stream], *([int(index)] if index else [])]
    state = np.random.SeedSequence(entropy).generate_state(2)
    return int((int(state[0]) << 32 | int(state[1])) & 0x7FFF_FFFF_FFFF_FFFF)
