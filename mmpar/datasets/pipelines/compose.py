"""Compose a list of transforms (objects or config dicts) into one callable."""

from __future__ import annotations

from typing import Any, Callable, Sequence, Union

from ..registry import PIPELINES


@PIPELINES.register_module()
class Compose:
    """Apply transforms in order; a transform returning None drops the sample (returns None).

    Args:
        transforms: Transform objects or config dicts built from the ``PIPELINES`` registry.

    Example:
        >>> pipeline = Compose([dict(type='RandomFlip', flip_prob=0.5), dict(type='ToTensor',
        ...                     keys=['gt_label'])])
    """

    def __init__(self, transforms: Sequence[Union[dict, Callable]]) -> None:
        if isinstance(transforms, (str, dict)) or not isinstance(transforms, Sequence):
            raise TypeError(
                f"Compose expects a list of transforms, but got {type(transforms).__name__}"
            )
        self.transforms: list[Callable] = []
        for i, transform in enumerate(transforms):
            if isinstance(transform, dict):
                transform = PIPELINES.build(transform)
            elif not callable(transform):
                raise TypeError(
                    f"pipeline step {i} must be a callable or a config dict, "
                    f"but got {type(transform).__name__}: {transform!r}"
                )
            self.transforms.append(transform)

    def __call__(self, results: dict) -> dict[str, Any] | None:
        """Run every transform on ``results``."""
        for transform in self.transforms:
            results = transform(results)
            if results is None:
                return None
        return results

    def __repr__(self) -> str:
        inner = "".join(f"\n    {t!r}" for t in self.transforms)
        return f"{self.__class__.__name__}({inner}\n)"
