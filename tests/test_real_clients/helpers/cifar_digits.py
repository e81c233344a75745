"""scikit-learn's digits as CIFAR-10 python batches, and an mmcls config that trains on them.

Shared by tests/test_real_clients and benchmarks/mmcls_vs_mmcv.py (both load this file by
path). Plain Python, no pytest.
"""

import hashlib
import json
import pickle
from pathlib import Path

import numpy as np

# A config in the user's folder that inherits mmcls's own ResNet-18 CIFAR-10 config; why each
# setting is there is told in tests/test_real_clients/test_mmcls.py.
MMCLS_CONFIG = """\
_base_ = [{base!r}]
custom_imports = dict(imports=['mmcls_digits_plugin'], allow_failed_imports=False)
img_norm_cfg = dict(
    mean=[125.307, 122.961, 113.8575], std=[51.5865, 50.847, 51.255], to_rgb=False)
train_pipeline = [
    dict(type='Normalize', **img_norm_cfg),
    dict(type='ImageToTensor', keys=['img']),
    dict(type='ToTensor', keys=['gt_label']),
    dict(type='Collect', keys=['img', 'gt_label']),
]
data = dict(
    samples_per_gpu=8,
    workers_per_gpu=0,
    persistent_workers=False,
    train=dict(type='DigitsCIFAR10', data_prefix={data!r}, pipeline=train_pipeline),
    val=dict(type='DigitsCIFAR10', data_prefix={data!r}),
    test=dict(type='DigitsCIFAR10', data_prefix={data!r}))
optimizer = dict(_delete_=True, type='Adam', lr=1e-3)
runner = dict(max_epochs={epochs})
log_config = dict(interval=8)
"""


def write_mmcls_config(path, configs_dir, data, epochs=2):
    """Write :data:`MMCLS_CONFIG` inheriting from mmcls's ``configs_dir``; return ``path``."""
    base = Path(configs_dir, "resnet", "resnet18_8xb16_cifar10.py")
    Path(path).write_text(MMCLS_CONFIG.format(base=str(base), data=str(data), epochs=epochs))
    return Path(path)


def write_cifar_digits(root, n_train=1000, n_test=300, seed=0):
    """Write scikit-learn's digits as CIFAR-10's python batches under ``root``.

    The layout is the real one (``cifar-10-batches-py/data_batch_1..5``, ``test_batch``,
    ``batches.meta``: pickled dicts with ``data`` as uint8 rows of 3x32x32 in CHW order,
    ``labels`` and ``label_names``). The 8x8 digits are upscaled 4x by pixel repetition to
    32x32, scaled from 0..16 to 0..255 and repeated over 3 channels. The md5 sums of the files
    go to ``md5sums.json`` beside them (read by helpers/mmcls_digits_plugin.py) and are returned
    as ``{file: md5}``.
    """
    from sklearn.datasets import load_digits

    digits = load_digits()
    order = np.random.default_rng(seed).permutation(len(digits.target))[: n_train + n_test]
    imgs = digits.images[order] * (255.0 / 16.0)
    imgs = imgs.repeat(4, axis=1).repeat(4, axis=2).round().astype(np.uint8)
    rows = np.repeat(imgs[:, None], 3, axis=1).reshape(len(order), 3 * 32 * 32)
    labels = digits.target[order].tolist()
    folder = Path(root, "cifar-10-batches-py")
    folder.mkdir(parents=True)
    parts = np.array_split(np.arange(n_train), 5)
    batches = {f"data_batch_{i + 1}": part for i, part in enumerate(parts)}
    batches["test_batch"] = np.arange(n_train, n_train + n_test)
    md5 = {}
    for name, idx in batches.items():
        entry = {"batch_label": name, "data": rows[idx], "labels": [labels[i] for i in idx]}
        md5[name] = _dump(folder / name, entry)
    meta = {"label_names": [str(d) for d in range(10)], "num_vis": 3072}
    md5["batches.meta"] = _dump(folder / "batches.meta", meta)
    (folder / "md5sums.json").write_text(json.dumps(md5, indent=1))
    return md5


def _dump(path, obj):
    data = pickle.dumps(obj, protocol=2)
    Path(path).write_bytes(data)
    return hashlib.md5(data).hexdigest()
