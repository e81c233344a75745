"""Run a model over a test set: one device, one process per device, or N CPU worker processes.

All three return the same thing, the per-sample outputs of ``model(return_loss=False, **data)``
in dataset order, so ``dataset.evaluate(results, ...)`` gives the same metrics whichever way the
results were computed.
"""

from __future__ import annotations

import os.path as osp
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader
from tqdm import tqdm

from mmpar.parallel import MMDataParallel, collate
from mmpar.parallel.utils import unwrap_model
from mmpar.utils.dist import collect_results, get_dist_info

from .workers import run_in_processes


def single_device_test(
    model: nn.Module,
    data_loader: DataLoader,
    show: bool = False,
    out_dir: str | None = None,
    progress: bool = True,
) -> list:
    """Run ``model`` over every batch of ``data_loader`` in this process.

    Args:
        model: The model, usually wrapped in :class:`~mmpar.parallel.MMDataParallel` (the
            wrapper scatters DataContainers); it is put in eval mode.
        data_loader: A non-shuffled loader over the test set.
        show: Display each image with its prediction (needs ``model.module.show_result``).
        out_dir: Write each image with its prediction into this directory instead of or besides
            showing it (also needs ``show_result``).
        progress: Show a tqdm progress bar (samples done).

    Returns:
        One result per sample, in the loader's order.
    """
    model.eval()
    results: list = []
    with tqdm(total=len(data_loader.dataset), disable=not progress) as bar:
        for data in data_loader:
            with torch.no_grad():
                batch_results = model(return_loss=False, **data)
            results.extend(batch_results)
            if show or out_dir:
                _show_batch(model, data, batch_results, show, out_dir)
            bar.update(len(batch_results))
    return results


def _show_batch(model: nn.Module, data: dict, batch_results: list, show: bool, out_dir) -> None:
    """Hand each sample of a batch to the model's ``show_result``."""
    module = unwrap_model(model)
    if not hasattr(module, "show_result"):
        raise NotImplementedError(
            f"show/out_dir need {type(module).__name__}.show_result(img, result, show, out_file), "
            "which this model does not implement"
        )
    metas = data["img_metas"].data[0] if "img_metas" in data else [{}] * len(batch_results)
    for meta, result in zip(metas, batch_results):
        filename = meta.get("filename")
        out_file = osp.join(out_dir, meta.get("ori_filename", "img.png")) if out_dir else None
        module.show_result(filename, result, show=show, out_file=out_file)


def multi_device_test(
    model: nn.Module,
    data_loader: DataLoader,
    tmpdir: str | None = None,
    gpu_collect: bool = False,
    progress: bool = True,
) -> list | None:
    """Run ``model`` in every process of a distributed job and collect the results on rank 0.

    Each rank tests its shard (the loader must use a ``DistributedSampler``); the shards are
    gathered with :func:`mmpar.utils.dist.collect_results`, which re-interleaves them
    into dataset order and drops the sampler's padding.

    Args:
        model: The model, usually wrapped in
            :class:`~mmpar.parallel.MMDistributedDataParallel`.
        data_loader: A loader over this rank's shard of the test set.
        tmpdir: Accepted for mmcv compatibility and ignored: results travel through
            ``torch.distributed`` object collectives, not a shared directory.
        gpu_collect: Accepted for mmcv compatibility and ignored (same reason).
        progress: Show a tqdm progress bar on rank 0 (samples done by all ranks).

    Returns:
        On rank 0 all results in dataset order; ``None`` on the other ranks.
    """
    del tmpdir, gpu_collect  # object collectives need neither
    model.eval()
    rank, world_size = get_dist_info()
    results: list = []
    dataset = data_loader.dataset
    with tqdm(total=len(dataset), disable=not progress or rank != 0) as bar:
        for data in data_loader:
            with torch.no_grad():
                batch_results = model(return_loss=False, **data)
            results.extend(batch_results)
            # Every rank runs batches of the same size, so this is the job-wide progress.
            bar.update(min(len(batch_results) * world_size, bar.total - bar.n))
    return collect_results(results, len(dataset))


class _TestStep:
    """Collate a list of samples and run the model's test forward on them (in a worker)."""

    def __init__(self) -> None:
        self._wrapped: MMDataParallel | None = None

    def __call__(self, model: nn.Module, samples: list) -> list:
        if self._wrapped is None:
            # The same wrapper as single_device_test, so both see identical inputs.
            self._wrapped = MMDataParallel(model, device_ids=[-1])
        data = collate(samples, samples_per_gpu=len(samples))
        with torch.no_grad():
            return list(self._wrapped(return_loss=False, **data))


def multi_process_test(
    model: nn.Module,
    dataset: Any,
    workers: int = 2,
    samples_per_gpu: int = 32,
    start_method: str | None = None,
    progress: bool = True,
) -> list:
    """Test ``model`` on ``dataset`` with ``workers`` CPU processes sharing one copy of the model.

    The model goes to shared memory (``model.share_memory()``); batches of consecutive indices
    (the same batches a sequential loader of ``samples_per_gpu`` makes) are handed out through a
    queue and the results come back in dataset order, so the metrics equal those of
    :func:`single_device_test` with the same batch size.

    Args:
        model: A CPU model, bare or wrapped in a module wrapper (it is unwrapped).
        dataset: The test dataset (its samples must be collatable with
            :func:`mmpar.parallel.collate`).
        workers: Number of worker processes.
        samples_per_gpu: Batch size.
        start_method: Multiprocessing start method (default: fork where safe, else spawn).
        progress: Show a tqdm progress bar in the main process.

    Returns:
        One result per sample, in dataset order.

    Raises:
        ValueError: The model has parameters on a GPU (use multi_device_test instead).
    """
    module = unwrap_model(model)
    devices = {p.device.type for p in module.parameters()}
    if devices - {"cpu"}:
        raise ValueError(
            f"multi_process_test runs CPU worker processes, but the model has parameters on "
            f"{sorted(devices)}; move it to CPU, or use multi_device_test under torchrun for GPUs"
        )
    return run_in_processes(
        module,
        dataset,
        _TestStep(),
        workers=workers,
        batch_size=samples_per_gpu,
        start_method=start_method,
        progress=progress,
    )


def collect_results_cpu(result_part: list, size: int, tmpdir: str | None = None) -> list | None:
    """Collect all ranks' results on rank 0 in dataset order (mmcv's name; ``tmpdir`` unused).

    The same as :func:`mmpar.utils.dist.collect_results`.

    Args:
        result_part: This rank's results, in the order its sampler yielded the samples.
        size: Number of samples in the dataset.
        tmpdir: Accepted for mmcv compatibility: results travel through object collectives.

    Returns:
        On rank 0 the ``size`` results in dataset order; ``None`` on the other ranks.
    """
    del tmpdir  # object collectives need no shared directory
    return collect_results(result_part, size)


def collect_results_gpu(result_part: list, size: int) -> list | None:
    """Collect all ranks' results on rank 0 in dataset order (mmcv's name for ``collect_results``).

    Args:
        result_part: This rank's results, in the order its sampler yielded the samples.
        size: Number of samples in the dataset.

    Returns:
        On rank 0 the ``size`` results in dataset order; ``None`` on the other ranks.
    """
    return collect_results(result_part, size)


# mmcv 1.x names.
single_gpu_test = single_device_test
multi_gpu_test = multi_device_test
