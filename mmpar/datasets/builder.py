"""Builders of datasets and data loaders (the registries are :mod:`.registry`'s)."""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import random
import signal
import sys
from collections.abc import Iterator
from functools import partial
from typing import Any, Sequence, Union

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset

from mmpar.utils.dist import broadcast_object, get_dist_info
from mmpar.utils.registry import build_from_cfg
from mmpar.utils.seed import worker_init_fn as seed_worker_rngs

from .dataset_wrappers import ConcatDataset, RepeatDataset

# Importable from here too, as in mmcls/mmdet (``from mmdet.datasets.builder import DATASETS``).
from .registry import BATCH_SAMPLERS as BATCH_SAMPLERS
from .registry import DATASETS as DATASETS
from .registry import PIPELINES as PIPELINES
from .registry import SAMPLERS as SAMPLERS


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


def die_with_parent() -> None:
    """Make this (worker) process get SIGKILL when its parent dies (Linux; no-op elsewhere).

    torch's workers notice a dead parent only between samples, and can block forever on a
    lock the parent held when it was SIGKILLed (seen: workers of a killed run left for hours).
    The kernel's parent-death signal ends them however they are blocked. (Linux sends it when
    the thread that started the worker ends: create loader iterators in a long-lived thread.)
    """
    if not sys.platform.startswith("linux"):
        return
    parent = multiprocessing.parent_process()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, int(signal.SIGKILL), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is not None and os.getppid() != parent.pid:
        os._exit(1)  # the parent died before the signal was armed


def worker_init_fn(worker_id: int, num_workers: int, rank: int, seed: int | None) -> None:
    """Seed ``random``, NumPy and torch in a DataLoader worker from (seed, rank, worker_id).

    The worker also ends with its parent (:func:`die_with_parent`) and ignores Ctrl-C: the
    terminal sends SIGINT to the whole process group, and the training process stops on it
    (it saves after the iteration, and needs its workers until then).

    With ``seed=None`` the worker's torch seed (random per run) seeds the other two, so
    workers still differ from each other. mmpar's own transforms use per-sample generators and
    do not depend on these seeds; this makes third-party transforms that use global RNGs
    reproducible too.
    """
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if seed is not None:
        seed_worker_rngs(worker_id, num_workers, rank, seed)
        return
    worker_seed = torch.initial_seed() % 2**32
    np.random.seed(worker_seed)
    random.seed(worker_seed)


