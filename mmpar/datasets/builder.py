"""Registries and builders for datasets, pipelines, samplers and data loaders."""

from __future__ import annotations

import random
from functools import partial
from typing import Any, Sequence, Union

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from mmpar.utils.registry import Registry, build_from_cfg

DATASETS = Registry("dataset")
PIPELINES = Registry("pipeline")
SAMPLERS = Registry("sampler")
BATCH_SAMPLERS = Registry("batch sampler")


def build_dataset(cfg: Union[dict, Sequence[dict]], default_args: dict | None = None) -> Any:
    """Build a dataset from a config.

    Args:
        cfg: A dataset config, a list of them (concatenated), or a wrapper config:
            ``dict(type='RepeatDataset', times=N, dataset=...)`` or
            ``dict(type='ConcatDataset', datasets=[...])``.
        default_args: Defaults for the dataset arguments (e.g. ``test_mode``).

    Returns:
        The dataset.
    """
    from .dataset_wrappers import ConcatDataset, RepeatDataset

    if isinstance(cfg, (list, tuple)):
        return ConcatDataset([build_dataset(c, default_args) for c in cfg])
    if not isinstance(cfg, dict):
        raise TypeError(f"dataset config must be a dict or a list of dicts, got {type(cfg)}")
    if cfg.get("type") == "RepeatDataset":
        if "dataset" not in cfg or "times" not in cfg:
            raise KeyError(f'RepeatDataset config needs "dataset" and "times", got {sorted(cfg)}')
        return RepeatDataset(build_dataset(cfg["dataset"], default_args), cfg["times"])
    if cfg.get("type") == "ConcatDataset":
        if "datasets" not in cfg:
            raise KeyError(f'ConcatDataset config needs "datasets", got {sorted(cfg)}')
        return ConcatDataset([build_dataset(c, default_args) for c in cfg["datasets"]])
    return build_from_cfg(cfg, DATASETS, default_args)


def worker_init_fn(worker_id: int, num_workers: int, rank: int, seed: int | None) -> None:
    """Seed ``random``, NumPy and torch in a DataLoader worker from (seed, rank, worker_id).

    With ``seed=None`` the worker's torch seed (random per run) seeds the other two, so
    workers still differ from each other. mmpar's own transforms use per-sample generators and
    do not depend on these seeds; this makes third-party transforms that use global RNGs
    reproducible too.
    """
    if seed is None:
        worker_seed = torch.initial_seed() % 2**32
    else:
        worker_seed = (num_workers * rank + worker_id + seed) % 2**32
        torch.manual_seed(worker_seed)
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def _dist_info() -> tuple[int, int]:
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        return torch.distributed.get_rank(), torch.distributed.get_world_size()
    return 0, 1


def build_dataloader(
    dataset: Dataset,
    samples_per_gpu: int,
    workers_per_gpu: int,
    num_gpus: int = 1,
    dist: bool = False,
    shuffle: bool = True,
    seed: int | None = None,
    drop_last: bool = False,
    pin_memory: bool = False,
    persistent_workers: bool = False,
    sampler_cfg: dict | None = None,
    **kwargs: Any,
) -> DataLoader:
    """Build a DataLoader whose batches are collated DataContainers, resumable mid-epoch.

    Every loader has a resumable sampler (``set_epoch``/``set_start_index``/``state_dict``):
    by default a ``DistributedSampler`` over this rank's shard (``dist=True``) or over the whole
    dataset (``num_replicas=1``) otherwise, shuffled by ``(seed, epoch)`` when ``shuffle``.
    ``sampler_cfg`` picks another: ``dict(type='InfiniteSampler')`` (IterBasedRunner) or
    ``dict(type='SizeBucketBatchSampler', bucket_size_multiplier=...)`` (a batch sampler).

    Args:
        dataset: The dataset.
        samples_per_gpu: Batch size per device.
        workers_per_gpu: Loader worker processes per device.
        num_gpus: Devices used by this process (non-distributed data parallel only).
        dist: Distributed training (one process per device; rank/world size from the group).
        shuffle: Shuffle every epoch.
        seed: Seed of the shuffle and of the workers (None: shuffle seed 0, random worker seeds).
        drop_last: Drop the last incomplete batch.
        pin_memory: Passed to the DataLoader. DataContainer fields are pinned by ``scatter``
            when copied to a GPU (with ``non_blocking``).
        persistent_workers: Keep workers alive between epochs (ignored without workers).
        sampler_cfg: Sampler config; ``type`` from ``SAMPLERS`` or ``BATCH_SAMPLERS``, other
            keys are its arguments.
        **kwargs: Passed to ``torch.utils.data.DataLoader`` (e.g. ``prefetch_factor``).

    Returns:
        The DataLoader; its sampler (or batch sampler) is the resumable one.
    """
    from mmpar.parallel import collate

    if samples_per_gpu < 1 or workers_per_gpu < 0 or num_gpus < 1:
        raise ValueError(
            f"build_dataloader: need samples_per_gpu >= 1, workers_per_gpu >= 0, num_gpus >= 1; "
            f"got {samples_per_gpu}, {workers_per_gpu}, {num_gpus}"
        )
    rank, world_size = _dist_info()
    if dist:
        batch_size, num_workers = samples_per_gpu, workers_per_gpu
        num_replicas = world_size
    else:
        batch_size, num_workers = num_gpus * samples_per_gpu, num_gpus * workers_per_gpu
        num_replicas, rank = 1, 0

    sampler_cfg = dict(sampler_cfg or dict(type="DistributedSampler"))
    sampler_type = sampler_cfg.get("type")
    common = dict(dataset=dataset, shuffle=shuffle, seed=0 if seed is None else seed)
    common.update(num_replicas=num_replicas, rank=rank)
    loader_args: dict[str, Any]
    if isinstance(sampler_type, str) and sampler_type in BATCH_SAMPLERS:
        batch_sampler = build_from_cfg(
            sampler_cfg, BATCH_SAMPLERS, dict(common, batch_size=batch_size, drop_last=drop_last)
        )
        loader_args = dict(batch_sampler=batch_sampler)
    else:
        sampler = build_from_cfg(sampler_cfg, SAMPLERS, common)
        loader_args = dict(sampler=sampler, batch_size=batch_size, drop_last=drop_last)

    init_fn = partial(worker_init_fn, num_workers=num_workers, rank=rank, seed=seed)
    return DataLoader(
        dataset,
        num_workers=num_workers,
        collate_fn=partial(collate, samples_per_gpu=samples_per_gpu),
        pin_memory=pin_memory,
        worker_init_fn=init_fn,
        persistent_workers=persistent_workers and num_workers > 0,
        **loader_args,
        **kwargs,
    )
