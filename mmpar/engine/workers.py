"""A small pool of CPU worker processes that run a model over batches of a dataset.

Used by :func:`mmpar.engine.multi_process_test` and multi-process inference. The model is put in
shared memory once (``model.share_memory()``) so N workers do not hold N copies of the weights;
the main process hands out batch index ranges through a queue (so fast workers take more
batches), collects the per-batch outputs and returns them in dataset order.
"""

from __future__ import annotations

import os
import queue
import traceback
from typing import Any, Callable, Sequence

import torch
import torch.multiprocessing as mp
from torch import nn
from tqdm import tqdm

# How long the main process waits on the result queue before it checks that the workers are
# still alive; this is a liveness poll, not a sleep: results are handled as soon as they arrive.
_POLL_SECONDS = 1.0


class _TensorPayload:
    """A tensor sent between processes as a numpy array.

    Torch's multiprocessing pickler moves tensors through shared-memory segments, one file
    descriptor each; many small per-sample outputs could exhaust the descriptor limit, so
    outputs travel as plain numpy arrays and become tensors again on arrival.
    """

    def __init__(self, tensor: torch.Tensor):
        self.array = tensor.detach().cpu().numpy()
        self.dtype = tensor.dtype

    def restore(self) -> torch.Tensor:
        return torch.from_numpy(self.array).to(self.dtype)


def _pack(obj: Any) -> Any:
    if isinstance(obj, torch.Tensor):
        return _TensorPayload(obj)
    if isinstance(obj, dict):
        return {k: _pack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pack(v) for v in obj)
    return obj


def _unpack(obj: Any) -> Any:
    if isinstance(obj, _TensorPayload):
        return obj.restore()
    if isinstance(obj, dict):
        return {k: _unpack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unpack(v) for v in obj)
    return obj


def default_start_method() -> str:
    """Return ``'fork'`` where it is available and CUDA is not initialised, else ``'spawn'``.

    Fork starts workers in milliseconds and shares the dataset copy-on-write; it is unsafe once
    CUDA has been initialised in the parent, where spawn is required.
    """
    if "fork" in mp.get_all_start_methods() and not torch.cuda.is_initialized():
        return "fork"
    return "spawn"


def _worker_loop(
    model: nn.Module,
    dataset: Any,
    step: Callable[[nn.Module, list], list],
    tasks: Any,
    results: Any,
    num_threads: int,
) -> None:
    """Run ``step`` on batches taken from ``tasks`` until a ``None`` sentinel arrives."""
    torch.set_num_threads(num_threads)
    while True:
        task = tasks.get()
        if task is None:
            return
        batch_idx, start, end = task
        try:
            samples = [dataset[i] for i in range(start, end)]
            outputs = list(step(model, samples))
            if len(outputs) != end - start:
                raise RuntimeError(
                    f"the model returned {len(outputs)} results for a batch of "
                    f"{end - start} samples (indices {start}..{end - 1}); it must return one "
                    "result per sample"
                )
            results.put(("ok", batch_idx, _pack(outputs)))
        except Exception:  # noqa: BLE001 - the traceback is re-raised in the main process
            results.put(("error", batch_idx, traceback.format_exc()))
            return


def batch_ranges(num_samples: int, batch_size: int) -> list[tuple[int, int, int]]:
    """Split ``range(num_samples)`` into ``(batch_idx, start, end)`` consecutive batches.

    Args:
        num_samples: Number of samples.
        batch_size: Samples per batch (the last batch may be smaller).

    Returns:
        The batches in order, the same boundaries a sequential ``DataLoader`` would use.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    return [
        (b, start, min(start + batch_size, num_samples))
        for b, start in enumerate(range(0, num_samples, batch_size))
    ]


def run_in_processes(
    model: nn.Module,
    dataset: Sequence,
    step: Callable[[nn.Module, list], list],
    workers: int = 2,
    batch_size: int = 32,
    start_method: str | None = None,
    progress: bool = True,
    desc: str | None = None,
) -> list:
    """Run ``step(model, samples)`` over ``dataset`` in ``workers`` CPU processes.

    Args:
        model: The model (an ``nn.Module`` on CPU). It is switched to eval mode and moved to
            shared memory.
        dataset: Anything with ``__len__`` and ``__getitem__``; each worker loads its own
            samples from it.
        step: A picklable callable taking the model and a list of samples and returning one
            result per sample.
        workers: Number of worker processes (>= 1).
        batch_size: Samples per batch.
        start_method: ``'fork'``, ``'spawn'`` or ``'forkserver'``; default
            :func:`default_start_method`.
        progress: Show a tqdm bar (samples done) in the main process.
        desc: Label of the progress bar.

    Returns:
        The per-sample results, in dataset order.

    Raises:
        ValueError: ``workers`` or ``batch_size`` is < 1.
        RuntimeError: A worker raised (its traceback is included) or died.
    """
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    num_samples = len(dataset)
    batches = batch_ranges(num_samples, batch_size)
    if not batches:
        return []
    workers = min(workers, len(batches))
    model.eval()
    model.share_memory()
    method = start_method or default_start_method()
    ctx = mp.get_context(method)
    tasks, results = ctx.Queue(), ctx.Queue()
    for task in batches:
        tasks.put(task)
    for _ in range(workers):
        tasks.put(None)
    # Split the cores between workers; more threads than cores only adds contention. A forked
    # child gets one thread, as torch's DataLoader workers do: the OpenMP pool the parent has
    # already used does not survive fork, and a forked child that runs a parallel region on it
    # waits forever.
    num_threads = 1 if method == "fork" else max(1, (os.cpu_count() or 1) // workers)
    procs = [
        ctx.Process(
            target=_worker_loop,
            args=(model, dataset, step, tasks, results, num_threads),
            daemon=True,
        )
        for _ in range(workers)
    ]
    for p in procs:
        p.start()
    done: dict[int, list] = {}
    try:
        with tqdm(total=num_samples, desc=desc, disable=not progress) as bar:
            while len(done) < len(batches):
                try:
                    status, batch_idx, payload = results.get(timeout=_POLL_SECONDS)
                except queue.Empty:
                    _check_alive(procs)
                    continue
                if status == "error":
                    raise RuntimeError(
                        f"worker failed on batch {batch_idx} "
                        f"(samples {batches[batch_idx][1]}..{batches[batch_idx][2] - 1}):\n"
                        f"{payload}"
                    )
                done[batch_idx] = _unpack(payload)
                bar.update(len(done[batch_idx]))
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.terminate()
                p.join()
        tasks.close()
        results.close()
    return [r for b in range(len(batches)) for r in done[b]]


def _check_alive(procs: list) -> None:
    """Raise if a worker died without reporting (killed, segfault, out of memory)."""
    for rank, p in enumerate(procs):
        if p.exitcode not in (None, 0):
            raise RuntimeError(
                f"worker process {rank} (pid {p.pid}) died with exit code {p.exitcode} "
                "before finishing its batches (killed by a signal or out of memory?)"
            )
    if all(p.exitcode == 0 for p in procs):
        raise RuntimeError("all worker processes exited but some batches have no result")
