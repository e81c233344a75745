"""Samplers: resumable distributed, infinite and size-bucketed batch samplers.

All of them implement the sampler resume protocol of ``docs/internals.md``: ``set_epoch``,
``set_start_index``, ``state_dict`` and ``load_state_dict``.
"""

from .distributed_sampler import DistributedSampler
from .infinite_sampler import InfiniteSampler
from .size_bucket_sampler import SizeBucketBatchSampler

__all__ = ["DistributedSampler", "InfiniteSampler", "SizeBucketBatchSampler"]
