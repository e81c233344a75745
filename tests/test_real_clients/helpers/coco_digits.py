"""Tiny detection and segmentation datasets from scikit-learn's digits, in real on-disk layouts.

Used by tests/test_real_clients/test_mmdet_mmseg.py (loaded by path). Plain Python, no pytest.

* :func:`write_coco_digits`: canvases of different sizes with a few digits pasted on each, their
  boxes in a COCO instances file (``images``, ``annotations``, ``categories``) as the COCO API
  (pycocotools) and mmdet's ``CocoDataset`` read it.
* :func:`write_seg_digits`: the same kind of canvas and a label map per image (0 background, 1
  digit), in mmseg's custom-dataset layout (``img_dir/<split>/*.png``, ``ann_dir/<split>/*.png``).
"""

import json
from pathlib import Path

import cv2
import numpy as np

DIGIT = 24  # px: the 8x8 digits upscaled 3x by pixel repetition
# One class: within two tiny epochs a detector learns where digits are, not yet which they are.
CLASSES = ("digit",)


def _digits():
    from sklearn.datasets import load_digits

    imgs = load_digits().images * (255.0 / 16.0)
    return imgs.repeat(3, axis=1).repeat(3, axis=2).round().astype(np.uint8)


def _canvas(rng, imgs, max_digits):
    """One canvas (H, W differ per image) with 1..max_digits digits on a cell grid, no overlap."""
    h, w = (int(v) for v in rng.integers(64, 97, size=2))
    canvas = np.zeros((h, w), np.uint8)
    cells = [(y, x) for y in range(h // DIGIT) for x in range(w // DIGIT)]
    n = int(rng.integers(1, max_digits + 1))
    corners = []
    for cell in rng.permutation(len(cells))[:n]:
        y, x = (c * DIGIT for c in cells[cell])
        canvas[y : y + DIGIT, x : x + DIGIT] = imgs[int(rng.integers(len(imgs)))]
        corners.append((x, y))
    return canvas, corners


def write_coco_digits(root, split, n_images, seed=0, max_digits=3):
    """Write ``root/<split>/*.png`` and ``root/annotations/<split>.json``; return the json path."""
    rng = np.random.default_rng(seed)
    imgs = _digits()
    folder = Path(root, split)
    folder.mkdir(parents=True)
    images, annotations = [], []
    for image_id in range(1, n_images + 1):
        canvas, corners = _canvas(rng, imgs, max_digits)
        name = f"{image_id:04d}.png"
        cv2.imwrite(str(folder / name), cv2.cvtColor(canvas, cv2.COLOR_GRAY2BGR))
        h, w = canvas.shape
        images.append(dict(id=image_id, file_name=name, height=h, width=w))
        for x, y in corners:
            annotations.append(
                dict(
                    id=len(annotations) + 1,
                    image_id=image_id,
                    category_id=1,
                    bbox=[x, y, DIGIT, DIGIT],  # COCO: x, y, width, height
                    area=DIGIT * DIGIT,
                    iscrowd=0,
                    segmentation=[[x, y, x + DIGIT, y, x + DIGIT, y + DIGIT, x, y + DIGIT]],
                )
            )
    categories = [dict(id=i + 1, name=name) for i, name in enumerate(CLASSES)]
    ann_file = Path(root, "annotations", f"{split}.json")
    ann_file.parent.mkdir(exist_ok=True)
    coco = dict(images=images, annotations=annotations, categories=categories)
    ann_file.write_text(json.dumps(coco))
    return ann_file


def write_seg_digits(root, split, n_images, seed=0, max_digits=3):
    """Write mmseg's custom layout for ``split``: images, label maps (1 where a digit is inked)."""
    rng = np.random.default_rng(seed)
    imgs = _digits()
    img_dir, ann_dir = Path(root, "img_dir", split), Path(root, "ann_dir", split)
    img_dir.mkdir(parents=True)
    ann_dir.mkdir(parents=True)
    for index in range(n_images):
        canvas, _ = _canvas(rng, imgs, max_digits)
        cv2.imwrite(str(img_dir / f"{index:04d}.png"), cv2.cvtColor(canvas, cv2.COLOR_GRAY2BGR))
        cv2.imwrite(str(ann_dir / f"{index:04d}.png"), (canvas > 64).astype(np.uint8))


# A config in the user's folder inheriting one of mmdet's own configs; why each setting is there
# is told in tests/test_real_clients/test_mmdet_mmseg.py. ``{model}`` is the detector's part.
MMDET_CONFIG = """\
_base_ = [{base!r}]
{model}
classes = {classes!r}
img_norm_cfg = dict(mean=[0.0, 0.0, 0.0], std=[255.0, 255.0, 255.0], to_rgb=False)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations', with_bbox=True),
    dict(type='Resize', img_scale=(96, 96), keep_ratio=True),
    dict(type='RandomFlip', flip_ratio=0.0),
    dict(type='Normalize', **img_norm_cfg),
    dict(type='Pad', size_divisor=32),
    dict(type='DefaultFormatBundle'),
    dict(type='Collect', keys=['img', 'gt_bboxes', 'gt_labels']),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiScaleFlipAug',
        img_scale=(96, 96),
        flip=False,
        transforms=[
            dict(type='Resize', keep_ratio=True),
            dict(type='Normalize', **img_norm_cfg),
            dict(type='Pad', size_divisor=32),
            dict(type='ImageToTensor', keys=['img']),
            dict(type='Collect', keys=['img']),
        ])
]
data = dict(
    samples_per_gpu=2,
    workers_per_gpu=0,
    train=dict(classes=classes, ann_file={train_ann!r}, img_prefix={train_img!r},
               pipeline=train_pipeline),
    val=dict(classes=classes, ann_file={val_ann!r}, img_prefix={val_img!r},
             pipeline=test_pipeline),
    test=dict(classes=classes, ann_file={val_ann!r}, img_prefix={val_img!r},
              pipeline=test_pipeline))
optimizer = dict(lr=0.01)
lr_config = dict(_delete_=True, policy='fixed')
runner = dict(max_epochs={epochs})
evaluation = dict(interval={epochs}, metric='bbox')
log_config = dict(interval=1, hooks=[dict(type='TextLoggerHook')])
"""

RETINANET = (
    "retinanet/retinanet_r50_fpn_1x_coco.py",
    """\
model = dict(
    backbone=dict(depth=18, init_cfg=None),
    neck=dict(in_channels=[64, 128, 256, 512], out_channels=64),
    bbox_head=dict(num_classes=1, in_channels=64, feat_channels=64),
    test_cfg=dict(score_thr=0.0, max_per_img=20))
""",
)

FASTER_RCNN = (
    "faster_rcnn/faster_rcnn_r50_fpn_1x_coco.py",
    """\
model = dict(
    backbone=dict(depth=18, init_cfg=None),
    neck=dict(in_channels=[64, 128, 256, 512], out_channels=64),
    rpn_head=dict(in_channels=64, feat_channels=64),
    roi_head=dict(
        bbox_roi_extractor=dict(out_channels=64),
        bbox_head=dict(num_classes=1, in_channels=64, fc_out_channels=128)),
    train_cfg=dict(
        rpn_proposal=dict(nms_pre=200, max_per_img=100),
        rcnn=dict(sampler=dict(num=64))),
    test_cfg=dict(
        rpn=dict(nms_pre=200, max_per_img=100),
        rcnn=dict(score_thr=0.0, max_per_img=20)))
""",
)


def write_mmdet_config(path, configs_dir, detector, data, epochs=2):
    """Write :data:`MMDET_CONFIG` for ``detector`` (RETINANET or FASTER_RCNN); return ``path``."""
    base, model = detector
    data = Path(data)
    text = MMDET_CONFIG.format(
        base=str(Path(configs_dir, base)),
        model=model,
        classes=CLASSES,
        train_ann=str(data / "annotations" / "train.json"),
        train_img=str(data / "train") + "/",
        val_ann=str(data / "annotations" / "val.json"),
        val_img=str(data / "val") + "/",
        epochs=epochs,
    )
    Path(path).write_text(text)
    return Path(path)


# mmseg: its FCN ResNet-18 config on the custom-dataset layout of write_seg_digits. mmseg's
# tools/train.py and test.py turn the config's SyncBN into BatchNorm in a single process.
MMSEG_CONFIG = """\
_base_ = [{base!r}]
model = dict(
    pretrained=None,
    decode_head=dict(num_classes=2),
    auxiliary_head=dict(num_classes=2))
img_norm_cfg = dict(mean=[0.0, 0.0, 0.0], std=[255.0, 255.0, 255.0], to_rgb=False)
train_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(type='LoadAnnotations'),
    dict(type='Resize', img_scale=(96, 96), keep_ratio=True),
    dict(type='RandomFlip', prob=0.0),
    dict(type='Normalize', **img_norm_cfg),
    dict(type='Pad', size=(96, 96), pad_val=0, seg_pad_val=255),
    dict(type='DefaultFormatBundle'),
    dict(type='Collect', keys=['img', 'gt_semantic_seg']),
]
test_pipeline = [
    dict(type='LoadImageFromFile'),
    dict(
        type='MultiScaleFlipAug',
        img_scale=(96, 96),
        flip=False,
        transforms=[
            dict(type='Resize', keep_ratio=True),
            dict(type='RandomFlip'),
            dict(type='Normalize', **img_norm_cfg),
            dict(type='ImageToTensor', keys=['img']),
            dict(type='Collect', keys=['img']),
        ])
]
digits_data = dict(
    type='CustomDataset', data_root={data!r}, img_suffix='.png', seg_map_suffix='.png',
    classes=('background', 'digit'), palette=[[0, 0, 0], [255, 255, 255]])
data = dict(
    samples_per_gpu=2,
    workers_per_gpu=0,
    persistent_workers=False,
    train=dict(_delete_=True, img_dir='img_dir/train', ann_dir='ann_dir/train',
               pipeline=train_pipeline, **digits_data),
    val=dict(_delete_=True, img_dir='img_dir/val', ann_dir='ann_dir/val',
             pipeline=test_pipeline, **digits_data),
    test=dict(_delete_=True, img_dir='img_dir/val', ann_dir='ann_dir/val',
              pipeline=test_pipeline, **digits_data))
runner = dict(max_iters={iters})
checkpoint_config = dict(interval={iters})
evaluation = dict(interval={iters})
log_config = dict(interval=1, hooks=[dict(type='TextLoggerHook')])
"""


def write_mmseg_config(path, configs_dir, data, iters=8):
    """Write :data:`MMSEG_CONFIG` inheriting mmseg's FCN ResNet-18 config; return ``path``."""
    base = Path(configs_dir, "fcn", "fcn_r18-d8_512x1024_80k_cityscapes.py")
    Path(path).write_text(MMSEG_CONFIG.format(base=str(base), data=str(data), iters=iters))
    return Path(path)
