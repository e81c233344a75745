"""Data pipelines: loading, augmentation and formatting transforms (``PIPELINES`` registry)."""

from .compose import Compose
from .formatting import Collect, ImageToTensor, ToDataContainer, ToTensor, to_tensor
from .loading import LoadImageFromFile, read_image
from .rng import get_rng, make_rng
from .transforms import Normalize, RandomCrop, RandomFlip, Resize

__all__ = [
    "Collect",
    "Compose",
    "ImageToTensor",
    "LoadImageFromFile",
    "Normalize",
    "RandomCrop",
    "RandomFlip",
    "Resize",
    "ToDataContainer",
    "ToTensor",
    "get_rng",
    "make_rng",
    "read_image",
    "to_tensor",
]
