"""Command-line pieces the tools share: the ``--trust-checkpoint`` flag and checks of paths.

The checks run before any work, so that a path that cannot be written is reported as one
``error: UsageError: ...`` line (see :mod:`mmpar.cli.errors`) instead of failing after the work
whose result it should receive.
"""

from __future__ import annotations

import argparse
import os
import os.path as osp

from mmpar.runner.checkpointing.sharded import HEADER, read_sharded_header

from .errors import TRUST_CHECKPOINT_FLAG, UsageError


def train_work_dir(work_dir_flag: str | None, cfg, config_path: str) -> str:
    """The work dir of a training, by mmcv's rule.

    ``--work-dir`` if given, else the config's ``work_dir``, else ``work_dirs/<config name>``.
    ``tools/train.py`` and the lock check of ``tools/dist_train.sh`` both decide it here.
    """
    if work_dir_flag is not None:
        return work_dir_flag
    if cfg.get("work_dir") is not None:
        return cfg.work_dir
    return osp.join("work_dirs", osp.splitext(osp.basename(config_path))[0])


def add_trust_checkpoint_argument(
    parser: argparse.ArgumentParser, what: str = "the checkpoint"
) -> None:
    """Add the ``--trust-checkpoint`` flag, which the unsafe-checkpoint error recommends.

    Args:
        parser: The tool's parser.
        what: What the flag loads, for its help text (e.g. ``'--resume-from/--load-from'``).
    """
    parser.add_argument(
        TRUST_CHECKPOINT_FLAG,
        action="store_true",
        help=f"load {what} with weights_only=False: unpickling may run code from the file, "
        "so only for checkpoints you trust (see docs/security.md)",
    )


def check_work_dir(path: str) -> None:
    """Check that ``path`` can be (or become) a writable directory, without creating it.

    Raises:
        UsageError: ``path`` is not a directory, or it (or the nearest existing directory
            above it, when it does not exist yet) is not writable by this process.
    """
    path = osp.abspath(path)
    existing = path
    while not osp.exists(existing) and osp.dirname(existing) != existing:
        existing = osp.dirname(existing)
    what = "work_dir" if existing == path else f'cannot create work_dir "{path}":'
    if not osp.isdir(existing):
        raise UsageError(
            f'{what} "{existing}" is not a directory (a file is in the way); '
            "choose another --work-dir"
        )
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(
            f'{what} "{existing}" is not writable by this user; choose another --work-dir'
        )


def check_checkpoint_path(path: str, label: str = "checkpoint") -> None:
    """Check that a local checkpoint to load exists: a ``.pth`` file or a sharded directory.

    Args:
        path: The path given on the command line or in the config.
        label: Names it in the message (``'checkpoint'``, ``'resume_from checkpoint'``).

    Raises:
        FileNotFoundError: Nothing is at ``path``.
        UsageError: ``path`` is a directory that holds no sharded checkpoint's files (a work
            dir given by mistake): the message names its ``latest.pth`` or checkpoint files.
        CorruptCheckpointError: ``path`` is a directory with some of a sharded (FSDP)
            checkpoint's files but not all (a save that was interrupted).
    """
    if not osp.exists(path):
        raise FileNotFoundError(f"{label} not found: {path}")
    if osp.isdir(path):
        if not _has_shard_files(path):
            raise UsageError(_not_a_checkpoint_message(path, label))
        read_sharded_header(path)


def _has_shard_files(path: str) -> bool:
    """Whether a directory holds any file of a sharded checkpoint (header, DCP metadata, shards)."""
    names = os.listdir(path)
    return any(n in (HEADER, ".metadata") or n.endswith(".distcp") for n in names)


def _not_a_checkpoint_message(path: str, label: str) -> str:
    """What to pass instead of a directory: its ``latest.pth``, or the checkpoints it holds."""
    latest = osp.join(path, "latest.pth")
    if osp.exists(latest):
        hint = f"to load the newest checkpoint of this work dir, pass {latest}"
    else:
        found = sorted(n for n in os.listdir(path) if n.endswith(".pth"))
        hint = (
            f"pass one of its checkpoint files ({', '.join(found[:5])})"
            if found
            else "it holds no checkpoint (*.pth)"
        )
    return f'{label} "{path}" is a directory, not a checkpoint file; {hint}'


def check_output_file(path: str) -> None:
    """Check that ``--out path`` can be written, before the work whose result it receives.

    Raises:
        UsageError: ``path`` is a directory, or its directory is missing or not writable.
    """
    folder = osp.dirname(osp.abspath(path))
    if osp.isdir(path):
        raise UsageError(f"--out {path}: is a directory; give a file name")
    if not osp.isdir(folder):
        raise UsageError(f"--out {path}: the directory {folder} does not exist")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--out {path}: the directory {folder} is not writable by this user")
