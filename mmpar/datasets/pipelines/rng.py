"""Per-sample randomness for transforms.

A dataset puts a ``numpy.random.Generator`` seeded from ``(seed, epoch, index)`` into
``results['_rng']`` before running the pipeline. Random transforms draw only from it, so a sample's
augmentation is a pure function of those three numbers: the same in every DataLoader worker, in
any order, and after resuming mid-epoch. Used outside a dataset (no ``_rng`` key), transforms fall
back to a generator seeded from NumPy's global RNG, so ``np.random.seed`` still controls them.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

RNG_KEY = "_rng"


def make_rng(seed: int, epoch: int, key: Sequence[int]) -> np.random.Generator:
    """Return the generator for one sample.

    Args:
        seed: Dataset seed (non-negative).
        epoch: Current epoch (non-negative).
        key: Sample key, usually ``(index,)``.

    Returns:
        A fresh ``numpy.random.Generator`` (PCG64) seeded by ``SeedSequence([seed, epoch, *key])``.
    """
    return np.random.default_rng(np.random.SeedSequence([int(seed), int(epoch), *map(int, key)]))


def get_rng(results: dict) -> np.random.Generator:
    """Return the sample's generator from ``results``, or one drawn from NumPy's global RNG."""
    rng = results.get(RNG_KEY)
    if rng is None:
        rng = np.random.default_rng(np.random.randint(0, 2**31 - 1))
        results[RNG_KEY] = rng
    return rng
