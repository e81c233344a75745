"""The error type of a mistake the user must fix (a flag, a config, the work dir).

It lives at the bottom layer so that the runner's own refusals (the work dir's lock, a new run
over another run's checkpoints) and the command-line tools share one type: the tools print it
as one ``error:`` line (:mod:`mmpar.cli.errors`).
"""


class UsageError(Exception):
    """The command line or the environment is wrong in a way the user must fix."""


__all__ = ["UsageError"]
