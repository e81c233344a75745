import numpy as np
import pytest
import torch
from PIL import Image

from mmpar.datasets import (
    CIFAR10,
    CIFAR100,
    DATASETS,
    BaseDataset,
    ConcatDataset,
    Digits,
    ImageFolder,
    RepeatDataset,
    build_dataset,
)

AUG_PIPELINE = [
    dict(type="RandomCrop", size=8, padding=2),
    dict(type="RandomFlip", flip_prob=0.5),
    dict(type="ImageToTensor", keys=["img"]),
]


class ToyDataset(BaseDataset):
    CLASSES = ["a", "b", "c"]

    def __init__(self, labels=(0, 1, 2, 0), **kwargs):
        self.labels = labels
        super().__init__(**kwargs)

    def load_annotations(self):
        rng = np.random.default_rng(1)
        return [
            {"img": rng.integers(0, 256, (8, 8, 3), dtype=np.uint8), "gt_label": np.int64(lab)}
            for lab in self.labels
        ]


# ---------------------------------------------------------------- CIFAR


def test_cifar10_reads_real_format(cifar10_root):
    root, data = cifar10_root
    train = CIFAR10(str(root), check_integrity=False)
    test = CIFAR10(str(root), test_mode=True, check_integrity=False)
    assert len(train) == 20 and len(test) == 3
    assert train.CLASSES == [f"c{i}" for i in range(10)]
    raw, labels = data["train"]
    k = 13
    img = train[k]["img"]
    assert img.shape == (32, 32, 3) and img.dtype == np.uint8
    # pixel (y, x) of channel c is raw[c * 1024 + y * 32 + x] in the published layout
    assert img[5, 7, 0] == raw[k, 0 * 1024 + 5 * 32 + 7]
    assert img[5, 7, 2] == raw[k, 2 * 1024 + 5 * 32 + 7]
    assert train.get_gt_labels().tolist() == labels
    assert test.get_gt_labels().tolist() == data["test"][1]


def test_cifar100_fine_labels(tmp_path, cifar_writer):
    data = cifar_writer(tmp_path, "cifar100", per_batch=6, num_test=2)
    train = CIFAR100(str(tmp_path), check_integrity=False)
    assert len(train) == 6 and len(train.CLASSES) == 100 and train.CLASSES[3] == "f3"
    assert train.get_gt_labels().tolist() == data["train"][1]


def test_cifar_checks_md5_by_default(cifar10_root):
    root, _ = cifar10_root
    with pytest.raises(ValueError, match="md5.*download=True"):
        CIFAR10(str(root))


