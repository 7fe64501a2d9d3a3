"""Independent random streams derived from one seed."""

from __future__ import annotations

import numpy as np

_STREAMS = {"init": 0, "shuffle": 1, "noise": 2, "perturb": 3, "alpha": 4, "val": 5, "eval": 6,
            "forward": 7}


def derive_seed(seed: int, stream: str) -> int:
    """A 63-bit seed for ``stream`` ("init", "shuffle", "noise", "perturb", "alpha", "val",
    "eval", or "forward": the dropout masks of a seed trained among others).

    >>> derive_seed(0, "alpha") == derive_seed(0, "alpha") != derive_seed(1, "alpha")
    True
    """
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, _STREAMS[stream]]).generate_state(2)
    return int((int(state[0]) << 32 | int(state[1])) & 0x7FFF_FFFF_FFFF_FFFF)
