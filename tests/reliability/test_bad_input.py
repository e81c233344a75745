"""Bad input: one clear message naming the culprit, a non-zero exit, nothing overwritten.

Every bad input found while a run is set up (config, command line, checkpoint, data root,
launcher, work dir) makes ``tools/train.py`` / ``tools/test.py`` exit with code 2 and print one
``error: <Type>: <message>`` (no traceback) before anything is written into the work dir. Bad
data found while running (a corrupt image, a batch that cannot be stacked) keeps its traceback
(exit code 1) and its last line names the file or field. ``tools/infer.py`` checks every
argument the same way before it predicts, including its input images (missing, not an image,
a size the model cannot take).

Decisions tested here:

* ``--cfg-options`` may add new keys (``fp16.loss_scale=512``), but a path through a missing
  key that is followed by a list index (``data.trian.pipeline.0.type``) or that is one edit away
  from an existing key (``data.trian.x``) is an error naming the key and the close matches.
* ``checkpoint_config.interval=-1`` is valid (mmcv's default: only the last checkpoint); 0 and
  values below -1 are errors.
* Labels are checked when the dataset is loaded (against its classes) and, by the tools, against
  ``model.head.num_classes`` before training; the loss names an out-of-range label too.
* ``tools/test.py`` and ``tools/infer.py`` load checkpoints strictly; ``--resume-from`` is
  strict; ``--load-from`` (fine-tuning) skips mismatching tensors with a warning but refuses a
  checkpoint of which no tensor fits.

Most cases call the tools' ``main(argv)`` in this process (fast); a representative subset runs
them as real processes (marked ``slow``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import hashlib
import inspect
import json
import logging
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import load_tool
from PIL import Image

from mmpar import Config, DictAction
from mmpar.models import build_classifier
from mmpar.models.losses import CrossEntropyLoss
from mmpar.runner import save_checkpoint

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "configs" / "digits_lenet.py"
CIFAR = REPO / "configs" / "cifar10_lenet.py"
DIST_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE")
FAST = ["--cfg-options", "data.workers_per_gpu=0", "runner.max_epochs=1"]


# ------------------------------------------------------------------------------- helpers
_tool = functools.cache(load_tool)  # ``tools/<name>.py`` imported as a module (once)


def _error_message(stderr: str) -> str:
    """The single ``error:`` message of ``stderr`` (with its continuation lines)."""
    lines = stderr.rstrip().splitlines()
    starts = [
        i for i, line in enumerate(lines) if line.startswith("error: ") or ": error: " in line
    ]
    assert len(starts) == 1, f"expected one error line:\n{stderr}"
    assert "Traceback" not in stderr, stderr
    return "\n".join(lines[starts[0] :])


def _main_fails(capsys, tool: str, *argv) -> str:
    """Run ``tools/<tool>.py``'s main in-process; it must exit 2. Return the error message."""
    capsys.readouterr()
    with pytest.raises(SystemExit) as info:
        _tool(tool).main([str(a) for a in argv])
    stderr = capsys.readouterr().err
    assert info.value.code == 2, stderr
    return _error_message(stderr)


