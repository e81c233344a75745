"""Images stored as ``root/<class>/<image>`` (any sizes), or listed in an annotation file."""

from __future__ import annotations

import os
import os.path as osp
from typing import Any, Sequence, Union

import numpy as np
from PIL import Image, UnidentifiedImageError

from .base_dataset import BaseDataset
from .registry import DATASETS

IMG_EXTENSIONS = (".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp")


@DATASETS.register_module()
class ImageFolder(BaseDataset):
    """A folder of class sub-folders of images, loaded with PIL by ``LoadImageFromFile``.

    Without ``ann_file``, classes are the sorted sub-folder names (or ``classes``) and every
    image file under them is a sample. With ``ann_file``, each line is ``<relative path>
    <label>`` (mmcls format), paths relative to ``data_prefix``.

    Args:
        data_prefix: Root directory.
        pipeline: Transforms; usually starts with ``dict(type='LoadImageFromFile')``.
        classes: Class names (sub-folder names when scanning).
        ann_file: Optional annotation file.
        test_mode: Evaluation split flag.
        extensions: File suffixes counted as images (case-insensitive).
        **kwargs: Passed to :class:`BaseDataset` (e.g. ``seed``).
    """

    def __init__(
        self,
        data_prefix: str,
        pipeline: Sequence[Union[dict, Any]] = (),
        classes: Union[str, Sequence[str]] | None = None,
        ann_file: str | None = None,
        test_mode: bool = False,
        extensions: Sequence[str] = IMG_EXTENSIONS,
        **kwargs: Any,
    ) -> None:
        if not isinstance(data_prefix, str) or not osp.isdir(data_prefix):
            where = (
                f" (resolved to {osp.abspath(data_prefix)})" if isinstance(data_prefix, str) else ""
            )
            raise FileNotFoundError(
                f"ImageFolder: data_prefix {data_prefix!r}{where} is not a directory. Expected "
                f"<data_prefix>/<class name>/<image files> (or <data_prefix>/<paths listed in "
                f"ann_file>); fix data_prefix in the config (relative paths are resolved from "
                f"the current directory, {os.getcwd()})"
            )
        self.extensions = tuple(e.lower() for e in extensions)
        self._sizes: list[tuple[int, int]] | None = None
        super().__init__(data_prefix, pipeline, classes, ann_file, test_mode, **kwargs)

    def _scan(self) -> list[dict]:
        if self.CLASSES is None:
            self.CLASSES = sorted(d.name for d in os.scandir(self.data_prefix) if d.is_dir())
        samples = []
        for label, name in enumerate(self.CLASSES):
            folder = osp.join(self.data_prefix, name)
            if not osp.isdir(folder):
                raise FileNotFoundError(f"ImageFolder: class folder {folder} does not exist")
            for dirpath, _, files in sorted(os.walk(folder, followlinks=True)):
                for fname in sorted(files):
                    if fname.lower().endswith(self.extensions):
                        samples.append((osp.join(dirpath, fname), label))
        return samples

    def _read_ann_file(self) -> list[tuple[str, int]]:
        samples = []
        with open(self.ann_file, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if not line.strip():
                    continue
                parts = line.rsplit(maxsplit=1)
                if len(parts) != 2 or not parts[1].lstrip("-").isdigit():
                    raise ValueError(
                        f'{self.ann_file}:{lineno}: expected "<path> <label>", got {line.strip()!r}'
                    )
                samples.append((osp.join(self.data_prefix, parts[0]), int(parts[1])))
        return samples

    def load_annotations(self) -> list[dict]:
        """List the image files and their labels."""
        samples = self._read_ann_file() if self.ann_file else self._scan()
        if not samples:
            raise FileNotFoundError(
                f"ImageFolder: found no images with extensions {self.extensions} in "
                f"{self.ann_file or self.data_prefix}"
            )
        return [
            {"img_path": path, "gt_label": np.array(label, dtype=np.int64)}
            for path, label in samples
        ]

    def get_sizes(self) -> list[tuple[int, int]]:
        """Return ``(h, w)`` of every image, read from file headers (no decoding), cached.

        Used by ``SizeBucketBatchSampler`` to batch images of similar sizes.
        """
        if self._sizes is None:
            sizes = []
            for info in self.data_infos:
                path = info["img_path"]
                try:
                    with Image.open(path) as img:  # lazy: parses the header only
                        w, h = img.size
                except (UnidentifiedImageError, OSError) as err:
                    raise OSError(
                        f"ImageFolder: cannot read the size of {path!r} ({err}); the file is "
                        f"corrupt or not an image. Replace or remove it."
                    ) from err
                sizes.append((h, w))
            self._sizes = sizes
        return list(self._sizes)
