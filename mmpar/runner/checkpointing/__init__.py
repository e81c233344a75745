"""Checkpoint files and the object that owns a runner's checkpoints.

The format (``format``), atomic writes, safe loading, model/FSDP state, URL sources,
sharded directories, the run identity that decides what auto-resume continues, and the
:class:`Checkpointer` that owns a runner's checkpoints. Nothing here imports another part of
the runner (``tests/test_layering.py``).

mmcv 1.x's functions keep their path, :mod:`mmpar.runner.checkpoint`.
"""
