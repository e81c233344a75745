"""Weight initialisation from ``init_cfg`` dicts.

Implemented in :mod:`mmpar.runner.model_setup.weight_init`.

Kept at this path for the models (and user code) that import it from here.
"""

from mmpar.runner.model_setup.weight_init import apply_init_cfg, load_pretrained

__all__ = ["apply_init_cfg", "load_pretrained"]
