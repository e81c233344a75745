"""scikit-learn's bundled 8×8 handwritten digits: a real dataset that needs no download."""

from __future__ import annotations

from typing import Any, Sequence, Union

import numpy as np

from .base_dataset import BaseDataset
from .registry import DATASETS


@DATASETS.register_module()
class Digits(BaseDataset):
    """The UCI optical-recognition digits (1,797 images, 10 classes) via ``sklearn.datasets``.

    Images are 8×8×1 uint8 arrays (the 0–16 ink counts scaled to 0–255). A fixed permutation
    (from ``split_seed``) splits them into train (``test_mode=False``, the first
    ``split_ratio``) and val (``test_mode=True``, the rest); the split does not depend on
    the augmentation ``seed``.

    Args:
        data_prefix: Unused (the data ships with scikit-learn); kept for config symmetry.
        pipeline: Transforms.
        classes: Override class names (default ``'0'``…``'9'``).
        test_mode: Load the validation split.
        split_ratio: Fraction of samples in the train split, in (0, 1).
        split_seed: Seed of the split permutation.
        **kwargs: Passed to :class:`BaseDataset` (e.g. ``seed`` for augmentations).

    Raises:
        ImportError: scikit-learn is missing (``pip install mmpar[demo]``).
    """

    CLASSES = [str(i) for i in range(10)]

    def __init__(
        self,
        data_prefix: str | None = None,
        pipeline: Sequence[Union[dict, Any]] = (),
        classes: Union[str, Sequence[str]] | None = None,
        test_mode: bool = False,
        split_ratio: float = 0.8,
        split_seed: int = 0,
        **kwargs: Any,
    ) -> None:
        if not 0 < split_ratio < 1:
            raise ValueError(f"Digits: split_ratio must be in (0, 1), got {split_ratio}")
        self.split_ratio = split_ratio
        self.split_seed = split_seed
        super().__init__(data_prefix, pipeline, classes, test_mode=test_mode, **kwargs)

    def load_annotations(self) -> list[dict]:
        """Load, scale and split the digits."""
        try:
            from sklearn.datasets import load_digits
        except ImportError as err:
            raise ImportError(
                'Digits needs scikit-learn: pip install "mmpar[demo]" (or pip install scikit-learn)'
            ) from err
        bunch = load_digits()
        images = np.rint(bunch.images * (255.0 / 16.0)).astype(np.uint8)[..., None]
        labels = bunch.target.astype(np.int64)
        order = np.random.default_rng(self.split_seed).permutation(len(labels))
        num_train = int(round(len(labels) * self.split_ratio))
        chosen = order[num_train:] if self.test_mode else order[:num_train]
        return [{"img": images[i], "gt_label": labels[i]} for i in chosen]
