import numpy as np
import pytest
import torch

from mmpar.datasets import (
    PIPELINES,
    DistributedSampler,
    ImageFolder,
    InfiniteSampler,
    SizeBucketBatchSampler,
    build_dataloader,
    build_dataset,
)
from mmpar.parallel import DataContainer

torch.set_num_threads(1)

TRAIN_PIPELINE = [
    dict(type="RandomCrop", size=8, padding=2),
    dict(type="RandomFlip", flip_prob=0.5),
    dict(type="Normalize", mean=[128.0], std=[64.0], to_rgb=False),
    dict(type="ImageToTensor", keys=["img"]),
    dict(type="ToTensor", keys=["gt_label"]),
    dict(type="Collect", keys=["img", "gt_label"]),
]


def digits(**kwargs):
    return build_dataset(dict(type="Digits", pipeline=TRAIN_PIPELINE, **kwargs))


def flat(loader):
    """(sample_idx, img, label) for every sample, in loader order."""
    out = []
    for batch in loader:
        metas = [m for chunk in batch["img_metas"].data for m in chunk]
        imgs = torch.cat(batch["img"].data)
        labels = batch["gt_label"]  # a plain field: one stacked tensor, as default_collate
        out += [(m["sample_idx"], img, lab) for m, img, lab in zip(metas, imgs, labels)]
    return out


def test_batches_are_collated_data_containers():
    ds = digits(test_mode=True)
    loader = build_dataloader(ds, samples_per_gpu=4, workers_per_gpu=0, num_gpus=2, seed=0)
    assert isinstance(loader.sampler, DistributedSampler)
    assert loader.sampler.num_replicas == 1 and loader.batch_size == 8
    batch = next(iter(loader))
    assert isinstance(batch["img"], DataContainer) and batch["img"].stack
    assert [t.shape for t in batch["img"].data] == [(4, 1, 8, 8), (4, 1, 8, 8)]  # per device
    assert batch["img_metas"].cpu_only and len(batch["img_metas"].data[0]) == 4
    labels = batch["gt_label"]  # plain field: stacked whole (scatter splits it per device)
    assert isinstance(labels, torch.Tensor) and labels.shape == (8,)
    idx = [m["sample_idx"] for chunk in batch["img_metas"].data for m in chunk]
    assert labels.tolist() == ds.get_gt_labels()[idx].tolist()


def test_shuffle_flag_and_seed():
    ds = digits(test_mode=True)
    ordered = build_dataloader(ds, 16, 0, shuffle=False)
    assert [i for i, _, _ in flat(ordered)] == list(range(len(ds)))
    a = [i for i, _, _ in flat(build_dataloader(ds, 16, 0, seed=1))]
    b = [i for i, _, _ in flat(build_dataloader(ds, 16, 0, seed=1))]
    c = [i for i, _, _ in flat(build_dataloader(ds, 16, 0, seed=2))]
    assert a == b != c and sorted(a) == list(range(len(ds)))


FOLDER_PIPELINE = [
    dict(type="LoadImageFromFile"),
    dict(type="ImageToTensor", keys=["img"]),
    dict(type="ToTensor", keys=["gt_label"]),
    dict(type="Collect", keys=["img", "gt_label"]),
]


def test_variable_size_images_are_padded(image_folder):
    root, sizes = image_folder
    ds = ImageFolder(str(root), FOLDER_PIPELINE)
    loader = build_dataloader(ds, samples_per_gpu=5, workers_per_gpu=0, shuffle=False)
    batch = next(iter(loader))
    (imgs,) = batch["img"].data
    all_sizes = sizes["cat"] + sizes["dog"]
    assert imgs.shape == (5, 3, max(h for h, _ in all_sizes), max(w for _, w in all_sizes))
    for k, (h, w) in enumerate(all_sizes):
        np.testing.assert_array_equal(imgs[k, :, :h, :w].numpy(), ds[k]["img"].data.numpy())
        assert imgs[k, :, h:, :].abs().sum() == 0 and imgs[k, :, :, w:].abs().sum() == 0
        assert batch["img_metas"].data[0][k]["img_shape"] == (h, w, 3)


