"""Fixtures for dataset, pipeline and data-loader tests: real on-disk datasets in tmp_path."""

import pickle

import numpy as np
import pytest
from PIL import Image


def write_cifar(root, kind="cifar10", per_batch=4, num_test=3, seed=0):
    """Write a small dataset in the real CIFAR python format; return (images, labels) by split."""
    rng = np.random.default_rng(seed)
    if kind == "cifar10":
        folder = root / "cifar-10-batches-py"
        train_files = [f"data_batch_{i}" for i in range(1, 6)]
        test_file, meta_file = "test_batch", "batches.meta"
        label_key, meta = "labels", {"label_names": [f"c{i}" for i in range(10)]}
        num_classes = 10
    else:
        folder = root / "cifar-100-python"
        train_files, test_file, meta_file = ["train"], "test", "meta"
        label_key, meta = "fine_labels", {"fine_label_names": [f"f{i}" for i in range(100)]}
        num_classes = 100
    folder.mkdir(parents=True)
    out = {"train": ([], []), "test": ([], [])}

    def dump(name, n, split):
        data = rng.integers(0, 256, size=(n, 3072), dtype=np.uint8)
        labels = rng.integers(0, num_classes, size=n).tolist()
        with open(folder / name, "wb") as f:
            pickle.dump({"data": data, label_key: labels, "batch_label": name}, f)
        out[split][0].append(data)
        out[split][1].extend(labels)

    for name in train_files:
        dump(name, per_batch, "train")
    dump(test_file, num_test, "test")
    with open(folder / meta_file, "wb") as f:
        pickle.dump(meta, f)
    return {k: (np.concatenate(v[0]), v[1]) for k, v in out.items()}


@pytest.fixture
def cifar10_root(tmp_path):
    """A CIFAR-10 layout with 5×4 train and 3 test images; returns (root, data)."""
    return tmp_path, write_cifar(tmp_path, "cifar10")


def write_image_folder(root, sizes_by_class, seed=0):
    """Write ``root/<class>/img<i>.png`` RGB images of the given (h, w) sizes."""
    rng = np.random.default_rng(seed)
    for cls, sizes in sizes_by_class.items():
        (root / cls).mkdir(parents=True)
        for i, (h, w) in enumerate(sizes):
            pixels = rng.integers(0, 256, size=(h, w, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(root / cls / f"img{i}.png")
    return root


@pytest.fixture
def image_folder(tmp_path):
    """Two classes of PNGs of different sizes."""
    sizes = {"cat": [(10, 12), (16, 9), (7, 7)], "dog": [(12, 20), (5, 8)]}
    return write_image_folder(tmp_path / "imgs", sizes), sizes


@pytest.fixture
def cifar_writer():
    """The ``write_cifar(root, kind, per_batch, num_test)`` helper (test modules cannot import
    conftest under ``--import-mode=importlib``)."""
    return write_cifar


@pytest.fixture
def folder_writer():
    """The ``write_image_folder(root, sizes_by_class)`` helper."""
    return write_image_folder