def _raised_by_multiprocessing(err: BaseException) -> bool:
    """Whether ``err`` was raised inside :mod:`multiprocessing` (its innermost frame)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and tb.tb_frame.f_globals.get("__name__", "").startswith(
        "multiprocessing"
    )


class _WorkerDeathReporter:
    """Iterator of a multi-process loader that says so when a worker died mid-transfer.

    A worker killed (SIGKILL, the OOM killer) or ended (``os._exit``) while it hands a batch
    over can make torch's iterator raise a bare ``EOFError``/``ConnectionResetError`` from
    :mod:`multiprocessing` (when torch has not yet seen the worker die; otherwise it raises
    its own ``DataLoader worker (pid ...) ...`` error). Those become a ``RuntimeError`` that
    says a worker died, chained to the original. Errors of the dataset itself (re-raised by
    torch as ``Caught ... in DataLoader worker process N``) pass unchanged.
    """

    def __init__(self, iterator: Iterator) -> None:
        self._iterator = iterator

    def __iter__(self) -> _WorkerDeathReporter:
        return self

    def __next__(self) -> Any:
        try:
            return next(self._iterator)
        except (EOFError, ConnectionError) as err:
            if not _raised_by_multiprocessing(err):
                raise
            # Stop the workers now, with torch's own clean-up (the one its iterator runs when
            # deleted; skipped if a torch version lacks it). Otherwise torch's SIGCHLD handler
            # raises for the dead worker at some later point, e.g. while Python prints this
            # error, and the traceback is lost ("lost sys.stderr"). If that handler fires
            # during the clean-up, its own "DataLoader worker ... killed" error propagates.
            shutdown = getattr(self._iterator, "_shutdown_workers", None)
            if callable(shutdown):
                shutdown()
            raise RuntimeError(
                "DataLoader worker died: the connection to a loader worker process broke "
                f"while it sent a batch ({type(err).__name__}). It was killed (e.g. by the "
                "out-of-memory killer) or exited abruptly; rerun with workers_per_gpu=0 to see "
                "an error raised while loading a sample"
            ) from err

    def __len__(self) -> int:
        return len(self._iterator)  # type: ignore[arg-type]

    def __getattr__(self, name: str) -> Any:
        if name == "_iterator":  # not set yet
            raise AttributeError(name)
        return getattr(self._iterator, name)


class _DataLoader(DataLoader):
    """A torch ``DataLoader`` whose multi-process iterators report dead workers clearly."""

    def __iter__(self) -> Iterator:
        iterator = super().__iter__()
        return _WorkerDeathReporter(iterator) if self.num_workers > 0 else iterator


def build_dataloader(
    dataset: Dataset,
    samples_per_gpu: int,
    workers_per_gpu: int,
    num_gpus: int = 1,
    dist: bool = False,
    shuffle: bool = True,
    round_up: bool = True,
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
        round_up: With the default ``DistributedSampler``, pad every rank's shard to the same
            length by repeating samples (mmcls 0.x's argument). False gives the ranks shards
            that may differ in length by one.
        seed: Seed of the shuffle and of the workers (None: shuffle seed 0, random worker seeds).
            With ``dist``, rank 0's seed orders the data on every rank (a collective: build
            distributed loaders on every rank); the workers use each rank's own.
        drop_last: Drop the last incomplete batch.
        pin_memory: Passed to the DataLoader. DataContainer fields are pinned by ``scatter``
            when copied to a GPU (with ``non_blocking``).
        persistent_workers: Keep workers alive between epochs (ignored without workers).
        sampler_cfg: Sampler config; ``type`` from ``SAMPLERS`` or ``BATCH_SAMPLERS``, other
            keys are its arguments.
        **kwargs: Passed to ``torch.utils.data.DataLoader`` (e.g. ``prefetch_factor``).

    Returns:
        The DataLoader; its sampler (or batch sampler) is the resumable one. With workers, a
        worker that dies abruptly ends the iteration with a ``RuntimeError`` that says a
        DataLoader worker died (torch sometimes raises a bare ``EOFError`` instead).
    """
    from mmpar.parallel import collate

    if samples_per_gpu < 1 or workers_per_gpu < 0 or num_gpus < 1:
        raise ValueError(
            f"build_dataloader: need samples_per_gpu >= 1, workers_per_gpu >= 0, num_gpus >= 1; "
            f"got {samples_per_gpu}, {workers_per_gpu}, {num_gpus}"
        )
    rank, world_size = get_dist_info()
    if dist:
        batch_size, num_workers = samples_per_gpu, workers_per_gpu
        num_replicas = world_size
    else:
        batch_size, num_workers = num_gpus * samples_per_gpu, num_gpus * workers_per_gpu
        num_replicas, rank = 1, 0

    sampler_cfg = dict(sampler_cfg or dict(type="DistributedSampler", round_up=round_up))
    sampler_type = sampler_cfg.get("type")
    shuffle_seed = 0 if seed is None else seed
    if dist and world_size > 1:
        # The ranks must shuffle alike to split one order between them, but --diff-seed gives
        # each its own seed (seed + rank): take rank 0's for the order, as mmcls's samplers do.
        shuffle_seed = broadcast_object(shuffle_seed)
    common = dict(dataset=dataset, shuffle=shuffle, seed=shuffle_seed)
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
    return _DataLoader(
        dataset,
        num_workers=num_workers,
        collate_fn=partial(collate, samples_per_gpu=samples_per_gpu),
        pin_memory=pin_memory,
        worker_init_fn=init_fn,
        persistent_workers=persistent_workers and num_workers > 0,
        **loader_args,
        **kwargs,
    )
