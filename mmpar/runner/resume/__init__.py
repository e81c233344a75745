"""Exact resume.

The runner state a checkpoint carries (counters, RNG, hook states) and the train loader's
position. Which checkpoint auto-resume continues is decided with the checkpoint files, in
:mod:`mmpar.runner.checkpointing.run_identity`.
"""
