"""Base class of classification datasets (mmcls 0.x style) with per-sample augmentation seeds."""

from __future__ import annotations

import copy
import os.path as osp
from abc import ABCMeta, abstractmethod
from collections.abc import Sequence
from typing import Any, Union

import numpy as np
import torch
from torch.utils.data import Dataset

from mmpar.utils.misc import check_int_arg

from .pipelines.compose import Compose
from .pipelines.rng import RNG_KEY, make_rng

SUPPORTED_METRICS = ("accuracy", "class_accuracy")


def topk_accuracy(scores: np.ndarray, labels: np.ndarray, topk: Sequence[int]) -> list[float]:
    """Top-k accuracy in percent.

    Args:
        scores: N×C class scores.
        labels: N ground-truth class indices.
        topk: The k values; a k larger than C counts every class.

    Returns:
        One percentage per k. Ties rank the lower class index first.
    """
    order = np.argsort(-scores, axis=1, kind="stable")
    out = []
    for k in topk:
        hit = (order[:, : min(k, scores.shape[1])] == labels[:, None]).any(axis=1)
        out.append(float(hit.mean() * 100.0) if len(labels) else 0.0)
    return out


def _add_note(err: BaseException, note: str) -> None:
    """Attach ``note`` to ``err`` (PEP 678 ``add_note``; ``__notes__`` before Python 3.11)."""
    if hasattr(err, "add_note"):
        err.add_note(note)
    else:
        err.__notes__ = [*getattr(err, "__notes__", []), note]  # type: ignore[attr-defined]


