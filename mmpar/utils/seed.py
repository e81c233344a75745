"""Seeding DataLoader workers (mmcv 1.x ``mmcv.utils.seed``)."""

from __future__ import annotations

import random


def worker_init_fn(worker_id: int, num_workers: int, rank: int, seed: int) -> None:
    """Seed ``random``, NumPy and torch in a DataLoader worker.

    The worker's seed is ``num_workers * rank + worker_id + seed``, so every worker of every
    rank draws differently and reproducibly. Bind the last three arguments with
    :func:`functools.partial` to pass it as a DataLoader's ``worker_init_fn``.

    Args:
        worker_id: The worker's index (given by the DataLoader).
        num_workers: Workers per rank.
        rank: This process's distributed rank.
        seed: The run's seed.
    """
    import numpy as np
    import torch

    # NumPy takes [0, 2**32) only; all three get the same value.
    worker_seed = (num_workers * rank + worker_id + seed) % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)
    torch.manual_seed(worker_seed)


__all__ = ["worker_init_fn"]
