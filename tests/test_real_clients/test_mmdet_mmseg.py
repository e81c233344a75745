"""mmdet 2.28.2 and mmsegmentation 0.30.0 from the registry, unedited, train and test on mmpar.

Their own ``tools/train.py`` and ``tools/test.py`` (in the wheels, under ``<package>/.mim/``) run
through the zero-edit mode (``python -m mmpar.as_mmcv``) with their own configs:

* mmdet: RetinaNet and Faster R-CNN (``retinanet_r50_fpn_1x_coco.py``,
  ``faster_rcnn_r50_fpn_1x_coco.py``) train 2 epochs in one process (MMDataParallel on the CPU),
  and RetinaNet again in two processes under torchrun (``--launcher pytorch``, gloo:
  MMDistributedDataParallel, and the validation's results gathered over both ranks). Each
  training validates its last epoch (bbox mAP by pycocotools through mmdet's ``CocoDataset``);
  ``tools/test.py --eval bbox`` then scores the single-process RetinaNet checkpoint. This is the
  workload DataContainer, collate and scatter exist for: images of different sizes padded per
  batch, ``img_metas`` kept on the CPU, ``gt_bboxes`` as lists.
* mmseg: FCN (``fcn_r18-d8_512x1024_80k_cityscapes.py``) trains 8 iterations on a dataset in
  mmseg's custom layout; ``tools/test.py --eval mIoU`` scores its checkpoint.

The data (``helpers/coco_digits.py``): scikit-learn's digits pasted on black canvases of 64-96
px, their boxes in a COCO instances file (one class, "digit"), or their ink as a label map.

What the test changes, all from outside the projects: a config in ``tmp_path`` inherits the
project's config through ``_base_`` and sets

- a small model: ResNet-18 without pretrained weights, 64 channels from the neck on (heads and
  RoI extractor to match), one class, fewer proposals and a smaller box head for Faster R-CNN
  (its 1024-wide fully connected layers cost more than the rest); the test-time score threshold
  0, so that the few boxes a 2-epoch model ranks still reach the COCO evaluation (mmdet reports
  no mAP at all when no box passes its default threshold of 0.05);
- the data: 96 px images, no random flip, no loader workers (mmseg's ``persistent_workers`` off
  with them), a fixed learning rate without warm-up (mmdet's 500 warm-up iterations would keep
  the rate near zero for the whole run);
- nothing for the DDP run: mmdet's ``build_ddp`` accepts only cuda/mlu/npu devices as
  released; the zero-edit launcher adds the CPU case (mmpar/parallel/project_cpu_ddp.py).

Cost: the three single-process trainings run side by side (one core each), then torchrun, then
the two ``tools/test.py`` runs side by side.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from types import SimpleNamespace

import pytest

# Under a minute on an idle 2-core machine; the timeout leaves room for a loaded one.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

N_TRAIN, N_VAL = 16, 8
EPOCHS, SAMPLES_PER_GPU = 2, 2
SEG_ITERS = 8


def tools(package_dir, package):
    return package_dir / package / ".mim" / "tools"


def configs(package_dir, package):
    return package_dir / package / ".mim" / "configs"


def read_eval(work_dir):
    """The metrics ``tools/test.py --work-dir`` wrote (``eval_*.json``)."""
    (path,) = work_dir.glob("eval_*.json")
    return json.loads(path.read_text())["metric"]


def falls(losses):
    """The mean loss of the last quarter of the run is below the first quarter's."""
    quarter = max(len(losses) // 4, 1)
    return statistics.mean(losses[-quarter:]) < statistics.mean(losses[:quarter])


def is_score(value):
    return isinstance(value, float) and math.isfinite(value) and 0.0 <= value <= 1.0


@pytest.fixture(scope="module")
def setup(downloads, tmp_path_factory, clients):
    root = tmp_path_factory.mktemp("mmdet_mmseg")
    digits = clients.coco_digits
    det, seg = root / "coco", root / "seg"
    digits.write_coco_digits(det, "train", N_TRAIN, seed=0)
    digits.write_coco_digits(det, "val", N_VAL, seed=1)
    digits.write_seg_digits(seg, "train", N_TRAIN, seed=0)
    digits.write_seg_digits(seg, "val", N_VAL, seed=1)
    mmdet, mmseg = downloads["mmdet"], downloads["mmsegmentation"]
    det_configs = configs(mmdet, "mmdet")
    return SimpleNamespace(
        root=root,
        mmdet=mmdet,
        mmseg=mmseg,
        retinanet=digits.write_mmdet_config(
            root / "retinanet.py", det_configs, digits.RETINANET, det
        ),
        faster_rcnn=digits.write_mmdet_config(
            root / "faster_rcnn.py", det_configs, digits.FASTER_RCNN, det
        ),
        fcn=digits.write_mmseg_config(root / "fcn.py", configs(mmseg, "mmseg"), seg, SEG_ITERS),
        det_env=clients.client_env(mmdet),
        seg_env=clients.client_env(mmseg),
    )


def train_job(clients, setup, config, name):
    package = "mmseg" if name == "fcn" else "mmdet"
    package_dir = setup.mmseg if name == "fcn" else setup.mmdet
    env = setup.seg_env if name == "fcn" else setup.det_env
    args = [tools(package_dir, package) / "train.py", config, "--work-dir", setup.root / name]
    return [sys.executable, *clients.as_mmcv(*args, "--seed", "0")], env, setup.root


@pytest.fixture(scope="module")
def single(clients, setup):
    """RetinaNet, Faster R-CNN and FCN, each trained once in one process, side by side."""
    runs = {"retinanet": setup.retinanet, "faster_rcnn": setup.faster_rcnn, "fcn": setup.fcn}
    jobs = [train_job(clients, setup, cfg, name) for name, cfg in runs.items()]
    clients.run_together(jobs, timeout=600)
    return {name: SimpleNamespace(work_dir=setup.root / name) for name in runs}


@pytest.fixture(scope="module")
def ddp(clients, setup):
    """RetinaNet trained in two processes under torchrun."""
    work_dir = setup.root / "retinanet_ddp"
    args = [tools(setup.mmdet, "mmdet") / "train.py", setup.retinanet, "--work-dir", work_dir]
    cmd = clients.torchrun(2, *clients.as_mmcv(*args, "--seed", "0", "--launcher", "pytorch"))
    cmd += ["--cfg-options", "dist_params.backend=gloo"]
    clients.run(cmd, env=setup.det_env, cwd=setup.root, timeout=600)
    return SimpleNamespace(work_dir=work_dir)


@pytest.fixture(scope="module")
def tested(clients, setup, single):
    """``tools/test.py`` of mmdet (RetinaNet, bbox) and of mmseg (FCN, mIoU), side by side."""
    det = setup.root / "retinanet"
    det_args = [tools(setup.mmdet, "mmdet") / "test.py", setup.retinanet, det / "latest.pth"]
    det_args += ["--eval", "bbox", "--work-dir", det / "test"]
    seg = setup.root / "fcn"
    seg_args = [tools(setup.mmseg, "mmseg") / "test.py", setup.fcn, seg / f"iter_{SEG_ITERS}.pth"]
    seg_args += ["--eval", "mIoU", "--work-dir", seg / "test"]
    clients.run_together(
        [
            ([sys.executable, *clients.as_mmcv(*det_args)], setup.det_env, setup.root),
            ([sys.executable, *clients.as_mmcv(*seg_args)], setup.seg_env, setup.root),
        ],
        timeout=600,
    )
    return {"retinanet": read_eval(det / "test"), "fcn": read_eval(seg / "test")}


@pytest.mark.parametrize("name", ["retinanet", "faster_rcnn", "retinanet_ddp"])
def test_mmdet_trains_and_validates(clients, name, request, single, setup):
    work_dir = setup.root / name
    nproc = 2 if name.endswith("_ddp") else 1
    if nproc == 2:
        request.getfixturevalue("ddp")
    (text_log,) = work_dir.glob("*.log")
    assert f"Distributed training: {nproc == 2}" in text_log.read_text()
    train_log, val_log = clients.read_log(work_dir)
    iters = N_TRAIN // (SAMPLES_PER_GPU * nproc)
    assert [(e["epoch"], e["iter"]) for e in train_log] == [
        (epoch, i) for epoch in range(1, EPOCHS + 1) for i in range(1, iters + 1)
    ]
    losses = [e["loss"] for e in train_log]
    assert falls(losses), losses
    for epoch in range(1, EPOCHS + 1):
        assert (work_dir / f"epoch_{epoch}.pth").is_file()
    # The last epoch's validation: COCO bbox mAP by pycocotools, gathered over all ranks.
    assert [e["epoch"] for e in val_log] == [EPOCHS]
    assert is_score(val_log[0]["bbox_mAP"]), val_log
    assert is_score(val_log[0]["bbox_mAP_50"]), val_log


def test_mmdet_tools_test_scores_the_checkpoint(clients, tested, single, setup):
    metrics = tested["retinanet"]
    assert is_score(metrics["bbox_mAP"]) and is_score(metrics["bbox_mAP_50"]), metrics
    # The checkpoint holds the weights the training validated last: same images, same scores.
    _, val_log = clients.read_log(setup.root / "retinanet")
    for key in ("bbox_mAP", "bbox_mAP_50", "bbox_mAP_75"):
        assert metrics[key] == pytest.approx(val_log[-1][key]), key


def test_mmseg_trains_and_tools_test_scores_miou(clients, tested, single, setup):
    work_dir = setup.root / "fcn"
    train_log, val_log = clients.read_log(work_dir)
    assert [e["iter"] for e in train_log] == list(range(1, SEG_ITERS + 1))
    losses = [e["loss"] for e in train_log]
    assert falls(losses), losses
    assert (work_dir / f"iter_{SEG_ITERS}.pth").is_file()
    assert [e["iter"] for e in val_log] == [SEG_ITERS]
    metrics = tested["fcn"]
    assert is_score(metrics["mIoU"]) and is_score(metrics["aAcc"]), metrics
    assert metrics["mIoU"] == pytest.approx(val_log[-1]["mIoU"])
