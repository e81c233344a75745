"""CIFAR-10 / CIFAR-100 from the official "python version" archives.

The archives hold Python pickles of plain dicts of NumPy arrays, as published by the dataset
authors. Their md5 is checked against the published value (``check_integrity=True``, the
default), and they are read with a restricted unpickler that only rebuilds NumPy arrays and
plain containers: a file that asks for any other Python object (which could run code) is
refused, even with ``check_integrity=False``.
"""

from __future__ import annotations

import os.path as osp
import pickle
from typing import Any, Sequence, Union

import numpy as np

from .base_dataset import BaseDataset
from .registry import DATASETS


class _ArrayUnpickler(pickle.Unpickler):
    """An unpickler that only rebuilds NumPy arrays (and the containers around them)."""

    ALLOWED = {
        ("numpy", "ndarray"),
        ("numpy", "dtype"),
        ("numpy.core.multiarray", "_reconstruct"),
        ("numpy._core.multiarray", "_reconstruct"),
        ("numpy.core.multiarray", "scalar"),
        ("numpy._core.multiarray", "scalar"),
        ("_codecs", "encode"),  # protocol-2 pickles of bytes written by Python 3
    }

    def find_class(self, module: str, name: str) -> Any:
        """Return the allowed global ``module.name``; refuse anything else."""
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(
                f"refusing to unpickle {module}.{name}: CIFAR files hold only NumPy arrays, "
                "lists and dicts, and other objects could run code while loading"
            )
        return super().find_class(module, name)


@DATASETS.register_module()
class CIFAR10(BaseDataset):
    """CIFAR-10 (60k 32×32 RGB images, 10 classes): `<https://www.cs.toronto.edu/~kriz/cifar.html>`_.

    Expects ``<data_prefix>/cifar-10-batches-py/{data_batch_1..5,test_batch,batches.meta}``.
    Samples are ``img`` (32×32×3 uint8, RGB) and ``gt_label``.

    Args:
        data_prefix: Directory holding ``cifar-10-batches-py`` (e.g. ``data/cifar10``).
        pipeline: Transforms.
        classes: Override class names.
        test_mode: Load ``test_batch`` instead of the training batches.
        download: Download and extract the archive into ``data_prefix`` when files are missing.
        check_integrity: Verify each file's md5 against the published one (turn off only for
            hand-made test files).
        **kwargs: Passed to :class:`BaseDataset` (e.g. ``seed``).
    """

    base_folder = "cifar-10-batches-py"
    url = "https://www.cs.toronto.edu/~kriz/cifar-10-python.tar.gz"
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {
        "filename": "batches.meta",
        "key": "label_names",
        "md5": "5ff9c542aee3614f3951f8cda6e48888",
    }
    label_key = "labels"
    CLASSES = [
        'airplane', 'automobile', 'bird', 'cat', 'deer',
        'dog', 'frog', 'horse', 'ship', 'truck',
    ]  # fmt: skip

    def __init__(
        self,
        data_prefix: str,
        pipeline: Sequence[Union[dict, Any]] = (),
        classes: Union[str, Sequence[str]] | None = None,
        test_mode: bool = False,
        download: bool = False,
        check_integrity: bool = True,
        **kwargs: Any,
    ) -> None:
        if not isinstance(data_prefix, str):
            raise TypeError(f"{type(self).__name__}: data_prefix must be a directory path str")
        self.download = download
        self.check_integrity = check_integrity
        super().__init__(data_prefix, pipeline, classes, test_mode=test_mode, **kwargs)

    @property
    def folder(self) -> str:
        """Directory holding the batch files."""
        return osp.join(self.data_prefix, self.base_folder)

    def _required_files(self) -> list[list[str]]:
        split = self.test_list if self.test_mode else self.train_list
        return [*split, [self.meta["filename"], self.meta["md5"]]]

    def _missing_files(self) -> list[str]:
        return [n for n, _ in self._required_files() if not osp.isfile(osp.join(self.folder, n))]

    def _download(self) -> None:
        from torchvision.datasets.utils import download_and_extract_archive

        try:
            download_and_extract_archive(
                self.url, self.data_prefix, filename=self.filename, md5=self.tgz_md5
            )
        except Exception as err:  # network, disk or checksum failure: say what to do
            raise FileNotFoundError(
                f"{type(self).__name__}: downloading {self.url} into {self.data_prefix} failed "
                f"({type(err).__name__}: {err}). Download the archive by hand and extract it "
                f"there so that {self.folder} exists."
            ) from err

    def _verify(self) -> None:
        from torchvision.datasets.utils import check_integrity

        for name, md5 in self._required_files():
            path = osp.join(self.folder, name)
            if not check_integrity(path, md5):
                raise ValueError(
                    f"{type(self).__name__}: {path} does not have the published md5 {md5}; the "
                    f"file is corrupt or not the official one. Delete {self.folder} and use "
                    f"download=True (or re-extract {self.url})."
                )

    def _load_pickle(self, name: str) -> dict:
        path = osp.join(self.folder, name)
        with open(path, "rb") as f:
            try:
                return _ArrayUnpickler(f, encoding="latin1").load()
            except (pickle.UnpicklingError, EOFError, ValueError) as err:
                raise ValueError(
                    f"{type(self).__name__}: cannot read {path}: {err}. The file is corrupt or "
                    f"not an official CIFAR file; delete {self.folder} and use download=True."
                ) from err

    def load_annotations(self) -> list[dict]:
        """Read the pickled batches into ``img``/``gt_label`` dicts."""
        missing = self._missing_files()
        if missing and self.download:
            self._download()
            missing = self._missing_files()
        if missing:
            raise FileNotFoundError(
                f"{type(self).__name__}: looked in {self.folder} and did not find "
                f"{', '.join(missing)}. Pass download=True to fetch {self.url} into "
                f"{self.data_prefix} (tools/train.py: --cfg-options data.train.download=True; "
                f"tools/test.py: data.test.download=True), or download and extract it there "
                f"yourself."
            )
        if self.check_integrity:
            self._verify()
        if self.CLASSES is None or type(self).CLASSES == self.CLASSES:
            self.CLASSES = list(self._load_pickle(self.meta["filename"])[self.meta["key"]])
        images, labels = [], []
        for name, _ in self.test_list if self.test_mode else self.train_list:
            entry = self._load_pickle(name)
            images.append(np.asarray(entry["data"], dtype=np.uint8).reshape(-1, 3, 32, 32))
            labels.extend(entry[self.label_key])
        data = np.concatenate(images).transpose(0, 2, 3, 1)  # N×H×W×C, RGB
        return [
            {"img": img, "gt_label": np.array(label, dtype=np.int64)}
            for img, label in zip(data, labels)
        ]


@DATASETS.register_module()
class CIFAR100(CIFAR10):
    """CIFAR-100 (100 fine classes). Expects ``<data_prefix>/cifar-100-python/{train,test,meta}``.

    Arguments as :class:`CIFAR10`.
    """

    base_folder = "cifar-100-python"
    url = "https://www.cs.toronto.edu/~kriz/cifar-100-python.tar.gz"
    filename = "cifar-100-python.tar.gz"
    tgz_md5 = "eb9058c3a382ffc7106e4002c42a8d85"
    train_list = [["train", "16019d7e3df5f24257cddd939b257f8d"]]
    test_list = [["test", "f0ef6b0ae62326f3e7ffdfab6717acfc"]]
    meta = {
        "filename": "meta",
        "key": "fine_label_names",
        "md5": "7973b15100ade9c7d40fb424638fde48",
    }
    label_key = "fine_labels"
    CLASSES = None  # read from the meta file
