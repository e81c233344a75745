"""mmcv's low-level scatter helpers: copy a tensor, or a list of per-device chunks, to devices.

:func:`mmpar.parallel.scatter` is what the wrappers use; these functions keep mmcv 1.x's
``mmcv.parallel._functions`` API for code that calls them directly. On CUDA, host-to-device
copies run on one background stream per GPU and the current stream waits for them
(:func:`synchronize_stream`); CPU targets (``-1``) never touch CUDA.
"""

from __future__ import annotations

from typing import Any, Union

import torch

from ._device_moves import dev as _dev
from ._device_moves import to_device as _to_device

__all__ = ["Scatter", "get_input_device", "scatter", "synchronize_stream"]

TensorOrList = Union[torch.Tensor, list]

_COPY_STREAMS: dict[torch.device, Any] = {}


def _copy_stream(device: torch.device) -> Any:
    """The background copy stream of ``device`` (one per GPU, created on first use)."""
    if device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    stream = _COPY_STREAMS.get(device)
    if stream is None:
        stream = _COPY_STREAMS[device] = torch.cuda.Stream(device=device)
    return stream


def _per_item(n_items: int, n_devices: int) -> int:
    """How many consecutive list items go to each device (the last device may get fewer)."""
    return max(1, -(-n_items // n_devices))


def _unknown(obj: Any, what: str) -> TypeError:
    return TypeError(
        f"{what}: expected a tensor or a list of them (per-device chunks), got {type(obj).__name__}"
    )


def scatter(input: TensorOrList, devices: list, streams: list | None = None) -> TensorOrList:
    """Copy a tensor to ``devices[0]``, or spread a list of chunks over ``devices``.

    List item ``i`` goes to ``devices[i // k]`` with ``k = ceil(len(input) / len(devices))``
    (consecutive items share a device). A device ``-1`` (or ``'cpu'``) keeps tensors on the
    CPU. On CUDA the copy is issued on ``streams[i]`` when given (pinned, non-blocking).

    Args:
        input: A tensor or a (nested) list of tensors.
        devices: Target GPU ids or devices; ``[-1]`` for the CPU.
        streams: One CUDA stream per device for the copies, or None (current stream).

    Returns:
        The tensor (or list, same nesting) on its device(s).

    Raises:
        TypeError: ``input`` holds something other than tensors and lists.
    """
    if streams is None:
        streams = [None] * len(devices)
    if isinstance(input, list):
        k = _per_item(len(input), len(devices))
        return [scatter(item, [devices[i // k]], [streams[i // k]]) for i, item in enumerate(input)]
    if not isinstance(input, torch.Tensor):
        raise _unknown(input, "scatter")
    output = input.contiguous()
    device = _dev(devices[0])
    if device.type != "cuda":
        return output.to(device)
    stream = streams[0] if output.numel() > 0 else None
    with torch.cuda.device(device), torch.cuda.stream(stream):
        return _to_device(output, device)


def synchronize_stream(output: TensorOrList, devices: list, streams: list) -> None:
    """Make each device's current stream wait for the copies :func:`scatter` issued.

    Item ``i`` of a list is matched with ``devices[i // k]`` and ``streams[i // k]`` as in
    :func:`scatter`. Each tensor is also recorded on the current stream, so its memory is not
    reused before the work queued there has finished. CPU tensors and ``None`` streams need
    no synchronisation and are skipped.

    Args:
        output: What :func:`scatter` returned.
        devices: The devices passed to :func:`scatter`.
        streams: The streams passed to :func:`scatter`.

    Raises:
        TypeError: ``output`` holds something other than tensors and lists.
    """
    if isinstance(output, list):
        k = _per_item(len(output), len(devices))
        for i, item in enumerate(output):
            synchronize_stream(item, [devices[i // k]], [streams[i // k]])
        return
    if not isinstance(output, torch.Tensor):
        raise _unknown(output, "synchronize_stream")
    if output.numel() == 0 or not output.is_cuda or streams[0] is None:
        return
    with torch.cuda.device(output.device):
        current = torch.cuda.current_stream()
        current.wait_stream(streams[0])
        output.record_stream(current)


def get_input_device(input: TensorOrList) -> int:
    """Return the GPU id of the first CUDA tensor in ``input``, or ``-1`` if all are on the CPU.

    Args:
        input: A tensor or a (nested) list of tensors.

    Returns:
        A CUDA device index, or ``-1``.

    Raises:
        TypeError: ``input`` holds something other than tensors and lists.
    """
    if isinstance(input, list):
        for item in input:
            device = get_input_device(item)
            if device != -1:
                return device
        return -1
    if isinstance(input, torch.Tensor):
        return input.get_device() if input.is_cuda else -1
    raise _unknown(input, "get_input_device")


class Scatter:
    """mmcv's ``Scatter``: copy a tensor or a list of chunks to the target devices.

    Example:
        >>> chunks = [torch.zeros(2, 3), torch.ones(1, 3)]
        >>> Scatter.forward([-1], chunks)  # CPU: the chunks as they are, in a tuple
    """

    @staticmethod
    def forward(target_gpus: list, input: TensorOrList) -> tuple:
        """Scatter ``input`` over ``target_gpus`` (CPU→GPU copies on background streams).

        Args:
            target_gpus: GPU ids or devices, or ``[-1]`` for the CPU.
            input: A tensor or a list of per-device chunks.

        Returns:
            A tuple: one entry per list item, or one entry for a tensor.
        """
        streams = None
        on_cuda = [_dev(d).type == "cuda" for d in target_gpus]
        if get_input_device(input) == -1 and any(on_cuda):
            streams = [
                _copy_stream(_dev(d)) if cuda else None for d, cuda in zip(target_gpus, on_cuda)
            ]
        outputs = scatter(input, target_gpus, streams)
        if streams is not None:
            synchronize_stream(outputs, target_gpus, streams)
        return tuple(outputs) if isinstance(outputs, list) else (outputs,)
