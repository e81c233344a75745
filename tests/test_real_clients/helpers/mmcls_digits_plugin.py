"""Imported by mmcls's own tools through a config's ``custom_imports``; mmcls stays unedited.

Two things, and nothing else:

* ``DigitsCIFAR10``: mmcls's ``CIFAR10`` with its md5 lists replaced by the sums of the files the
  test wrote (``md5sums.json`` beside them). mmcls checks every CIFAR file against the md5 of
  the real download and tries to download CIFAR when one differs; the subclass keeps that check
  (``CIFAR10.load_annotations`` runs unchanged) and only changes which sums it expects.
* CPU DDP: mmcls 0.25's ``wrap_distributed_model`` raises ``RuntimeError('Unavailable device
  "cpu"')`` for any device but cuda/npu/mlu. ``mmcls.apis.train`` looks the function up in its
  own namespace, so it is rebound there to one that wraps a CPU model in
  ``mmcv.parallel.MMDistributedDataParallel`` (no ``device_ids``: the CPU form of mmcls's cuda
  branch) and hands every other device to mmcls's own function.
"""

import importlib
import json
import os

from mmcls.datasets import CIFAR10, DATASETS

_train = importlib.import_module("mmcls.apis.train")
_mmcls_wrap_distributed_model = _train.wrap_distributed_model


@DATASETS.register_module()
class DigitsCIFAR10(CIFAR10):
    """CIFAR10 whose expected md5 sums are read from ``md5sums.json`` in its folder."""

    def __init__(self, data_prefix, *args, **kwargs):
        with open(os.path.join(data_prefix, self.base_folder, "md5sums.json")) as f:
            md5 = json.load(f)
        self.train_list = [[name, md5[name]] for name, _ in CIFAR10.train_list]
        self.test_list = [[name, md5[name]] for name, _ in CIFAR10.test_list]
        self.meta = {**CIFAR10.meta, "md5": md5[CIFAR10.meta["filename"]]}
        super().__init__(data_prefix, *args, **kwargs)


def wrap_distributed_model(model, device="cuda", *args, **kwargs):
    """mmcls's ``wrap_distributed_model``, plus the CPU case it lacks."""
    if device != "cpu":
        return _mmcls_wrap_distributed_model(model, device, *args, **kwargs)
    from mmcv.parallel import MMDistributedDataParallel

    return MMDistributedDataParallel(model.cpu(), *args, **kwargs)


_train.wrap_distributed_model = wrap_distributed_model
