"""Shared test settings: deterministic, single-threaded torch for stable timings."""

import torch

torch.set_num_threads(1)