def test_size_bucket_batch_sampler_from_config(image_folder):
    root, _ = image_folder
    ds = ImageFolder(str(root), FOLDER_PIPELINE)
    loader = build_dataloader(
        ds, 2, 0, seed=0, sampler_cfg=dict(type="SizeBucketBatchSampler", bucket_size_multiplier=3)
    )
    assert isinstance(loader.batch_sampler, SizeBucketBatchSampler)
    assert loader.batch_sampler.batch_size == 2
    batches = list(loader.batch_sampler)
    assert all(len(b) <= 2 for b in batches)
    assert {i for b in batches for i in b} == set(range(len(ds)))
    assert sum(len(b["img_metas"].data[0]) for b in loader) == sum(len(b) for b in batches)


def test_infinite_sampler_from_config():
    ds = digits(test_mode=True)
    loader = build_dataloader(ds, 100, 0, seed=0, sampler_cfg=dict(type="InfiniteSampler"))
    assert isinstance(loader.sampler, InfiniteSampler)
    it = iter(loader)
    batches = [next(it) for _ in range(5)]  # 500 samples from a 359-sample dataset
    assert sum(len(b["img_metas"].data[0]) for b in batches) == 500


def test_unknown_sampler_type():
    with pytest.raises(KeyError, match="RandomSamplr"):
        build_dataloader(digits(test_mode=True), 2, 0, sampler_cfg=dict(type="RandomSamplr"))


def test_workers_are_reproducible_and_match_single_process():
    ds = digits(test_mode=True)
    serial = flat(build_dataloader(ds, 16, 0, seed=3))
    workers = flat(build_dataloader(ds, 16, 2, seed=3))
    again = flat(build_dataloader(ds, 16, 2, seed=3, persistent_workers=True))
    assert len(serial) == len(workers) == len(again) == len(ds)
    for (i, img, lab), (j, img2, lab2), (k, img3, _) in zip(serial, workers, again):
        assert i == j == k and lab == lab2
        assert torch.equal(img, img2) and torch.equal(img, img3)


@PIPELINES.register_module()
class _GlobalNoise:
    """A third-party style transform that uses NumPy's global RNG."""

    def __call__(self, results):
        results["noise"] = float(np.random.rand())
        return results


def test_worker_init_fn_seeds_global_rngs():
    pipeline = [dict(type="_GlobalNoise"), dict(type="Collect", keys=["noise"])]
    ds = build_dataset(dict(type="Digits", pipeline=pipeline, test_mode=True))

    def noise(seed):
        loader = build_dataloader(ds, 8, 2, seed=seed, shuffle=False)
        return [v for b in loader for v in b["noise"].tolist()]

    first = noise(7)
    assert first == noise(7) and first != noise(8)
    assert len(set(first)) > len(first) // 2  # workers do not share a stream


def test_mid_epoch_resume_gives_identical_batches():
    ds = digits()
    full = build_dataloader(ds, 32, 0, seed=5)
    full.sampler.set_epoch(2)
    reference = flat(full)
    resumed = build_dataloader(digits(), 32, 2, seed=5)
    resumed.sampler.set_epoch(2)
    resumed.sampler.set_start_index(3 * 32)  # three batches already ran
    rest = flat(resumed)
    assert len(rest) == len(reference) - 96
    for (i, img, _), (j, img2, _) in zip(reference[96:], rest):
        assert i == j and torch.equal(img, img2)


def test_bad_arguments():
    with pytest.raises(ValueError, match="samples_per_gpu"):
        build_dataloader(digits(test_mode=True), 0, 0)


def test_round_up_reaches_the_default_sampler():
    # mmcls 0.x passes round_up to build_dataloader; it controls the sampler's padding.
    ds = digits(test_mode=True)
    assert build_dataloader(ds, 4, 0).sampler.round_up is True
    assert build_dataloader(ds, 4, 0, round_up=False).sampler.round_up is False
