"""Imported by mmdet's own tools through a config's ``custom_imports``; mmdet stays unedited.

mmdet 2.28's ``build_ddp`` asserts a cuda/mlu/npu device, and ``train_detector`` passes
``device_ids=[LOCAL_RANK]``, which DistributedDataParallel refuses for a CPU module. So its DDP
path cannot run on CPU as released. ``mmdet.apis.train`` looks ``build_ddp`` up in its own
namespace; it is rebound there to a function that wraps a CPU model in
``mmcv.parallel.MMDistributedDataParallel`` without ``device_ids`` (the CPU form of mmdet's
cuda branch) and hands every other device to mmdet's own function.
"""

import importlib

_train = importlib.import_module("mmdet.apis.train")
_mmdet_build_ddp = _train.build_ddp


def build_ddp(model, device="cuda", *args, **kwargs):
    """mmdet's ``build_ddp``, plus the CPU case it lacks."""
    if device != "cpu":
        return _mmdet_build_ddp(model, device, *args, **kwargs)
    from mmcv.parallel import MMDistributedDataParallel

    kwargs.pop("device_ids", None)
    return MMDistributedDataParallel(model.cpu(), *args, **kwargs)


_train.build_ddp = build_ddp
