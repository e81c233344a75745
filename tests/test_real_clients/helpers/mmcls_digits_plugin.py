"""Imported by mmcls's own tools through a config's ``custom_imports``; mmcls stays unedited.

One thing: ``DigitsCIFAR10``, mmcls's ``CIFAR10`` with its md5 lists replaced by the sums of the
files the test wrote (``md5sums.json`` beside them). mmcls checks every CIFAR file against the
md5 of the real download and tries to download CIFAR when one differs; the subclass keeps that
check (``CIFAR10.load_annotations`` runs unchanged) and only changes which sums it expects.
(CPU DDP needs nothing here: the zero-edit launcher adds the CPU case to mmcls's
``wrap_distributed_model``, see mmpar/parallel/project_cpu_ddp.py.)
"""

import json
import os

from mmcls.datasets import CIFAR10, DATASETS


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