def test_cifar_missing_data_error(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        CIFAR10(str(tmp_path / "nowhere"))
    msg = str(err.value)
    assert "cifar-10-batches-py" in msg and "data_batch_1" in msg and "batches.meta" in msg
    assert "download=True" in msg and "cifar-10-python.tar.gz" in msg


def test_cifar_download_failure_is_reported(tmp_path, monkeypatch):
    import torchvision.datasets.utils as tv_utils

    def fail(*args, **kwargs):
        raise OSError("network unreachable")

    monkeypatch.setattr(tv_utils, "download_and_extract_archive", fail)
    with pytest.raises(FileNotFoundError, match="network unreachable"):
        CIFAR10(str(tmp_path), download=True)


def test_cifar_download_uses_official_archive(tmp_path, monkeypatch, cifar_writer):
    import torchvision.datasets.utils as tv_utils

    calls = []

    def fake_download(url, download_root, filename=None, md5=None):
        calls.append((url, filename, md5))
        cifar_writer(tmp_path, "cifar10")  # what extracting the archive produces

    monkeypatch.setattr(tv_utils, "download_and_extract_archive", fake_download)
    ds = CIFAR10(str(tmp_path), download=True, check_integrity=False)
    assert len(ds) == 20
    assert calls == [(CIFAR10.url, "cifar-10-python.tar.gz", "c58f30108f718f92721af3b95e74349a")]


def test_cifar_registered_and_built_from_config(cifar10_root):
    root, _ = cifar10_root
    ds = build_dataset(dict(type="CIFAR10", data_prefix=str(root), check_integrity=False))
    assert isinstance(ds, CIFAR10) and "CIFAR100" in DATASETS.module_dict


# ---------------------------------------------------------------- Digits


def test_digits_split_is_deterministic_and_disjoint():
    train, val = Digits(), Digits(test_mode=True)
    assert len(train) + len(val) == 1797
    assert len(train) == round(1797 * 0.8)
    img = train.data_infos[0]["img"]
    assert img.shape == (8, 8, 1) and img.dtype == np.uint8 and img.max() <= 255
    key = lambda ds: {d["img"].tobytes() + bytes([int(d["gt_label"])]) for d in ds.data_infos}  # noqa: E731
    again = Digits()
    assert [d["img"].tobytes() for d in again.data_infos] == [
        d["img"].tobytes() for d in train.data_infos
    ]
    # the sklearn data contains a few duplicate images, so compare counts of (img, label) pairs
    assert len(key(train) & key(val)) < 10
    other = Digits(split_seed=1)
    assert [d["img"].tobytes() for d in other.data_infos] != [
        d["img"].tobytes() for d in train.data_infos
    ]
    assert sorted(set(train.get_gt_labels().tolist())) == list(range(10))


def test_digits_bad_ratio():
    with pytest.raises(ValueError, match="split_ratio"):
        Digits(split_ratio=1.5)


def test_digits_missing_sklearn(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_sklearn(name, *args, **kwargs):
        if name.startswith("sklearn"):
            raise ImportError("No module named sklearn")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_sklearn)
    with pytest.raises(ImportError, match=r"mmpar\[demo\]"):
        Digits()


# ---------------------------------------------------------------- ImageFolder


def test_image_folder_scans_classes_and_sizes(image_folder):
    root, sizes = image_folder
    pipeline = [dict(type="LoadImageFromFile")]
    ds = ImageFolder(str(root), pipeline)
    assert ds.CLASSES == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert ds.get_gt_labels().tolist() == [0, 0, 0, 1, 1]
    assert ds.get_sizes() == sizes["cat"] + sizes["dog"]
    for i, (h, w) in enumerate(ds.get_sizes()):
        sample = ds[i]
        assert sample["img"].shape == (h, w, 3)
        expected = np.asarray(Image.open(ds.data_infos[i]["img_path"]))
        np.testing.assert_array_equal(sample["img"], expected)


def test_image_folder_corrupt_image_named(image_folder):
    root, _ = image_folder
    bad = root / "dog" / "broken.png"
    bad.write_bytes(b"not a png at all")
    ds = ImageFolder(str(root), [dict(type="LoadImageFromFile")])
    idx = [i for i, d in enumerate(ds.data_infos) if d["img_path"].endswith("broken.png")][0]
    with pytest.raises(OSError, match="broken.png"):
        ds[idx]
    with pytest.raises(OSError, match="broken.png"):
        ds.get_sizes()


def test_image_folder_ann_file_label_out_of_range(image_folder):
    root, _ = image_folder
    ann = root / "ann.txt"
    ann.write_text("cat/img0.png 0\ndog/img1.png 7\n")
    with pytest.raises(ValueError, match=r"sample 1 .*dog/img1.png.*gt_label 7"):
        ImageFolder(str(root), classes=["cat", "dog"], ann_file=str(ann))
    ann.write_text("cat/img0.png 0\ndog/img1.png 1\n")
    ds = ImageFolder(str(root), classes=["cat", "dog"], ann_file=str(ann))
    assert ds.get_gt_labels().tolist() == [0, 1]


def test_image_folder_empty(tmp_path):
    (tmp_path / "a").mkdir()
    with pytest.raises(FileNotFoundError, match="found no images"):
        ImageFolder(str(tmp_path))


# ---------------------------------------------------------------- evaluate


def test_evaluate_topk_hand_computed():
    ds = ToyDataset(labels=(0, 1, 2, 0))
    scores = [
        [0.7, 0.2, 0.1],  # label 0: top-1 hit
        [0.5, 0.3, 0.2],  # label 1: top-1 miss, top-2 hit
        [0.6, 0.3, 0.1],  # label 2: miss in top-2
        [0.1, 0.1, 0.8],  # label 0: tie at rank 2 -> lower index (0) ranks first: top-2 hit
    ]
    res = ds.evaluate([np.array(s) for s in scores], metric_options=dict(topk=(1, 2, 5)))
    assert res == {"accuracy_top-1": 25.0, "accuracy_top-2": 75.0, "accuracy_top-5": 100.0}
    res = ds.evaluate(torch.tensor(scores), metric="class_accuracy")
    assert res == {"class_accuracy/a": 50.0, "class_accuracy/b": 0.0, "class_accuracy/c": 0.0}


def test_evaluate_class_accuracy_skips_empty_classes_and_uses_indices():
    ds = ToyDataset(labels=(0, 0, 1, 1))
    scores = np.array([[1, 0, 0], [0, 1, 0], [0, 1, 0], [0, 1, 0]], dtype=float)
    res = ds.evaluate(scores, metric=["class_accuracy", "accuracy"])
    assert res["class_accuracy/a"] == 50.0 and res["class_accuracy/b"] == 100.0
    assert "class_accuracy/c" not in res and res["accuracy_top-1"] == 75.0
    part = ds.evaluate(scores[2:], indices=[2, 3], metric_options=dict(topk=1))
    assert part == {"accuracy_top-1": 100.0}


def test_evaluate_errors():
    ds = ToyDataset()
    with pytest.raises(KeyError, match="supported: \\['accuracy', 'class_accuracy'\\]"):
        ds.evaluate([np.ones(3)] * 4, metric="mAP")
    with pytest.raises(ValueError, match="got 2 results for 4 samples"):
        ds.evaluate([np.ones(3)] * 2)


def test_label_out_of_range_names_sample():
    with pytest.raises(ValueError, match=r"sample 2 .*gt_label 5"):
        ToyDataset(labels=(0, 1, 5))


# ---------------------------------------------------------------- per-sample seeds


def test_augmentation_is_function_of_seed_epoch_index():
    ds = ToyDataset(labels=(0, 1, 2) * 10, pipeline=AUG_PIPELINE)
    first = [ds[i]["img"] for i in range(len(ds))]
    # any access order gives the same tensors
    for i in reversed(range(len(ds))):
        assert torch.equal(ds[i]["img"], first[i])
    # augmentations differ across samples of one epoch: sample 0's image under the keys of the
    # other indices (the images differ anyway, so compare one image with itself)
    assert torch.equal(ds.prepare_data(0, rng_key=(0,), epoch=0)["img"], first[0])
    under_other_keys = [ds.prepare_data(0, rng_key=(k,), epoch=0)["img"] for k in range(1, 10)]
    assert not all(torch.equal(img, first[0]) for img in under_other_keys)
    # ... and across epochs
    ds.set_epoch(1)
    assert ds.epoch == 1
    assert not all(torch.equal(ds[i]["img"], first[i]) for i in range(len(ds)))
    ds.set_epoch(0)
    assert all(torch.equal(ds[i]["img"], first[i]) for i in range(len(ds)))
    other_seed = ToyDataset(labels=(0, 1, 2) * 10, pipeline=AUG_PIPELINE, seed=5)
    assert not all(torch.equal(other_seed[i]["img"], first[i]) for i in range(len(ds)))


def _by_index(loader):
    out = {}
    for batch in loader:
        for idx, img in zip(batch["idx"], batch["img"]):
            out[int(idx)] = img
    return out


class IndexedToy(ToyDataset):
    def __getitem__(self, idx):
        return {"idx": idx, "img": super().__getitem__(idx)["img"]}


def test_same_sample_identical_across_workers_and_orders():
    ds = IndexedToy(labels=(0, 1, 2) * 8, pipeline=AUG_PIPELINE)
    serial = _by_index(torch.utils.data.DataLoader(ds, batch_size=5, shuffle=False))
    gen = torch.Generator().manual_seed(3)
    loader = torch.utils.data.DataLoader(
        ds, batch_size=5, shuffle=True, num_workers=2, generator=gen
    )
    workers = _by_index(loader)
    assert sorted(workers) == list(range(len(ds)))
    for i in range(len(ds)):
        assert torch.equal(serial[i], workers[i])


def test_set_epoch_reaches_persistent_workers():
    ds = IndexedToy(labels=(0, 1, 2) * 4, pipeline=AUG_PIPELINE)
    loader = torch.utils.data.DataLoader(ds, batch_size=4, num_workers=2, persistent_workers=True)
    epoch0 = _by_index(loader)
    ds.set_epoch(3)
    epoch3 = _by_index(loader)
    reference = IndexedToy(labels=(0, 1, 2) * 4, pipeline=AUG_PIPELINE)
    reference.set_epoch(3)
    for i in range(len(ds)):
        assert torch.equal(epoch3[i], reference[i]["img"])
    assert not all(torch.equal(epoch0[i], epoch3[i]) for i in range(len(ds)))


# ---------------------------------------------------------------- wrappers


def test_repeat_and_concat_wrappers():
    base = dict(type=ToyDataset, labels=(0, 1, 2), pipeline=AUG_PIPELINE)
    rep = build_dataset(dict(type="RepeatDataset", times=3, dataset=base))
    assert isinstance(rep, RepeatDataset) and len(rep) == 9 and rep.CLASSES == ["a", "b", "c"]
    assert rep.get_cat_ids(4) == [1]
    # repeated copies of one sample get different augmentations
    assert not all(torch.equal(rep[0]["img"], rep[k]["img"]) for k in (3, 6))
    cat = build_dataset([base, dict(base, labels=(2, 2))])
    assert isinstance(cat, ConcatDataset) and len(cat) == 5
    cat.set_epoch(2)
    assert all(d.epoch == 2 for d in cat.datasets)
    rep.set_epoch(4)
    assert rep.dataset.epoch == 4
    with pytest.raises(KeyError, match="times"):
        build_dataset(dict(type="RepeatDataset", dataset=base))


def test_index_epoch_pair_sets_the_augmentation_epoch():
    ds = ToyDataset(labels=(0, 1, 2) * 4, pipeline=AUG_PIPELINE)
    ds.set_epoch(2)
    at_epoch2 = [ds[i]["img"] for i in range(len(ds))]
    ds.set_epoch(0)
    assert all(torch.equal(ds[(i, 2)]["img"], at_epoch2[i]) for i in range(len(ds)))
    assert ds.epoch == 0  # the pair form does not change the shared epoch
    rep = RepeatDataset(ds, 2)
    assert torch.equal(rep[(5, 3)]["img"], ds.prepare_data(5, rng_key=(5,), epoch=3)["img"])
    cat = ConcatDataset([ds, ds])
    assert torch.equal(cat[(13, 1)]["img"], ds.prepare_data(1, rng_key=(13,), epoch=1)["img"])
