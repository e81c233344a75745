"""Weight initialisation from ``init_cfg`` dicts; implemented in :mod:`mmpar.runner.weight_init`.

Kept at this path for the models (and user code) that import it from here.
"""

from mmpar.runner.weight_init import apply_init_cfg, load_pretrained

__all__ = ["apply_init_cfg", "load_pretrained"]
