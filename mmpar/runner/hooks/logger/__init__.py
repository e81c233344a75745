"""Logger hooks: text/JSON, TensorBoard and the experiment trackers (mmcv 1.x paths).

Importing this package registers every logger hook in HOOKS; the tracker libraries (mlflow,
wandb, dvclive, neptune, clearml, segmind, pavi) are imported only when their hook is built.
"""

from .base import LoggerHook
from .clearml import ClearMLLoggerHook
from .dvclive import DvcliveLoggerHook
from .mlflow import MlflowLoggerHook
from .neptune import NeptuneLoggerHook
from .pavi import PaviLoggerHook
from .segmind import SegmindLoggerHook
from .tensorboard import TensorboardLoggerHook
from .text import TextLoggerHook
from .wandb import WandbLoggerHook

__all__ = [
    "ClearMLLoggerHook",
    "DvcliveLoggerHook",
    "LoggerHook",
    "MlflowLoggerHook",
    "NeptuneLoggerHook",
    "PaviLoggerHook",
    "SegmindLoggerHook",
    "TensorboardLoggerHook",
    "TextLoggerHook",
    "WandbLoggerHook",
]
