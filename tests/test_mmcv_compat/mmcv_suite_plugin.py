"""pytest plugin for mmcv's own test suite: ``import mmcv`` is served by mmpar.

Loaded with ``-p mmcv_suite_plugin`` (``scripts/mmcv_suite.py`` puts this folder on
``PYTHONPATH``) so that the zero-edit mode is on before mmcv's test modules import ``mmcv``.
"""

import mmpar.as_mmcv  # noqa: F401  (importing it switches the zero-edit mode on)