def _cli(*argv, timeout: int = 180) -> subprocess.CompletedProcess:
    """Run ``python tools/...`` from the repository root as a real process."""
    full_env = {k: v for k, v in os.environ.items() if k not in DIST_VARS}
    full_env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return subprocess.run(
        [sys.executable, *map(str, argv)],
        cwd=REPO,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _snapshot(root: Path) -> dict:
    """Every entry under ``root``: symlink target, or size, mtime and content hash."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = ("link", os.readlink(path))
            elif path.is_file():
                st = path.stat()
                out[rel] = (
                    st.st_size,
                    st.st_mtime_ns,
                    hashlib.sha256(path.read_bytes()).hexdigest(),
                )
            else:
                out[rel] = ("dir",)
    return out


def _parent(path: Path) -> Path:
    """``path``, after creating its directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def _write(path: Path, text: str) -> Path:
    _parent(path).write_text(text)
    return path


def _digits_model(**backbone):
    cfg = Config.fromfile(str(DIGITS))
    cfg.model.backbone.update(backbone)
    return build_classifier(cfg.model)


class _Evil:
    """Unpickling this runs ``open(marker, 'w')``, which creates the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self):
        return (open, (self.marker, "w"))


@pytest.fixture(autouse=True)
def bad_fresh_logger():
    """Point the ``mmpar`` console handler at this test's stderr; drop file handlers after."""
    logger = logging.getLogger("mmpar")
    for handler in logger.handlers:
        if type(handler) is logging.StreamHandler:
            handler.setStream(sys.stderr)
    before = list(logger.handlers)
    yield
    for handler in list(logger.handlers):
        if handler not in before:
            logger.removeHandler(handler)
            handler.close()


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory):
    """Checkpoints and configs shared by the cases (made once)."""
    root = tmp_path_factory.mktemp("bad_input")
    good = root / "good.pth"
    classes = [str(i) for i in range(10)]
    save_checkpoint(_digits_model(), str(good), meta=dict(epoch=1, iter=45, CLASSES=classes))
    data = good.read_bytes()
    (root / "trunc.pth").write_bytes(data[: len(data) // 2])
    (root / "random.pth").write_bytes(np.random.default_rng(0).bytes(4096))
    save_checkpoint(_digits_model(in_channels=3), str(root / "rgb_lenet.pth"))
    seq = torch.nn.Sequential(torch.nn.Conv2d(1, 4, 3), torch.nn.Linear(4, 2))
    torch.save({"state_dict": seq.state_dict()}, root / "sequential.pth")

    # A work dir as an earlier run of the digits config left it.
    work = root / "work_template"
    work.mkdir()
    shutil.copy(good, work / "epoch_1.pth")
    os.symlink("epoch_1.pth", work / "latest.pth")
    _write(work / "20240101_000000.log", "2024-01-01 00:00:00,000 - mmpar - INFO - Epoch [1]\n")
    _write(work / "20240101_000000.log.json", '{"mode": "train", "epoch": 1, "iter": 45}\n')
    _write(work / "digits_lenet.py", "# the config of the earlier run\n")

    # Inputs of tools/infer.py: 8x8 grayscale images (the digits model's size) and bad ones.
    images = root / "images"
    for i in range(2):
        Image.fromarray(np.full((8, 8), 60 * i, np.uint8)).save(_parent(images / f"{i}.png"))
    Image.fromarray(np.zeros((32, 32), np.uint8)).save(root / "big.png")
    (root / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not an image")
    (root / "notes.txt").write_text("not an image")
    (root / "no_images").mkdir()
    (root / "no_images" / "notes.txt").write_text("not an image")

    configs = root / "configs"
    base = f"_base_ = [{str(DIGITS)!r}]\n"
    _write(configs / "syntax.py", 'model = dict(\n    type="ImageClassifier",,\n)\n')
    _write(configs / "wrong_ext.txt", "model = dict()\n")
    _write(configs / "loop_a.py", '_base_ = ["./loop_b.py"]\na = 1\n')
    _write(configs / "loop_b.py", '_base_ = ["./loop_a.py"]\nb = 1\n')
    _write(configs / "custom_hook.py", base + 'custom_hooks = [dict(type="EMAHok")]\n')
    _write(configs / "ema_arg.py", base + 'custom_hooks = [dict(type="EMAHook", momentun=0.1)]\n')
    _write(configs / "eval_arg.py", base + "evaluation = dict(intervl=1)\n")
    _write(configs / "evil.yaml", "a: !!python/object/apply:os.system ['touch marker']\n")
    return root


@pytest.fixture
def bad_work_dir(bad_files, tmp_path):
    """A copy of the earlier run's work dir; the test fails if a case changed it."""
    work = tmp_path / "work"
    shutil.copytree(bad_files / "work_template", work, symlinks=True)
    before = _snapshot(work)
    yield work
    assert _snapshot(work) == before, "a failed run changed the existing work dir"


# ------------------------------------------------------------------- configs (train.py)
# (id, config, extra argv, fragments the error message must contain)
CONFIG_CASES = [
    ("missing-file", "configs/nope.py", [], ["nope.py", "does not exist"]),
    ("wrong-extension", "configs/wrong_ext.txt", [], ["wrong_ext.txt", '".txt"', ".py"]),
    ("syntax-error", "configs/syntax.py", [], ["syntax.py, line 2", "invalid Python"]),
    ("base-loop", "configs/loop_a.py", [], ["_base_ loop", "loop_a.py -> ", "loop_b.py -> "]),
    # unknown `type`, one per registry, with "did you mean"
    (
        "unknown-model",
        DIGITS,
        ["model.type=ImageClasifier"],
        ["model:", '"ImageClasifier"', "model registry", "Did you mean: ImageClassifier"],
    ),
    (
        "unknown-backbone",
        DIGITS,
        ["model.backbone.type=LeNett"],
        ["model:", '"LeNett"', "model registry", "Did you mean: LeNet"],
    ),
    (
        "unknown-loss",
        DIGITS,
        ["model.head.loss.type=CrossEntropyLos"],
        ['LinearClsHead (registry "model")', '"CrossEntropyLos"', "Did you mean: CrossEntropyLoss"],
    ),
    (
        "unknown-optimizer",
        DIGITS,
        ["optimizer.type=SDG"],
        ["optimizer:", '"SDG"', "optimizer registry", "Did you mean: SGD"],
    ),
    (
        "unknown-lr-policy",
        DIGITS,
        ["lr_config.policy=CosineAnealing"],
        ["lr_config:", 'unknown policy "CosineAnealing"', "Did you mean: CosineAnnealing"],
    ),
    (
        "unknown-logger-hook",
        DIGITS,
        ["log_config.hooks.0.type=TextLogerHook"],
        ["log_config:", '"TextLogerHook"', "hook registry", "Did you mean: TextLoggerHook"],
    ),
    (
        "unknown-custom-hook",
        "configs/custom_hook.py",
        [],
        ["custom_hooks:", '"EMAHok"', "hook registry", "Did you mean: EMAHook"],
    ),
    (
        "unknown-runner",
        DIGITS,
        ["runner.type=EpochBasedRuner"],
        ["runner:", '"EpochBasedRuner"', "runner registry", "Did you mean: EpochBasedRunner"],
    ),
    (
        "unknown-dataset",
        DIGITS,
        ["data.train.type=Digitz"],
        ["data.train:", '"Digitz"', "dataset registry", "Did you mean: Digits"],
    ),
    (
        "unknown-pipeline",
        DIGITS,
        ["data.train.pipeline.0.type=RandomCorp"],
        ["data.train:", '"RandomCorp"', "pipeline registry", "Did you mean: RandomCrop"],
    ),
    # wrong argument names: registry, type and argument named
    (
        "bad-model-arg",
        DIGITS,
        # not a near miss: in_chanels is refused while merging (test_config_option_keys.py)
        ["model.backbone.channels_in=1"],
        ['LeNet (registry "model")', 'unexpected keyword argument "channels_in"', "in_channels"],
    ),
    (
        "bad-optimizer-arg",
        DIGITS,
        # one edit from no key of the config's optimizer (optimizer.lrr is refused while merging)
        ["optimizer.nesterv=true"],
        ['optimizer: SGD (registry "optimizer")', '"nesterv"', "Did you mean: nesterov"],
    ),
    (
        "bad-hook-arg",
        DIGITS,
        ["log_config.hooks.0.intervall=5"],
        ['log_config: TextLoggerHook (registry "hook")', '"intervall"', "Did you mean: interval"],
    ),
    (
        "bad-custom-hook-arg",
        "configs/ema_arg.py",
        [],
        ['custom_hooks: EMAHook (registry "hook")', '"momentun"', "Did you mean: momentum"],
    ),
    (
        "bad-dataset-arg",
        DIGITS,
        ["data.train.split_ration=0.5"],
        ['data.train: Digits (registry "dataset")', "'split_ration'"],
    ),
    # zero or negative intervals and epochs
    ("max-epochs-0", DIGITS, ["runner.max_epochs=0"], ["runner:", "max_epochs", "got 0"]),
    ("max-epochs-neg", DIGITS, ["runner.max_epochs=-3"], ["runner:", "max_epochs", "got -3"]),
    (
        "checkpoint-interval-0",
        DIGITS,
        ["checkpoint_config.interval=0"],
        ["checkpoint_config:", "interval", "-1 to save only the last", "got 0"],
    ),
    (
        "checkpoint-interval-neg",
        DIGITS,
        ["checkpoint_config.interval=-2"],
        ["checkpoint_config:", "interval", "got -2"],
    ),
    ("log-interval-0", DIGITS, ["log_config.interval=0"], ["log_config:", "interval", "got 0"]),
    ("eval-interval-0", DIGITS, ["evaluation.interval=0"], ["evaluation:", "interval", "got 0"]),
    # evaluation: EvalHook passes unknown keys on to dataset.evaluate, which would reject them
    # only at the first evaluation
    (
        "bad-eval-arg",
        "configs/eval_arg.py",
        [],
        [
            'evaluation: EvalHook: unexpected keyword argument "intervl". Did you mean: interval?',
            "Valid arguments: EvalHook: start, interval, by_epoch, save_best,",
            "Digits.evaluate (gets the others): metric, metric_options, indices",
        ],
    ),
    (
        "bad-eval-option",
        DIGITS,
        ["evaluation.metric_option.topk=1"],
        ['evaluation: EvalHook: unexpected keyword argument "metric_option"', "metric_options"],
    ),
    (
        "workflow-mode",
        DIGITS,
        ["workflow=[(trian,1)]"],
        ["workflow:", "unknown workflow mode 'trian'", "Did you mean: train"],
    ),
    (
        "workflow-count",
        DIGITS,
        ["workflow=[(train,0)]"],
        ["workflow:", "('train', 0)", "positive int"],
    ),
    # --cfg-options
    (
        "option-no-equals",
        DIGITS,
        ["runner.max_epochs"],
        ["--cfg-options", '"runner.max_epochs" is not of the form KEY=VALUE'],
    ),
    ("option-empty-key", DIGITS, ["=5"], ["--cfg-options", 'malformed key ""']),
    ("option-empty-part", DIGITS, ["data..x=1"], ["--cfg-options", 'malformed key "data..x"']),
    (
        "option-typo-path",
        DIGITS,
        ["data.trian.pipeline.0.type=X"],
        ['"data.trian" does not exist', "samples_per_gpu", "Did you mean: train"],
    ),
    (
        "option-typo-dict",
        DIGITS,
        ["data.trian.samples_per_gpu=8"],
        ['"data.trian" does not exist', "Did you mean: train"],
    ),
    (
        "option-index-missing-list",
        DIGITS,
        ["custom_hooks.0.type=EMAHook"],
        ['"custom_hooks" does not exist', "list index cannot follow"],
    ),
    (
        "option-through-scalar",
        DIGITS,
        ["runner.max_epochs.x=1"],
        ['cannot set "runner.max_epochs.x"', '"runner.max_epochs" is a int'],
    ),
    (
        "option-index-out-of-range",
        DIGITS,
        ["data.train.pipeline.9.type=X"],
        ["index 9 is out of range", "data.train.pipeline", "5 items"],
    ),
]


def _resolve(bad_files: Path, config) -> Path:
    return config if isinstance(config, Path) else bad_files / config


@pytest.mark.parametrize(
    "config,options,fragments", [c[1:] for c in CONFIG_CASES], ids=[c[0] for c in CONFIG_CASES]
)
def test_bad_config_names_the_culprit(capsys, bad_files, bad_work_dir, config, options, fragments):
    config = _resolve(bad_files, config)
    argv = [config, "--work-dir", bad_work_dir, "--no-validate"]
    if any(o.startswith("evaluation.") for o in options) or config.name == "eval_arg.py":
        argv.remove("--no-validate")
    argv += ["--cfg-options", "data.workers_per_gpu=0", *options] if options else []
    err = _main_fails(capsys, "train", *argv)
    for fragment in fragments:
        assert fragment in err, (fragment, err)


def test_legitimate_options_still_work(tmp_path):
    """The typo rule and the interval check leave legitimate settings alone."""
    from mmpar.apis import build_train_runner

    train = _tool("train")
    args = train.parse_args(
        [str(DIGITS), "--work-dir", str(tmp_path / "w"), "--cfg-options"]
        + ["model.backbone.init_cfg.type=Kaiming", "model.backbone.init_cfg.layer=Conv2d"]
        + ["data.val_samples_per_gpu=16"]
        + ["checkpoint_config.interval=-1"]  # mmcv: only the last checkpoint
        + ["data.workers_per_gpu=0"]
    )  # init_cfg: a new nested dict with no close sibling; val_samples_per_gpu: a new leaf
    cfg, model, datasets, distributed, meta = train.setup(args)
    runner, _ = build_train_runner(model, datasets, cfg, validate=True, meta=meta)
    assert [h.interval for h in runner.hooks if type(h).__name__ == "CheckpointHook"] == [-1]
    cfg = Config.fromfile(str(DIGITS))
    cfg.merge_from_dict({"fp16.loss_scale": 512.0})  # new top-level dict
    assert cfg.fp16.loss_scale == 512.0


# ---------------------------------------------------------------------------- checkpoints
def test_truncated_and_random_checkpoints(capsys, bad_files, bad_work_dir):
    for flag, name in (("--resume-from", "trunc.pth"), ("--load-from", "random.pth")):
        path = bad_files / name
        err = _main_fails(capsys, "train", DIGITS, "--work-dir", bad_work_dir, flag, path, *FAST)
        assert f'"{path}" is not a valid checkpoint, truncated or corrupt' in err
    for name in ("trunc.pth", "random.pth"):
        err = _main_fails(capsys, "test", DIGITS, bad_files / name)
        assert f'"{bad_files / name}" is not a valid checkpoint' in err


def _expected_mismatch() -> list[str]:
    """``key: checkpoint (shape) vs model (shape)`` for the RGB LeNet against the digits one."""
    ours, theirs = _digits_model().state_dict(), _digits_model(in_channels=3).state_dict()
    lines = [
        f"{k}: checkpoint {tuple(theirs[k].shape)} vs model {tuple(v.shape)}"
        for k, v in ours.items()
        if theirs[k].shape != v.shape
    ]
    assert lines == ["backbone.features.0.weight: checkpoint (6, 3, 5, 5) vs model (6, 1, 5, 5)"]
    return lines


def test_checkpoint_of_another_model_lists_key_and_shapes(capsys, bad_files, bad_work_dir):
    ckpt = bad_files / "rgb_lenet.pth"
    expected = _expected_mismatch()
    err = _main_fails(capsys, "test", DIGITS, ckpt)
    assert f'"{ckpt}" does not fit the model' in err and "strict" in err
    assert all(line in err for line in expected), err
    err = _main_fails(
        capsys, "train", DIGITS, "--work-dir", bad_work_dir, "--resume-from", ckpt, *FAST
    )
    assert f'"{ckpt}" does not fit the model' in err
    assert all(line in err for line in expected), err


def test_load_from_refuses_a_checkpoint_of_which_nothing_fits(capsys, bad_files, bad_work_dir):
    ckpt = bad_files / "sequential.pth"
    err = _main_fails(
        capsys, "train", DIGITS, "--work-dir", bad_work_dir, "--load-from", ckpt, *FAST
    )
    assert f'"{ckpt}" does not fit the model' in err
    assert "none of the 4 entries of the state dict fits ImageClassifier" in err
    assert "unexpected key in source state_dict: 0.weight, 0.bias, 1.weight, 1.bias" in err
    assert "missing keys in source state_dict: backbone.features.0.weight" in err


def test_code_running_pickle_is_refused(capsys, bad_files, bad_work_dir, tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pth"
    torch.save({"state_dict": _digits_model().state_dict(), "meta": _Evil(marker)}, evil)
    for tool, argv in (
        ("test", [DIGITS, evil]),
        ("infer", [DIGITS, evil, bad_files / "images"]),
        ("train", [DIGITS, "--work-dir", bad_work_dir, "--resume-from", evil, *FAST]),
        ("train", [DIGITS, "--work-dir", bad_work_dir, "--load-from", evil, *FAST]),
    ):
        err = _main_fails(capsys, tool, *argv)
        assert f'Refused to load "{evil}"' in err
        assert "the Python object" in err and "open" in err
        assert "weights_only=True" in err and "--trust-checkpoint" in err
        assert not marker.exists()


@pytest.mark.parametrize("tool", ["test", "infer"])
def test_trust_checkpoint_opts_out_with_a_warning(capsys, bad_files, tmp_path, tool):
    """The opt-out really unpickles (the payload runs: the marker appears) and warns first."""
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.pth"
    torch.save({"state_dict": {}, "meta": _Evil(marker)}, evil)
    images = [bad_files / "images"] if tool == "infer" else []
    with pytest.warns(UserWarning, match="weights_only=False unpickles arbitrary Python objects"):
        err = _main_fails(capsys, tool, DIGITS, evil, *images, "--trust-checkpoint")
    assert marker.exists()
    assert "missing keys in source state_dict" in err  # its empty state dict fits nothing


# ---------------------------------------------------------------------------------- data
def _image_folder(root: Path, corrupt: bool = False) -> Path:
    """``root/{cat,dog}/*.png``: 8x8 RGB images; optionally a corrupt ``cat/broken.png``."""
    rng = np.random.default_rng(0)
    for cls in ("cat", "dog"):
        (root / cls).mkdir(parents=True, exist_ok=True)
        for i in range(2):
            img = rng.integers(0, 255, (8, 8, 3), dtype=np.uint8)
            Image.fromarray(img).save(root / cls / f"img{i}.png")
    if corrupt:
        (root / "cat" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n this is not an image")
    return root


def _folder_config(path: Path, data_prefix: Path | str, pipeline: str = "", ann: str = "") -> Path:
    pipeline = pipeline or (
        'dict(type="LoadImageFromFile"), dict(type="ImageToTensor", keys=["img"]), '
        'dict(type="ToTensor", keys=["gt_label"]), dict(type="Collect", keys=["img", "gt_label"])'
    )
    ann_arg = f", ann_file={ann!r}, classes=['cat', 'dog']" if ann else ""
    split = (
        f'dict(type="ImageFolder", data_prefix={str(data_prefix)!r}, pipeline=pipeline{ann_arg})'
    )
    return _write(
        path,
        f"_base_ = [{str(DIGITS)!r}]\n"
        "model = dict(backbone=dict(in_channels=3), head=dict(num_classes=2))\n"
        f"pipeline = [{pipeline}]\n"
        f"data = dict(_delete_=True, samples_per_gpu=4, workers_per_gpu=0, train={split},\n"
        f"            val={split}, test={split})\n",
    )


def test_missing_cifar_root_says_where_it_looked(capsys, bad_work_dir, tmp_path):
    root = tmp_path / "no_cifar_here"
    err = _main_fails(
        capsys,
        "train",
        CIFAR,
        "--work-dir",
        bad_work_dir,
        "--cfg-options",
        f"data.train.data_prefix={root}",
        "data.workers_per_gpu=0",
    )
    assert "data.train:" in err
    assert f"looked in {root / 'cifar-10-batches-py'}" in err
    assert "data_batch_1" in err and "--cfg-options data.train.download=True" in err


def test_missing_folder_root_says_where_it_looked(capsys, bad_work_dir, tmp_path):
    root = tmp_path / "no_images_here"
    config = _folder_config(tmp_path / "folder.py", root)
    err = _main_fails(capsys, "train", config, "--work-dir", bad_work_dir)
    assert f"data_prefix {str(root)!r}" in err and "is not a directory" in err
    assert "<data_prefix>/<class name>/<image files>" in err


def test_corrupt_image_is_named(tmp_path):
    root = _image_folder(tmp_path / "images", corrupt=True)
    config = _folder_config(tmp_path / "folder.py", root)
    with pytest.raises(OSError, match=r"cannot decode image file .*cat/broken\.png"):
        _tool("train").main([str(config), "--work-dir", str(tmp_path / "w"), "--no-validate"])


def test_label_out_of_range_found_when_the_dataset_loads(capsys, bad_work_dir, tmp_path):
    root = _image_folder(tmp_path / "images")
    ann = _write(tmp_path / "ann.txt", "cat/img0.png 0\ndog/img1.png 7\n")
    config = _folder_config(tmp_path / "folder.py", root, ann=str(ann))
    err = _main_fails(capsys, "train", config, "--work-dir", bad_work_dir)
    assert "sample 1" in err and "dog/img1.png" in err
    assert "gt_label 7, outside [0, 2) for 2 classes" in err


def test_label_out_of_range_for_the_model_head(capsys, bad_work_dir):
    err = _main_fails(
        capsys,
        "train",
        DIGITS,
        "--work-dir",
        bad_work_dir,
        "--cfg-options",
        "model.head.num_classes=5",
    )
    assert "data.train (Digits): sample" in err
    assert "outside [0, 5) for model.head.num_classes=5" in err


def test_label_out_of_range_in_the_loss_names_label_and_position():
    scores = torch.zeros(3, 10)
    with pytest.raises(ValueError, match=r"gt_label 12 at batch position 1 outside \[0, 10\)"):
        CrossEntropyLoss()(scores, torch.tensor([0, 12, 3]))


def test_label_out_of_range_is_caught_before_the_loss_runs(monkeypatch):
    # On CUDA F.cross_entropy does not raise: a device-side assert fires later, asynchronously.
    # The stand-in computes nothing and raises nothing, as a CUDA kernel launch would.
    from mmpar.models.losses import cross_entropy

    monkeypatch.setattr(
        cross_entropy.F, "cross_entropy", lambda score, label, **kw: score.new_zeros(len(score))
    )
    loss = CrossEntropyLoss()
    with pytest.raises(IndexError, match=r"gt_label 10 at batch position 2 outside \[0, 10\)"):
        loss(torch.zeros(3, 10), torch.tensor([0, 3, 10]))
    with pytest.raises(ValueError, match=r"gt_label -1 at batch position 0"):
        loss(torch.zeros(2, 10), torch.tensor([-1, 3]))
    assert float(loss(torch.zeros(2, 10), torch.tensor([9, -100]))) == 0  # -100: ignored


def test_sample_of_another_rank_names_field_and_shapes(tmp_path):
    """A grayscale image among RGB ones, kept as H×W×C by ToTensor: the batch cannot stack."""
    root = _image_folder(tmp_path / "images")
    Image.fromarray(np.zeros((8, 8), np.uint8)).save(root / "cat" / "img1.png")  # mode L
    pipeline = (
        'dict(type="LoadImageFromFile", color_type="unchanged"), dict(type="ToTensor", '
        'keys=["img", "gt_label"]), dict(type="Collect", keys=["img", "gt_label"])'
    )
    config = _folder_config(tmp_path / "folder.py", root, pipeline=pipeline)
    with pytest.raises(ValueError) as info:
        _tool("train").main([str(config), "--work-dir", str(tmp_path / "w"), "--no-validate"])
    msg = str(info.value)
    assert "collate: batch['img'] of sample 1 has shape (8, 8)" in msg
    assert "sample 0 of the same chunk has shape (8, 8, 3)" in msg


# -------------------------------------------------------------------------------- launch
def test_launcher_pytorch_without_torchrun_names_the_variables(capsys, bad_work_dir, monkeypatch):
    for name in DIST_VARS:
        monkeypatch.delenv(name, raising=False)
    err = _main_fails(capsys, "train", DIGITS, "--work-dir", bad_work_dir, "--launcher", "pytorch")
    assert "--launcher pytorch" in err and "torchrun" in err
    assert "RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT" in err


def test_work_dir_under_a_regular_file(capsys, tmp_path):
    """Works as root too (chmod does not stop root): a file where a directory must be."""
    blocker = tmp_path / "not_a_dir"
    blocker.write_text("keep me")
    err = _main_fails(capsys, "train", DIGITS, "--work-dir", blocker / "run", *FAST)
    assert f'cannot create work_dir "{blocker / "run"}"' in err
    assert f'"{blocker}" is not a directory' in err
    err = _main_fails(capsys, "train", DIGITS, "--work-dir", blocker, *FAST)
    assert f'work_dir "{blocker}" is not a directory' in err
    assert blocker.read_text() == "keep me"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only directories")
def test_work_dir_not_writable(capsys, bad_work_dir):
    before = _snapshot(bad_work_dir)
    bad_work_dir.chmod(0o500)
    try:
        err = _main_fails(capsys, "train", DIGITS, "--work-dir", bad_work_dir, *FAST)
    finally:
        bad_work_dir.chmod(0o755)
    assert f'work_dir "{bad_work_dir}" is not writable' in err
    assert _snapshot(bad_work_dir) == before


# -------------------------------------------------------------------------------- infer.py
# (id, argv after the tool name, fragments the error message must contain). ``{root}`` is the
# bad_files directory; GOOD is its digits checkpoint, IMAGES a folder of 8x8 images.
GOOD, IMAGES = "{root}/good.pth", "{root}/images"
INFER_CASES = [
    ("missing-config", ["configs/nope.py", GOOD, IMAGES], ["nope.py", "does not exist"]),
    (
        "config-syntax-error",
        ["{root}/configs/syntax.py", GOOD, IMAGES],
        ["syntax.py, line 2", "invalid Python"],
    ),
    ("missing-checkpoint", [DIGITS, "{root}/nope.pth", IMAGES], ["checkpoint not found", "nope"]),
    (
        "truncated-checkpoint",
        [DIGITS, "{root}/trunc.pth", IMAGES],
        ['"{root}/trunc.pth" is not a valid checkpoint, truncated or corrupt'],
    ),
    (
        "random-checkpoint",
        [DIGITS, "{root}/random.pth", IMAGES],
        ['"{root}/random.pth" is not a valid checkpoint'],
    ),
    (
        "checkpoint-of-another-model",  # strict: a partly loaded model predicts nonsense
        [DIGITS, "{root}/rgb_lenet.pth", IMAGES],
        ['"{root}/rgb_lenet.pth" does not fit the model', "strict", "checkpoint (6, 3, 5, 5)"],
    ),
    ("missing-image", [DIGITS, GOOD, "{root}/nope.png"], ["input not found: {root}/nope.png"]),
    ("missing-dir", [DIGITS, GOOD, IMAGES, "{root}/nope/"], ["input not found: {root}/nope/"]),
    ("dir-without-images", [DIGITS, GOOD, "{root}/no_images"], [".png/.jpg", "{root}/no_images"]),
    (
        "not-an-image",
        [DIGITS, GOOD, "{root}/notes.txt"],
        ["{root}/notes.txt is not an image file that can be read"],
    ),
    (
        "corrupt-image",
        [DIGITS, GOOD, IMAGES, "{root}/broken.png"],
        ["{root}/broken.png is not an image file that can be read"],
    ),
    (
        "image-of-another-size",
        [DIGITS, GOOD, "{root}/big.png"],
        ["{root}/big.png: the model cannot predict this image", "does not resize", "(32, 32)"],
    ),
    (
        "images-of-two-sizes",
        [DIGITS, GOOD, IMAGES, "{root}/big.png"],
        ["{root}/big.png is 32x32 pixels but {root}/images/0.png is 8x8", "does not resize"],
    ),
    ("workers-0", [DIGITS, GOOD, IMAGES, "--workers", "0"], ["--workers must be >= 1, got 0"]),
    ("batch-size-0", [DIGITS, GOOD, IMAGES, "--batch-size", "0"], ["--batch-size", "got 0"]),
    ("workers-not-int", [DIGITS, GOOD, IMAGES, "--workers", "two"], ["--workers", "'two'"]),
    ("device-name", [DIGITS, GOOD, IMAGES, "--device", "gpu"], ["--device gpu", "cpu or cuda"]),
    ("device-type", [DIGITS, GOOD, IMAGES, "--device", "meta"], ["--device meta", "only cpu"]),
    (
        "out-missing-dir",
        [DIGITS, GOOD, IMAGES, "--out", "{root}/nope/preds.json"],
        ["--out {root}/nope/preds.json", "{root}/nope does not exist"],
    ),
    ("out-is-a-dir", [DIGITS, GOOD, IMAGES, "--out", IMAGES], ["--out {root}/images", "directory"]),
    (
        "option-no-equals",
        [DIGITS, GOOD, IMAGES, "--cfg-options", "model.head"],
        ["--cfg-options", '"model.head" is not of the form KEY=VALUE'],
    ),
    (
        "option-unknown-type",
        [DIGITS, GOOD, IMAGES, "--cfg-options", "model.backbone.type=LeNett"],
        ['"LeNett" is not in the model registry', "Did you mean: LeNet"],
    ),
    (
        "option-typo-path",
        [DIGITS, GOOD, IMAGES, "--cfg-options", "data.tst.pipeline.0.type=X"],
        ['"data.tst" does not exist', "Did you mean: test"],
    ),
]


@pytest.mark.parametrize(
    "argv,fragments", [c[1:] for c in INFER_CASES], ids=[c[0] for c in INFER_CASES]
)
def test_infer_bad_input_names_the_culprit(capsys, bad_files, argv, fragments):
    argv = [str(a).replace("{root}", str(bad_files)) for a in argv]
    err = _main_fails(capsys, "infer", *argv)
    for fragment in fragments:
        assert fragment.replace("{root}", str(bad_files)) in err, (fragment, err)
    assert not (bad_files / "nope").exists()


@pytest.mark.skipif(torch.cuda.is_available(), reason="tests a machine without CUDA")
def test_infer_cuda_device_without_cuda(capsys, bad_files):
    err = _main_fails(
        capsys, "infer", DIGITS, bad_files / "good.pth", bad_files / "images", "--device", "cuda"
    )
    assert "--device cuda: CUDA is not available here; use --device cpu" in err


def test_infer_good_input_still_predicts(capsys, bad_files, tmp_path):
    """The checks leave a valid command alone (and it writes --out)."""
    out = tmp_path / "preds.json"
    argv = [DIGITS, bad_files / "good.pth", bad_files / "images", "--no-progress", "--out", out]
    assert _tool("infer").main([str(a) for a in argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split("\t")[0] for line in lines] == [
        str(bad_files / "images" / f"{i}.png") for i in range(2)
    ]
    assert len(json.loads(out.read_text())) == 2


# ------------------------------------------------------------------------------ security
def _calls(tree: ast.AST):
    """``(enclosing function, call node)`` for every call in ``tree``."""

    def walk(node, func):
        for child in ast.iter_child_nodes(node):
            inner = (
                child.name if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)) else func
            )
            if isinstance(child, ast.Call):
                yield func, child
            yield from walk(child, inner)

    yield from walk(tree, "<module>")


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "?"


def _sources():
    for folder in ("mmpar", "tools"):
        for path in sorted((REPO / folder).rglob("*.py")):
            yield path.relative_to(REPO).as_posix(), ast.parse(path.read_text(), str(path))


def test_no_eval_or_exec_except_the_config_loader():
    found = []
    for rel, tree in _sources():
        for func, call in _calls(tree):
            name = _dotted(call.func)
            if name in ("eval", "exec", "builtins.eval", "builtins.exec"):
                found.append((rel, func, name))
    # Both run code the user named on purpose: a config file, and the script the zero-edit
    # launcher starts as ``__main__`` (``python -m mmpar.as_mmcv script.py``, as ``python
    # script.py`` would). Nothing read from a checkpoint, a log or the network is evaluated.
    assert found == [
        ("mmpar/as_mmcv.py", "_exec_as_main", "exec"),
        ("mmpar/utils/config/loading.py", "_exec_python", "exec"),
    ]


def test_yaml_is_only_loaded_safely():
    unsafe = {"load", "load_all", "full_load", "full_load_all", "unsafe_load", "unsafe_load_all"}
    bad = []
    for rel, tree in _sources():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and _dotted(node.value) == "yaml":
                if node.attr in unsafe or node.attr.endswith(("Loader", "Unpickler")):
                    bad.append((rel, node.lineno, node.attr))
    assert bad == []


def test_torch_load_is_weights_only_by_default():
    variable = []
    for rel, tree in _sources():
        for func, call in _calls(tree):
            if _dotted(call.func) != "torch.load":
                continue
            kw = {k.arg: k.value for k in call.keywords}  # None: a **kwargs dict
            assert "weights_only" in kw or None in kw, f"{rel}:{call.lineno}: no weights_only"
            value = kw.get("weights_only")
            if isinstance(value, ast.Constant):
                assert value.value is True, f"{rel}:{call.lineno}"
            else:
                variable.append((rel, func))
    assert set(variable) == {("mmpar/runner/checkpointing/safe_load.py", "_torch_load")}
    # ... and every public way into it defaults to weights_only=True.
    from mmpar.apis import build_train_runner, init_model
    from mmpar.runner import BaseRunner, load_checkpoint
    from mmpar.runner.checkpoint import _load_checkpoint

    for fn in (load_checkpoint, _load_checkpoint, BaseRunner.load_checkpoint, BaseRunner.resume):
        assert inspect.signature(fn).parameters["weights_only"].default is True, fn
    assert inspect.signature(build_train_runner).parameters["weights_only"].default is True
    assert inspect.signature(init_model).parameters["weights_only"].default is True


def test_pickle_is_never_loaded_unrestricted():
    """No ``pickle.load(s)``; every Unpickler subclass restricts ``find_class``."""
    for rel, tree in _sources():
        for _, call in _calls(tree):
            assert _dotted(call.func) not in ("pickle.load", "pickle.loads"), rel
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and any(
                _dotted(b) == "pickle.Unpickler" for b in node.bases
            ):
                methods = {n.name for n in node.body if isinstance(n, ast.FunctionDef)}
                assert "find_class" in methods, f"{rel}: {node.name} does not restrict find_class"


def test_yaml_config_with_python_tag_is_refused(bad_files, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = bad_files / "configs" / "evil.yaml"
    with pytest.raises(SyntaxError, match=r"evil\.yaml, line 1: invalid YAML.*python/object"):
        Config.fromfile(str(path))
    assert not (tmp_path / "marker").exists()


def test_cfg_options_are_parsed_without_eval(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    parser = argparse.ArgumentParser()
    parser.add_argument("--cfg-options", nargs="+", action=DictAction, default={})
    payload = "__import__('os').system('touch marker')"
    items = [f"a=[{payload!r}]", f'b="{payload}"', f"c={payload}", f"d={{k:{payload!r}}}"]
    opts = parser.parse_args(["--cfg-options", *items]).cfg_options
    # strings, never evaluated (unquoted, a word with brackets is a str, as in mmcv)
    assert opts == {"a": [payload], "b": payload, "c": payload, "d": {"k": payload}}
    assert not (tmp_path / "marker").exists()


def test_cifar_pickles_cannot_run_code(tmp_path):
    """Dataset files are data: even without the md5 check, a CIFAR pickle cannot run code."""
    from mmpar.datasets import CIFAR10

    folder = tmp_path / "cifar-10-batches-py"
    folder.mkdir()
    marker = tmp_path / "pwned"
    for i in range(1, 6):
        (folder / f"data_batch_{i}").write_bytes(
            pickle.dumps({"data": _Evil(marker), "labels": [0]})
        )
    (folder / "batches.meta").write_bytes(pickle.dumps({"label_names": list("0123456789")}))
    with pytest.raises(ValueError, match=r"data_batch_1: refusing to unpickle .*open"):
        CIFAR10(str(tmp_path), check_integrity=False)
    assert not marker.exists()


# ------------------------------------------------------------- real processes (a subset)
@pytest.mark.slow
def test_cli_config_error_exits_2_with_one_line(bad_files, bad_work_dir):
    config = bad_files / "configs" / "syntax.py"
    proc = _cli("tools/train.py", config, "--work-dir", bad_work_dir)
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    prefix = f"error: ConfigSyntaxError: There are syntax errors in config file {config}"
    assert err.startswith(prefix + ", line 2: invalid Python"), err
    assert "\n" not in err


@pytest.mark.slow
def test_cli_refuses_code_running_checkpoint(bad_files, bad_work_dir, tmp_path):
    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.pth"
    torch.save({"state_dict": {}, "meta": _Evil(marker)}, evil)
    proc = _cli("tools/train.py", DIGITS, "--work-dir", bad_work_dir, "--resume-from", evil, *FAST)
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    assert err.startswith("error: UnsafeCheckpointError: ") and "--trust-checkpoint" in err
    assert not marker.exists()


@pytest.mark.slow
def test_cli_test_tool_lists_shape_mismatch(bad_files):
    proc = _cli("tools/test.py", DIGITS, bad_files / "rgb_lenet.pth", "--no-progress")
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    assert err.startswith("error: CheckpointMismatchError: ")
    assert all(line in err for line in _expected_mismatch())


@pytest.mark.slow
def test_cli_corrupt_image_exits_1_naming_the_file(tmp_path):
    root = _image_folder(tmp_path / "images", corrupt=True)
    config = _folder_config(tmp_path / "folder.py", root)
    ckpt = tmp_path / "folder.pth"
    save_checkpoint(build_classifier(Config.fromfile(str(config)).model), str(ckpt))
    proc = _cli("tools/test.py", config, ckpt, "--no-progress")
    assert proc.returncode == 1, proc.stderr
    # The exception line (maybe followed by a note naming the dataset and sample) ends stderr.
    tail = proc.stderr.strip().splitlines()[-3:]
    assert any(
        line.startswith("OSError: cannot decode image file") and "cat/broken.png" in line
        for line in tail
    ), proc.stderr[-3000:]


@pytest.mark.slow
def test_cli_infer_image_of_another_size(bad_files):
    image = bad_files / "big.png"
    proc = _cli("tools/infer.py", DIGITS, bad_files / "good.pth", image, "--no-progress")
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    assert err.startswith(f"error: ValueError: {image}: the model cannot predict this image")
    assert "\n" not in err and proc.stdout == ""


@pytest.mark.slow
def test_cli_launcher_pytorch_without_torchrun(bad_work_dir):
    proc = _cli("tools/train.py", DIGITS, "--work-dir", bad_work_dir, "--launcher", "pytorch")
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    assert err.startswith("error: UsageError: --launcher pytorch: ") and "RANK" in err


@pytest.mark.slow
def test_cli_work_dir_under_a_file(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    proc = _cli("tools/train.py", DIGITS, "--work-dir", blocker / "run")
    assert proc.returncode == 2, proc.stderr
    assert f'"{blocker}" is not a directory' in _error_message(proc.stderr)


@pytest.mark.slow
def test_cli_unknown_evaluation_key_exits_2_before_writing(bad_files, bad_work_dir):
    """``evaluation=dict(intervl=1)`` fails while the run is set up, not at the first evaluation."""
    proc = _cli("tools/train.py", bad_files / "configs" / "eval_arg.py", "--work-dir", bad_work_dir)
    assert proc.returncode == 2, proc.stderr
    err = _error_message(proc.stderr)
    assert err.startswith(
        'error: ConfigArgumentError: evaluation: EvalHook: unexpected keyword argument "intervl"'
    ), err
    assert "Did you mean: interval?" in err and "\n" not in err
