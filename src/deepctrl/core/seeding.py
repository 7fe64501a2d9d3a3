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


_WORD = 2**32


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
    >>> derive_seed(2**32, "init") != derive_seed(0, "shuffle")  # and streams stay apart
    True
    """
    seed = int(seed)
    if seed < 0:
        raise ValueError(f"a seed must be an integer >= 0, got {seed}")
    if seed < _WORD:
        entropy = [seed, _STREAMS[stream], *([int(index)] if index else [])]
    else:
        # NumPy reads a large integer as its 32-bit words and pads short lists with zeros,
        # so [2**32, init] would read as [0, 1, 0] = seed 0's shuffle stream: write the
        # words, their count and a last word no seed below 2**32 ends its list with
        words = [seed >> (32 * k) & (_WORD - 1) for k in range((seed.bit_length() + 31) // 32)]
        entropy = [*words, len(words), _STREAMS[stream], int(index), _WORD - 1]
    state = np.random.SeedSequence(entropy).generate_state(2)
    return int((int(state[0]) << 32 | int(state[1])) & 0x7FFF_FFFF_FFFF_FFFF)
