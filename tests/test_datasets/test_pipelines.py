import numpy as np
import pytest
import torch
from PIL import Image

from mmpar.datasets import PIPELINES
from mmpar.datasets.pipelines import (
    Collect,
    Compose,
    ImageToTensor,
    LoadImageFromFile,
    Normalize,
    RandomCrop,
    RandomFlip,
    Resize,
    ToDataContainer,
    ToTensor,
    make_rng,
    to_tensor,
)
from mmpar.parallel import DataContainer


def _img(h=6, w=5, c=3):
    return np.arange(h * w * c, dtype=np.uint8).reshape(h, w, c)


def _results(img=None, seed=0):
    return {"img": _img() if img is None else img, "_rng": make_rng(seed, 0, (0,))}


def test_load_image_from_file(tmp_path):
    pixels = np.random.default_rng(0).integers(0, 256, (9, 7, 3), dtype=np.uint8)
    Image.fromarray(pixels).save(tmp_path / "a.png")
    out = LoadImageFromFile()({"img_path": str(tmp_path / "a.png")})
    np.testing.assert_array_equal(out["img"], pixels)
    assert out["img_shape"] == out["ori_shape"] == (9, 7, 3) and out["ori_filename"] == "a.png"
    bgr = LoadImageFromFile(channel_order="bgr", to_float32=True)(
        {"img_prefix": str(tmp_path), "img_info": {"filename": "a.png"}}
    )
    assert bgr["img"].dtype == np.float32
    np.testing.assert_array_equal(bgr["img"], pixels[..., ::-1])
    gray = LoadImageFromFile(color_type="grayscale")({"img_path": str(tmp_path / "a.png")})
    assert gray["img"].shape == (9, 7)
    with pytest.raises(FileNotFoundError, match="missing.png"):
        LoadImageFromFile()({"img_path": str(tmp_path / "missing.png")})
    with pytest.raises(KeyError, match="img_path"):
        LoadImageFromFile()({})
    with pytest.raises(ValueError, match="backend"):
        LoadImageFromFile(file_client_args=dict(backend="petrel"))


def test_random_crop_with_padding_is_a_window_of_the_padded_image():
    img = _img(6, 5)
    out = RandomCrop(size=(6, 5), padding=2)(_results(img))
    crop = out["img"]
    assert crop.shape == (6, 5, 3) and out["img_shape"] == (6, 5, 3)
    padded = np.pad(img, ((2, 2), (2, 2), (0, 0)))
    windows = [
        padded[t : t + 6, l : l + 5]
        for t in range(5)
        for l in range(5)  # noqa: E741
    ]
    assert any(np.array_equal(crop, w) for w in windows)
    # deterministic given the generator, different across seeds
    crops = {
        RandomCrop(size=4, padding=2)(_results(img, seed=s))["img"].tobytes() for s in range(20)
    }
    assert len(crops) > 5
    again = RandomCrop(size=4, padding=2)(_results(img, seed=3))["img"]
    np.testing.assert_array_equal(
        again, RandomCrop(size=4, padding=2)(_results(img, seed=3))["img"]
    )


def test_random_crop_padding_options_and_errors():
    img = _img(3, 3)
    out = RandomCrop(size=5, pad_if_needed=True, pad_val=(1, 2, 3))(_results(img))["img"]
    assert out.shape == (5, 5, 3)
    # like torchvision/mmcls the missing size is padded on both sides, then cropped randomly
    np.testing.assert_array_equal(out[0, 0], [1, 2, 3])
    offsets = [(t, x) for t in range(3) for x in range(3)]
    assert any(np.array_equal(out[t : t + 3, x : x + 3], img) for t, x in offsets)
    with pytest.raises(ValueError, match="larger than the image"):
        RandomCrop(size=5)(_results(img))
    with pytest.raises(ValueError, match="padding"):
        RandomCrop(size=3, padding=(1, 2, 3))
    reflect = RandomCrop(size=5, padding=1, padding_mode="reflect")(_results(img))["img"]
    np.testing.assert_array_equal(reflect, np.pad(img, ((1, 1), (1, 1), (0, 0)), mode="reflect"))


def test_random_flip():
    img = _img()
    flipped = RandomFlip(flip_prob=1.0)(_results(img))
    assert flipped["flip"] is True and flipped["flip_direction"] == "horizontal"
    np.testing.assert_array_equal(flipped["img"], img[:, ::-1])
    vertical = RandomFlip(flip_prob=1.0, direction="vertical")(_results(img))
    np.testing.assert_array_equal(vertical["img"], img[::-1])
    kept = RandomFlip(flip_prob=0.0)(_results(img))
    assert kept["flip"] is False
    np.testing.assert_array_equal(kept["img"], img)
    flips = [RandomFlip(0.5)(_results(img, seed=s))["flip"] for s in range(200)]
    assert 70 < sum(flips) < 130
    with pytest.raises(ValueError, match="direction"):
        RandomFlip(direction="diagonal")


def test_random_transform_without_rng_uses_numpy_global_seed():
    img = _img(8, 8)  # 25 possible 4x4 windows, all different

    def crop_after_seed(seed):
        np.random.seed(seed)
        return RandomCrop(size=4)({"img": img})["img"].tobytes()

    assert crop_after_seed(1) == crop_after_seed(1)
    # a crop that ignored the global RNG would give one window for every seed / every draw
    assert len({crop_after_seed(s) for s in range(20)}) > 5
    np.random.seed(1)
    draws = [RandomCrop(size=4)({"img": img})["img"].tobytes() for _ in range(20)]
    assert len(set(draws)) > 5 and draws[0] == crop_after_seed(1)