class BaseDataset(Dataset, metaclass=ABCMeta):
    """A classification dataset: annotations in memory, a pipeline run per sample.

    Subclasses implement :meth:`load_annotations`, returning one dict per sample with ``img``
    (an H×W×C array) or ``img_path`` (a file), and ``gt_label`` (an int64 class index).

    Augmentations are reproducible: ``__getitem__(idx)`` gives the pipeline a
    ``numpy.random.Generator`` in ``results['_rng']`` seeded from ``(seed, epoch, idx)``;
    mmpar's random transforms draw only from it. ``set_epoch`` (called by the samplers) updates
    the epoch through shared memory, so persistent DataLoader workers see it too.

    Args:
        data_prefix: Root directory of the data.
        pipeline: Transform configs or callables (see ``mmpar.datasets.pipelines``).
        classes: Class names: a sequence, a text file with one name per line, or None for the
            class's ``CLASSES``.
        ann_file: Optional annotation file (used by subclasses that read one).
        test_mode: Load the test/validation split.
        seed: Base seed of the per-sample augmentation generators.
    """

    CLASSES: Sequence[str] | None = None

    def __init__(
        self,
        data_prefix: str | None = None,
        pipeline: Sequence[Union[dict, Any]] = (),
        classes: Union[str, Sequence[str]] | None = None,
        ann_file: str | None = None,
        test_mode: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__()
        check_int_arg(seed, "seed", type(self).__name__, minimum=0)
        self.data_prefix = data_prefix
        self.ann_file = ann_file
        self.test_mode = test_mode
        self.seed = seed
        self.pipeline = Compose(pipeline)
        self.CLASSES = self.get_classes(classes)
        # Shared memory so that DataLoader workers (persistent ones included) see set_epoch.
        self._epoch = torch.zeros((), dtype=torch.int64).share_memory_()
        self.data_infos = self.load_annotations()
        self._check_labels()

    @abstractmethod
    def load_annotations(self) -> list[dict]:
        """Return one dict per sample (``img`` or ``img_path``, and ``gt_label``)."""

    @classmethod
    def get_classes(cls, classes: Union[str, Sequence[str]] | None = None) -> list | None:
        """Resolve class names from ``classes`` (names or a file) or the class default."""
        if classes is None:
            return None if cls.CLASSES is None else list(cls.CLASSES)
        if isinstance(classes, str):
            if not osp.isfile(classes):
                raise FileNotFoundError(f"classes file not found: {classes}")
            with open(classes, encoding="utf-8") as f:
                return [line.strip() for line in f if line.strip()]
        if isinstance(classes, Sequence):
            return list(classes)
        raise TypeError(f"classes must be a file path or a sequence of names, got {type(classes)}")

    def _check_labels(self) -> None:
        if self.CLASSES is None:
            return
        num_classes = len(self.CLASSES)
        for i, info in enumerate(self.data_infos):
            label = int(info["gt_label"])
            if not 0 <= label < num_classes:
                where = info.get("img_path", f"index {i}")
                raise ValueError(
                    f"{type(self).__name__}: sample {i} ({where}) has gt_label {label}, outside "
                    f"[0, {num_classes}) for {num_classes} classes; fix the annotations or the "
                    f"classes list"
                )

    @property
    def class_to_idx(self) -> dict[str, int]:
        """Map each class name to its index."""
        if self.CLASSES is None:
            raise AttributeError(f"{type(self).__name__} has no CLASSES")
        return {name: i for i, name in enumerate(self.CLASSES)}

    @property
    def epoch(self) -> int:
        """The epoch used to seed augmentations."""
        return int(self._epoch.item())

    def set_epoch(self, epoch: int) -> None:
        """Set the epoch that seeds augmentations (called by the samplers at each epoch)."""
        if epoch < 0:
            raise ValueError(f"epoch must be non-negative, got {epoch}")
        self._epoch.fill_(int(epoch))

    def get_gt_labels(self) -> np.ndarray:
        """Return the ground-truth labels of all samples as an int64 array."""
        return np.array([int(info["gt_label"]) for info in self.data_infos], dtype=np.int64)

    def get_cat_ids(self, idx: int) -> list[int]:
        """Return the category ids of sample ``idx``."""
        return [int(self.data_infos[idx]["gt_label"])]

    def prepare_data(
        self, idx: int, rng_key: Sequence[int] | None = None, epoch: int | None = None
    ) -> Any:
        """Run the pipeline on a copy of sample ``idx``.

        Args:
            idx: Sample index.
            rng_key: Key of the augmentation generator (default ``(idx,)``); dataset wrappers
                pass their own index so repeated copies get different augmentations.
            epoch: Epoch for the generator (default: the one set by :meth:`set_epoch`).

        Raises:
            Exception: Whatever the pipeline raised, of the same type, with a note (PEP 678,
                ``err.__notes__``) naming the dataset (class, split, data root, annotation
                file), the sample index and its file, e.g.
                ``ImageFolder(split=train, data_prefix='data/pets'): failed to load sample 7
                (data/pets/dog/7.png)``.
        """
        results = copy.deepcopy(self.data_infos[idx])
        results["sample_idx"] = idx
        epoch = self.epoch if epoch is None else epoch
        results[RNG_KEY] = make_rng(self.seed, epoch, (idx,) if rng_key is None else rng_key)
        try:
            out = self.pipeline(results)
        except Exception as err:
            # A note keeps the exception's type (callers may catch OSError, ...); Python 3.11+
            # prints it under the message, also in DataLoader workers' re-raised tracebacks.
            where = self.data_infos[idx].get("img_path")
            _add_note(
                err,
                f"{self._describe()}: failed to load sample {idx}"
                + (f" ({where})" if where else ""),
            )
            raise
        if isinstance(out, dict):
            out.pop(RNG_KEY, None)
        return out

    def _describe(self) -> str:
        """Class name, split and (when set) data root and annotation file, for messages."""
        parts = [f"split={'test' if self.test_mode else 'train'}"]
        if self.data_prefix:
            parts.append(f"data_prefix={self.data_prefix!r}")
        if self.ann_file:
            parts.append(f"ann_file={self.ann_file!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    def __len__(self) -> int:
        return len(self.data_infos)

    def __getitem__(self, idx: int | tuple[int, int]) -> Any:
        """Return sample ``idx``; an ``(idx, epoch)`` pair sets the augmentation epoch directly.

        The pair form lets a sampler whose stream spans several passes (an infinite sampler)
        give each pass its own augmentations without relying on ``set_epoch`` timing.
        """
        if isinstance(idx, tuple):
            idx, epoch = idx
            return self.prepare_data(int(idx), epoch=int(epoch))
        return self.prepare_data(idx)

    def evaluate(
        self,
        results: Sequence[Any],
        metric: Union[str, Sequence[str]] = "accuracy",
        metric_options: dict | None = None,
        indices: Sequence[int] | None = None,
        logger: Any = None,
    ) -> dict[str, float]:
        """Evaluate per-sample class scores.

        Args:
            results: One score vector (length C) per sample, in dataset order.
            metric: ``'accuracy'`` (``accuracy_top-k`` for each k in ``metric_options['topk']``,
                default ``(1, 5)``), ``'class_accuracy'`` (``class_accuracy/<name>`` per class
                that has samples), or a list of them. Values are percentages.
            metric_options: ``dict(topk=(1, 5))``.
            indices: Dataset indices the results belong to (default: all, in order).
            logger: Unused; kept for the mmcls signature.

        Returns:
            Metric name → value.

        Raises:
            KeyError: An unsupported metric (lists the supported ones).
            ValueError: ``results`` and the dataset (or ``indices``) differ in length.
        """
        metrics = [metric] if isinstance(metric, str) else list(metric)
        for name in metrics:
            if name not in SUPPORTED_METRICS:
                raise KeyError(
                    f"metric {name!r} is not supported by {type(self).__name__}; "
                    f"supported: {list(SUPPORTED_METRICS)}"
                )
        topk = (metric_options or {}).get("topk", (1, 5))
        topk = (topk,) if isinstance(topk, int) else tuple(topk)
        labels = self.get_gt_labels()
        if indices is not None:
            labels = labels[np.asarray(indices, dtype=np.int64)]
        if len(results) != len(labels):
            raise ValueError(
                f"{type(self).__name__}.evaluate got {len(results)} results for {len(labels)} "
                f"samples; pass one score vector per sample (or the matching indices)"
            )
        scores = np.stack(
            [r.detach().cpu().numpy() if torch.is_tensor(r) else np.asarray(r) for r in results]
        ).astype(np.float64)
        if scores.ndim != 2:
            raise ValueError(
                f"each result must be a 1-D score vector, got shape {scores.shape[1:]}"
            )
        eval_results: dict[str, float] = {}
        if "accuracy" in metrics:
            for k, acc in zip(topk, topk_accuracy(scores, labels, topk)):
                eval_results[f"accuracy_top-{k}"] = acc
        if "class_accuracy" in metrics:
            pred = scores.argmax(axis=1)
            names = self.CLASSES or [str(i) for i in range(scores.shape[1])]
            for c, name in enumerate(names):
                mask = labels == c
                if mask.any():  # classes without samples have no accuracy; leave them out
                    eval_results[f"class_accuracy/{name}"] = float((pred[mask] == c).mean() * 100)
        return eval_results

    def __repr__(self) -> str:
        split = "test" if self.test_mode else "train"
        return (
            f"{type(self).__name__}(split={split}, num_samples={len(self)}, "
            f"num_classes={len(self.CLASSES) if self.CLASSES else None})"
        )
