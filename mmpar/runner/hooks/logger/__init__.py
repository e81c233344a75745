"""Logger hooks: text/JSON and TensorBoard."""

from . import base, tensorboard, text  # noqa: F401  (register the hooks)
