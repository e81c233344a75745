"""Checkpoint files and the object that owns a runner's checkpoints.

The format, atomic writes, safe loading, model/FSDP state, URL sources,
sharded directories, and the :class:`Checkpointer` that owns a runner's checkpoints.

mmcv 1.x's functions keep their path, :mod:`mmpar.runner.checkpoint`.
"""
