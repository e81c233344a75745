"""Turn pipeline results into tensors and DataContainers (the last steps of every pipeline)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from mmpar.parallel import DataContainer

from ..registry import PIPELINES

DEFAULT_META_KEYS = (
    "filename",
    "ori_filename",
    "ori_shape",
    "img_shape",
    "flip",
    "flip_direction",
    "img_norm_cfg",
    "sample_idx",
)


def to_tensor(data: Any) -> torch.Tensor:
    """Convert a NumPy array, sequence, int or float to a ``torch.Tensor``.

    Raises:
        TypeError: For other types (strings included), naming the type.
    """
    if isinstance(data, torch.Tensor):
        return data
    if isinstance(data, np.ndarray):
        # np.ascontiguousarray turns 0-d arrays (e.g. CIFAR labels) into shape (1,); 0-d arrays
        # are always contiguous, so only copy non-contiguous ones.
        return torch.from_numpy(data if data.flags.c_contiguous else np.ascontiguousarray(data))
    if isinstance(data, (bool, np.bool_)):
        return torch.tensor(bool(data))
    if isinstance(data, numbers.Integral):
        return torch.tensor(int(data), dtype=torch.long)
    if isinstance(data, numbers.Real):
        return torch.tensor(float(data), dtype=torch.float32)
    if isinstance(data, Sequence) and not isinstance(data, str):
        return torch.tensor(data)
    raise TypeError(f"cannot convert {type(data).__name__} to a tensor: {data!r}")


def _require(results: dict, key: str, step: str) -> Any:
    if key not in results:
        raise KeyError(f"{step}: results has no key {key!r}; available keys: {sorted(results)}")
    return results[key]


class _PerKeyTransform:
    """Replace ``results[key]`` by ``self._convert(results[key], key)`` for each of ``keys``.

    Args:
        keys: Keys to convert (each must be present).
    """

    def __init__(self, keys: Sequence[str]) -> None:
        self.keys = list(keys)

    def __call__(self, results: dict) -> dict:
        """Convert the keys in place."""
        for key in self.keys:
            results[key] = self._convert(_require(results, key, type(self).__name__), key)
        return results

    def _convert(self, value: Any, key: str) -> Any:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(keys={self.keys})"


@PIPELINES.register_module()
class ToTensor(_PerKeyTransform):
    """Convert ``results[key]`` to a tensor for each key (e.g. ``gt_label``).

    Args:
        keys: Keys to convert.
    """

    def _convert(self, value: Any, key: str) -> torch.Tensor:
        return to_tensor(value)


@PIPELINES.register_module()
class ImageToTensor(_PerKeyTransform):
    """Convert H×W×C (or H×W) images to C×H×W float32 tensors.

    Args:
        keys: Image keys to convert.
    """

    def _convert(self, value: Any, key: str) -> torch.Tensor:
        img = np.asarray(value)
        if img.ndim == 2:
            img = img[..., None]
        if img.ndim != 3:
            raise ValueError(
                f"ImageToTensor expects H×W or H×W×C images, results[{key!r}] has shape {img.shape}"
            )
        tensor = torch.from_numpy(np.ascontiguousarray(img.transpose(2, 0, 1)))
        return tensor if tensor.is_floating_point() else tensor.float()


@PIPELINES.register_module()
class ToDataContainer:
    """Wrap fields in :class:`~mmpar.parallel.DataContainer`.

    Args:
        fields: One dict per field: ``key`` plus DataContainer arguments (``stack``,
            ``padding_value``, ``cpu_only``, ``pad_dims``).
    """

    def __init__(
        self, fields: Sequence[dict] = (dict(key="img", stack=True), dict(key="gt_label"))
    ) -> None:
        for field in fields:
            if "key" not in field:
                raise KeyError(f'ToDataContainer: each field needs a "key", got {field!r}')
        self.fields = [dict(f) for f in fields]

    def __call__(self, results: dict) -> dict:
        """Wrap the fields in place."""
        for field in self.fields:
            field = dict(field)
            key = field.pop("key")
            results[key] = DataContainer(_require(results, key, "ToDataContainer"), **field)
        return results

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(fields={self.fields})"


@PIPELINES.register_module()
class Collect:
    """Keep only ``keys`` and gather ``meta_keys`` into ``img_metas`` (the last pipeline step).

    Output: each of ``keys`` (tensors in ``stack_keys`` wrapped as
    ``DataContainer(x, stack=True)`` so variable-size images are padded on collate; others as
    they are, e.g. the ``gt_label`` tensor) and ``img_metas`` =
    ``DataContainer(meta_dict, cpu_only=True)``. Meta keys missing from ``results`` are skipped.

    Args:
        keys: Keys to keep (each must be present).
        meta_keys: Keys copied into the meta dict.
        stack_keys: Keys wrapped as stacked DataContainers when they are tensors.
    """

    def __init__(
        self,
        keys: Sequence[str],
        meta_keys: Sequence[str] = DEFAULT_META_KEYS,
        stack_keys: Sequence[str] = ("img",),
    ) -> None:
        self.keys = list(keys)
        self.meta_keys = list(meta_keys)
        self.stack_keys = set(stack_keys)

    def __call__(self, results: dict) -> dict:
        """Return the collected dict."""
        data = {}
        for key in self.keys:
            value = _require(results, key, "Collect")
            if key in self.stack_keys and isinstance(value, torch.Tensor):
                value = DataContainer(value, stack=True)
            data[key] = value
        meta = {key: results[key] for key in self.meta_keys if key in results}
        data["img_metas"] = DataContainer(meta, cpu_only=True)
        return data

    def __repr__(self) -> str:
        return f"{self.__class__.__name__}(keys={self.keys}, meta_keys={self.meta_keys})"
