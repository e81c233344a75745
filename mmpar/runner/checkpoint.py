"""mmcv 1.x's ``mmcv.runner.checkpoint``: the names at mmcv's path, implemented in checkpointing/.

The checkpoint format (``save_checkpoint``, ``load_checkpoint``, ...) is
:mod:`mmpar.runner.checkpointing.format`; the state dict from/into a model
:mod:`~mmpar.runner.checkpointing.model_state`, the URL schemes
:mod:`~mmpar.runner.checkpointing.sources`, safe loading
:mod:`~mmpar.runner.checkpointing.safe_load`. This module only re-exports them, with the
helpers mmcv's module imports (``FileClient``, ``load_file``, ``mkdir_or_exist``, ...), which
projects import from here too.
"""

# ruff: noqa: F401 (every import is a name of this module; ``__all__`` lists mmcv's and ours)
from mmpar.fileio import FileClient
from mmpar.fileio import load as load_file
from mmpar.parallel import is_module_wrapper
from mmpar.utils import digit_version, load_url, mkdir_or_exist
from mmpar.utils.dist import get_dist_info

from .checkpointing.atomic_file import update_latest_link
from .checkpointing.format import (
    CheckpointSaveError,
    MissingPrefixError,
    _load_checkpoint,
    _load_checkpoint_with_prefix,
    load_checkpoint,
    load_local_checkpoint,
    load_weights,
    save_checkpoint,
    state_under_prefix,
    write_checkpoint,
)
from .checkpointing.model_state import (
    CheckpointMismatchError,
    get_state_dict,
    load_state_dict,
    weights_to_cpu,
)
from .checkpointing.run_identity import checkpoint_iter, find_latest_checkpoint
from .checkpointing.safe_load import (
    CheckpointDownloadError,
    CheckpointError,
    CorruptCheckpointError,
    UnsafeCheckpointError,
)
from .checkpointing.sources import (
    DEFAULT_CACHE_DIR,
    ENV_MMCV_HOME,
    ENV_XDG_CACHE_HOME,
    CheckpointLoader,
    _get_mmcv_home,  # mmcv's private helper: projects call it to resolve model-zoo paths
    get_deprecated_model_names,
    get_external_models,
    get_mmcls_models,
    get_torchvision_models,
    load_from_ceph,
    load_from_http,
    load_from_local,
    load_from_mmcls,
    load_from_openmmlab,
    load_from_pavi,
    load_from_torchvision,
)

__all__ = [
    "DEFAULT_CACHE_DIR",
    "ENV_MMCV_HOME",
    "ENV_XDG_CACHE_HOME",
    "CheckpointDownloadError",
    "CheckpointError",
    "CheckpointLoader",
    "CheckpointMismatchError",
    "CheckpointSaveError",
    "CorruptCheckpointError",
    "MissingPrefixError",
    "UnsafeCheckpointError",
    "_load_checkpoint",
    "_load_checkpoint_with_prefix",
    "find_latest_checkpoint",
    "get_deprecated_model_names",
    "get_external_models",
    "get_mmcls_models",
    "get_state_dict",
    "get_torchvision_models",
    "load_checkpoint",
    "load_from_ceph",
    "load_from_http",
    "load_from_local",
    "load_from_mmcls",
    "load_from_openmmlab",
    "load_from_pavi",
    "load_from_torchvision",
    "load_state_dict",
    "save_checkpoint",
    "weights_to_cpu",
]
