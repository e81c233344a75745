"""mmcv 1.x's ``mmcv.cnn.utils.weight_init``, served by :mod:`mmpar.runner.model_setup.weight_init`.

Its one implementation is re-exported here, not copied: ``mmpar.cnn.constant_init`` is
``mmpar.runner.model_setup.weight_init.constant_init``, and an initialiser registered in
``INITIALIZERS`` through either path is seen by both.
"""

from mmpar.runner.model_setup import weight_init as _runner_weight_init
from mmpar.runner.model_setup.weight_init import *  # noqa: F403 (one implementation, listed in its __all__)

# mmcv's module has the initialisers only, not mmpar's init-cfg errors and helpers.
_MMPAR_ONLY = (
    "InitCfgError",
    "PretrainedKeyError",
    "UnknownInitTypeError",
    "apply_init_cfg",
    "load_pretrained",
)
__all__ = [name for name in _runner_weight_init.__all__ if name not in _MMPAR_ONLY]
