"""init_model / inference_model on real Digits images (files and arrays, 1 and 2 processes)."""

import numpy as np
import pytest
import torch
from PIL import Image

from mmpar import Config
from mmpar.apis import inference_model, init_model
from mmpar.datasets import Digits

torch.set_num_threads(1)

CONFIG = """
model = dict(
    type='ImageClassifier',
    backbone=dict(type='LeNet', in_channels=1, input_size=8, padding=2),
    head=dict(type='LinearClsHead', num_classes=10, in_channels=84),
)
test_pipeline = [
    dict(type='Normalize', mean=[127.5], std=[127.5], to_rgb=False),
    dict(type='ImageToTensor', keys=['img']),
    dict(type='Collect', keys=['img']),
]
data = dict(
    samples_per_gpu=16,
    workers_per_gpu=0,
    test=dict(type='Digits', test_mode=True, pipeline=test_pipeline),
)
"""


@pytest.fixture(scope="module")
def digits_images():
    val = Digits(pipeline=[], test_mode=True)
    return [val.data_infos[i]["img"] for i in range(12)]


@pytest.fixture
def model():
    torch.manual_seed(0)
    return init_model(Config.fromstring(CONFIG, ".py"))


def _scores(model, imgs):
    x = torch.stack(
        [torch.from_numpy((i.astype(np.float32) - 127.5) / 127.5).permute(2, 0, 1) for i in imgs]
    )
    with torch.no_grad():
        return model(img=x, return_loss=False)


def test_predictions_are_the_argmax_of_the_model_scores(model, digits_images):
    preds = inference_model(model, digits_images, batch_size=5)
    assert isinstance(preds, list) and len(preds) == len(digits_images)
    for pred, score in zip(preds, _scores(model, digits_images)):
        score = np.asarray(score)
        assert pred["pred_label"] == int(score.argmax())
        assert pred["pred_score"] == pytest.approx(float(score.max()), abs=1e-6)
        assert pred["pred_class"] == str(pred["pred_label"])  # Digits CLASSES '0'..'9'


def test_single_image_returns_one_dict(model, digits_images):
    pred = inference_model(model, digits_images[0])
    assert isinstance(pred, dict)
    assert pred == inference_model(model, digits_images[:1])[0]


def test_grayscale_files_match_arrays_and_keep_input_order(model, digits_images, tmp_path):
    paths = []
    for i, img in enumerate(digits_images):
        paths.append(tmp_path / f"{i}.png")
        Image.fromarray(img[..., 0], mode="L").save(paths[-1])
    from_files = inference_model(model, [str(p) for p in paths], batch_size=4)
    from_arrays = inference_model(model, digits_images, batch_size=7)
    assert from_files == from_arrays


def test_two_worker_processes_give_the_same_predictions(model, digits_images):
    assert inference_model(model, digits_images, batch_size=3, workers=2) == inference_model(
        model, digits_images, batch_size=3
    )


def test_checkpoint_weights_and_classes_are_loaded(model, digits_images, tmp_path, monkeypatch):
    from mmpar.runner.checkpoint import save_checkpoint

    ckpt = tmp_path / "model.pth"
    names = [f"digit-{i}" for i in range(10)]
    # As in mmcv, save_checkpoint writes the model's CLASSES into meta (over a caller's).
    monkeypatch.setattr(model, "CLASSES", names, raising=False)
    save_checkpoint(model, str(ckpt), meta=dict(CLASSES=["ignored"]))
    loaded = init_model(Config.fromstring(CONFIG, ".py"), str(ckpt))
    for key, value in model.state_dict().items():
        assert torch.equal(value, loaded.state_dict()[key]), key
    pred = inference_model(loaded, digits_images[0])
    assert pred["pred_class"] == names[pred["pred_label"]]


def test_bad_inputs_give_clear_errors(model):
    with pytest.raises(TypeError, match="file path or a numpy array"):
        inference_model(model, [123])
    with pytest.raises(AttributeError, match="init_model"):
        inference_model(torch.nn.Linear(2, 2), np.zeros((8, 8, 1), np.uint8))
    with pytest.raises(TypeError, match="file path or a Config"):
        init_model(123)
    needs_boxes = Config.fromstring(
        CONFIG.replace("keys=['img']),\n]", "keys=['img', 'gt_bboxes']),\n]"), ".py"
    )
    with pytest.raises(KeyError, match="keep only the image") as info:
        inference_model(init_model(needs_boxes), np.zeros((8, 8, 1), np.uint8))
    assert "gt_bboxes" in str(info.value)


def test_label_keys_of_the_test_pipeline_are_dropped(model, digits_images):
    labelled = Config.fromstring(
        CONFIG.replace(
            "dict(type='Collect', keys=['img']),\n]",
            "dict(type='ToTensor', keys=['gt_label']),\n"
            "    dict(type='Collect', keys=['img', 'gt_label']),\n]",
        ),
        ".py",
    )
    assert labelled.data.test.pipeline[-1]["keys"] == ["img", "gt_label"]
    other = init_model(labelled)
    other.load_state_dict(model.state_dict())
    assert inference_model(other, digits_images) == inference_model(model, digits_images)
