"""Datasets, pipelines, samplers and the data-loader builder."""

from .base_dataset import BaseDataset
from .builder import build_dataloader, build_dataset, worker_init_fn
from .cifar import CIFAR10, CIFAR100
from .dataset_wrappers import ConcatDataset, RepeatDataset
from .digits import Digits
from .image_folder import ImageFolder
from .pipelines import (
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
)
from .registry import BATCH_SAMPLERS, DATASETS, PIPELINES, SAMPLERS
from .samplers import DistributedSampler, InfiniteSampler, SizeBucketBatchSampler

# The samplers package stays registry-free; make its classes buildable by name here.
for _registry, _cls in (
    (SAMPLERS, DistributedSampler),
    (SAMPLERS, InfiniteSampler),
    (BATCH_SAMPLERS, SizeBucketBatchSampler),
):
    if _cls.__name__ not in _registry.module_dict:
        _registry.register_module(module=_cls)

__all__ = [
    "BATCH_SAMPLERS",
    "CIFAR10",
    "CIFAR100",
    "DATASETS",
    "PIPELINES",
    "SAMPLERS",
    "BaseDataset",
    "Collect",
    "Compose",
    "ConcatDataset",
    "Digits",
    "DistributedSampler",
    "ImageFolder",
    "ImageToTensor",
    "InfiniteSampler",
    "LoadImageFromFile",
    "Normalize",
    "RandomCrop",
    "RandomFlip",
    "RepeatDataset",
    "Resize",
    "SizeBucketBatchSampler",
    "ToDataContainer",
    "ToTensor",
    "build_dataloader",
    "build_dataset",
    "worker_init_fn",
]