def test_resize():
    img = np.zeros((4, 8, 3), np.uint8)
    img[:, 4:] = 200
    out = Resize(size=(2, 4))({"img": img})
    assert out["img"].shape == (2, 4, 3) and out["img"].dtype == np.uint8
    # antialiased bilinear: the outer columns keep their value, the edge is blended
    np.testing.assert_array_equal(out["img"][:, 0], 0)
    np.testing.assert_array_equal(out["img"][:, 3], 200)
    assert 0 < out["img"][0, 1, 0] < 200
    nearest = Resize(size=(2, 4), interpolation="nearest")({"img": img})["img"]
    np.testing.assert_array_equal(nearest[:, :2], 0)
    np.testing.assert_array_equal(nearest[:, 2:], 200)
    assert out["scale_factor"] == (0.5, 0.5)
    assert Resize(size=2, keep_ratio=True)({"img": img})["img"].shape == (2, 4, 3)
    assert Resize(size=(6, -1))({"img": img})["img"].shape == (6, 12, 3)
    assert Resize(size=(3, 100), keep_ratio=True)({"img": img})["img"].shape == (3, 6, 3)
    assert Resize(size=(100, 4), keep_ratio=True)({"img": img})["img"].shape == (4, 8, 3)
    gray = Resize(size=3, interpolation="nearest")({"img": np.ones((6, 6), np.float32)})
    assert gray["img"].shape == (3, 3) and gray["img"].dtype == np.float32
    with pytest.raises(ValueError, match="interpolation"):
        Resize(4, interpolation="lanczos9")


def test_normalize():
    img = np.array([[[10, 20, 30]]], np.uint8)
    out = Normalize(mean=[10, 10, 10], std=[2, 5, 10], to_rgb=False)({"img": img})
    np.testing.assert_allclose(out["img"], [[[0, 2, 2]]])
    assert out["img"].dtype == np.float32
    assert out["img_norm_cfg"] == dict(mean=[10, 10, 10], std=[2, 5, 10], to_rgb=False)
    bgr = Normalize(mean=[0, 0, 0], std=[1, 1, 1], to_rgb=True)({"img": img})
    np.testing.assert_allclose(bgr["img"], [[[30, 20, 10]]])
    with pytest.raises(ValueError, match="1 mean/std values but .* has 3 channels"):
        Normalize(mean=[0], std=[1])({"img": img})
    with pytest.raises(ValueError, match="non-zero"):
        Normalize(mean=[0], std=[0])


def test_image_to_tensor_and_to_tensor():
    out = ImageToTensor(keys=["img"])({"img": _img(2, 3)})
    assert out["img"].shape == (3, 2, 3) and out["img"].dtype == torch.float32
    assert out["img"][1, 1, 2] == _img(2, 3)[1, 2, 1]
    gray = ImageToTensor(keys=["img"])({"img": np.ones((2, 3), np.float32)})
    assert gray["img"].shape == (1, 2, 3)
    lab = ToTensor(keys=["gt_label"])({"gt_label": np.int64(4)})
    assert lab["gt_label"].dtype == torch.int64 and lab["gt_label"].item() == 4
    assert to_tensor(3).dtype == torch.long and to_tensor(0.5).dtype == torch.float32
    assert to_tensor([1, 2]).tolist() == [1, 2]
    with pytest.raises(TypeError, match="str"):
        to_tensor("x")
    with pytest.raises(KeyError, match="no key 'gt_label'"):
        ToTensor(keys=["gt_label"])({"img": 1})


def test_collect_and_to_data_container():
    results = {
        "img": torch.zeros(3, 4, 4),
        "gt_label": torch.tensor(2),
        "filename": "x.png",
        "flip": False,
        "junk": 1,
    }
    out = Collect(keys=["img", "gt_label"])(dict(results))
    assert set(out) == {"img", "gt_label", "img_metas"}
    assert isinstance(out["img"], DataContainer) and out["img"].stack
    assert torch.is_tensor(out["gt_label"])
    meta = out["img_metas"]
    assert isinstance(meta, DataContainer) and meta.cpu_only
    assert meta.data == {"filename": "x.png", "flip": False}
    with pytest.raises(KeyError, match="Collect: results has no key 'boxes'"):
        Collect(keys=["boxes"])(dict(results))
    wrapped = ToDataContainer(fields=[dict(key="gt_label", cpu_only=True)])(dict(results))
    assert isinstance(wrapped["gt_label"], DataContainer) and wrapped["gt_label"].cpu_only


def test_compose_builds_from_registry_and_drops_on_none():
    pipe = Compose([dict(type="RandomFlip", flip_prob=1.0), lambda r: dict(r, seen=True)])
    out = pipe(_results())
    assert out["seen"] and out["flip"]
    assert Compose([lambda r: None, dict(type="RandomFlip")])({}) is None
    with pytest.raises(TypeError, match="step 0"):
        Compose([3])
    with pytest.raises(KeyError, match="RandomFlp.*Did you mean: RandomFlip"):
        Compose([dict(type="RandomFlp")])
    assert "Collect" in PIPELINES.module_dict
