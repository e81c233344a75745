"""mmpar.parallel: DataContainer, collate, scatter/gather and the data-parallel model wrappers."""

from .collate import collate
from .data_container import DataContainer
from .data_parallel import MMDataParallel
from .distributed import MMDistributedDataParallel
from .fully_sharded import MMFullyShardedDataParallel, is_fully_sharded
from .registry import MODULE_WRAPPERS
from .scatter_gather import gather, scatter, scatter_kwargs
from .utils import is_module_wrapper

__all__ = [
    "MODULE_WRAPPERS",
    "DataContainer",
    "MMDataParallel",
    "MMDistributedDataParallel",
    "MMFullyShardedDataParallel",
    "collate",
    "gather",
    "is_fully_sharded",
    "is_module_wrapper",
    "scatter",
    "scatter_kwargs",
]
