"""Data pipelines: loading, augmentation and formatting transforms (``PIPELINES`` registry)."""

from .compose import Compose
from .formatting import Collect, ImageToTensor, ToDataContainer, ToTensor, to_tensor
from .loading import LoadImageFromFile, read_image
from .rng import get_rng, make_rng
from .transforms import Normalize, RandomCrop, RandomFlip, Resize

__all__ = [
    "Compose",
    "Collect",
    "ImageToTensor",
    "ToDataContainer",
    "ToTensor",
    "to_tensor",
    "LoadImageFromFile",
    "read_image",
    "get_rng",
    "make_rng",
    "Normalize",
    "RandomCrop",
    "RandomFlip",
    "Resize",
]
