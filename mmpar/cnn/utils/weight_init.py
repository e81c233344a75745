"""mmcv 1.x's ``mmcv.cnn.utils.weight_init``, served by :mod:`mmpar.runner.model_setup.weight_init`.

Its one implementation is re-exported here, not copied: ``mmpar.cnn.constant_init`` is
``mmpar.runner.model_setup.weight_init.constant_init``, and an initialiser registered in
``INITIALIZERS`` through either path is seen by both.
"""

from mmpar.runner.model_setup import weight_init as _runner_weight_init
from mmpar.runner.model_setup.weight_init import *  # noqa: F403 (one implementation, listed in its __all__)

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils import Registry as Registry
from mmpar.utils import build_from_cfg as build_from_cfg
from mmpar.utils import get_logger as get_logger
from mmpar.utils import print_log as print_log

# mmcv's module has the initialisers only, not mmpar's init-cfg errors and helpers.
_MMPAR_ONLY = (
    "InitCfgError",
    "PretrainedKeyError",
    "UnknownInitTypeError",
    "apply_init_cfg",
    "load_pretrained",
)
__all__ = [name for name in _runner_weight_init.__all__ if name not in _MMPAR_ONLY]
