"""mmcv 1.x ``mmcv.device.ipu``: the names import; mmpar does not ship Graphcore IPU support.

mmcv defines these names only when poptorch sees IPU hardware. mmpar always defines them, so
code that names them on a guarded branch imports, and using one raises
``BackendNotSupportedError`` with what to use instead.
"""

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import IS_IPU_AVAILABLE as IS_IPU_AVAILABLE

from .dataloader import IPUDataLoader
from .hook_wrapper import IPUFp16OptimizerHook
from .model_wrapper import ipu_model_wrapper
from .runner import IPUBaseRunner, IPUEpochBasedRunner, IPUIterBasedRunner
from .utils import cfg2options

__all__ = [
    "IPUBaseRunner",
    "IPUDataLoader",
    "IPUEpochBasedRunner",
    "IPUFp16OptimizerHook",
    "IPUIterBasedRunner",
    "cfg2options",
    "ipu_model_wrapper",
]
