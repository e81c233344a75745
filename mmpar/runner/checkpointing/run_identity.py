"""Which run a checkpoint belongs to, which run last started in a work dir, and what to resume.

Every runner has a run identity (``runner.run_id``, a uuid4 hex string) that it records in the
``meta`` of every checkpoint it writes (``meta['run_id']``); resuming a checkpoint continues its
run and keeps its id. When a run starts, rank 0 writes :data:`RUN_RECORD` (``last_run.json``)
into the work dir: the id of the run, when and where it started, and the checkpoint it resumed.

Auto-resume (:func:`choose_resume_checkpoint`) continues the run the record names, from the
newest of that run's checkpoints that loads, and never takes another run's checkpoint: when
that run has none, training starts fresh; without a record, one run's checkpoints are
continued, and checkpoints of several runs are refused with :class:`MixedRunsError`.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any

from mmpar.version import __version__

from .atomic_file import atomic_path
from .safe_load import CheckpointError, CorruptCheckpointError, load_checkpoint_file
from .sharded import read_sharded_header
from .work_dir_paths import resolve_recorded, to_recorded

__all__ = [
    "RUN_RECORD",
    "FoundCheckpoint",
    "MixedRunsError",
    "checkpoint_iter",
    "checkpoint_run_id",
    "choose_resume_checkpoint",
    "find_latest_checkpoint",
    "new_run_id",
    "read_run_record",
    "scan_checkpoints",
    "write_run_record",
]

RUN_RECORD = "last_run.json"
RESUME_HINT = "pass --resume-from FILE (resume_from in a config) to continue one of them"

_logger = logging.getLogger("mmpar")


class MixedRunsError(CheckpointError):
    """Auto-resume found checkpoints of several runs and nothing says which one to continue."""


def new_run_id() -> str:
    """Return a new run identity (32 hex digits)."""
    return uuid.uuid4().hex


def checkpoint_iter(checkpoint: dict) -> int:
    """Return the iteration a checkpoint was saved at (``mmpar_state`` first, then ``meta``)."""
    state = checkpoint.get("mmpar_state") or {}
    if "iter" in state:
        return int(state["iter"])
    return int((checkpoint.get("meta") or {}).get("iter", -1))


def checkpoint_run_id(checkpoint: dict) -> str | None:
    """Return the run identity recorded in a checkpoint; None for mmcv or older mmpar files."""
    run_id = (checkpoint.get("meta") or {}).get("run_id")
    return run_id if isinstance(run_id, str) and run_id else None


@dataclass(frozen=True, order=True)
class FoundCheckpoint:
    """A checkpoint file that loads, ranked by ``(iter, mtime)`` (the newest is the largest).

    Attributes:
        iter: The iteration saved inside.
        mtime: Modification time of the file (of the link's target for ``latest.pth``).
        path: The file's path in the work dir.
        run_id: The run that wrote it; None when the file records none.
    """

    iter: int
    mtime: float
    path: str
    run_id: str | None = field(default=None, compare=False)


def _read_checkpoint(path: str) -> Any:
    if os.path.isdir(path):  # a sharded checkpoint: its header holds meta and mmpar_state
        return read_sharded_header(path)
    try:  # mmap: read only the small parts needed (meta, counters)
        return load_checkpoint_file(path, "cpu", weights_only=True, mmap=True)
    except CorruptCheckpointError:  # legacy (non-zip) files cannot be mmapped
        return load_checkpoint_file(path, "cpu", weights_only=True)


def scan_checkpoints(
    work_dir: str, suffix: str = "pth", logger: logging.Logger | None = None
) -> list[FoundCheckpoint]:
    """Return the ``*.<suffix>`` checkpoints in ``work_dir`` that load (unsorted).

    A link (``latest.pth``) and its target count once. Truncated or corrupt files are skipped
    with a warning, so a crash during a save never blocks auto-resume. Sharded checkpoints
    (directories) count by their header; hidden temporaries (``.<name>.tmp.<pid>``, of files
    and of directories a killed save left) never count.
    """
    if not os.path.isdir(work_dir):
        return []
    seen = set()
    found = []
    # Links last, so a file and latest.pth pointing at it are reported by the file's own name.
    names = sorted(
        os.listdir(work_dir), key=lambda n: (os.path.islink(os.path.join(work_dir, n)), n)
    )
    for name in names:
        path = os.path.join(work_dir, name)
        if not name.endswith(f".{suffix}") or name.startswith(".") or not os.path.exists(path):
            continue
        real = os.path.realpath(path)
        if real in seen:  # latest.pth symlink and its target
            continue
        seen.add(real)
        try:
            ckpt = _read_checkpoint(path)
            if not isinstance(ckpt, dict):
                raise CorruptCheckpointError(f'"{path}" holds no checkpoint dict')
        except CheckpointError as err:
            (logger or _logger).warning(f"auto-resume: skipping {path}: {err}")
            continue
        mtime = os.path.getmtime(real)
        found.append(FoundCheckpoint(checkpoint_iter(ckpt), mtime, path, checkpoint_run_id(ckpt)))
    return found


def find_latest_checkpoint(
    work_dir: str,
    suffix: str = "pth",
    logger: logging.Logger | None = None,
    *,
    run_id: str | None = None,
) -> str | None:
    """Return the newest checkpoint in ``work_dir`` that loads, or None if there is none.

    Candidates are ``*.<suffix>`` files, ranked by the iteration saved inside them, then by
    modification time. Truncated or corrupt files are skipped with a warning. This looks at
    every run's checkpoints; auto-resume uses :func:`choose_resume_checkpoint`.

    Args:
        work_dir: The directory to search.
        suffix: File name suffix of the candidates.
        logger: Where the warnings about skipped files go.
        run_id: Only consider checkpoints of this run.
    """
    found = scan_checkpoints(work_dir, suffix, logger)
    if run_id is not None:
        found = [c for c in found if c.run_id == run_id]
    return max(found).path if found else None


def write_run_record(
    work_dir: str, run_id: str, world_size: int = 1, resumed_from: str | None = None
) -> str:
    """Record in ``work_dir/last_run.json`` that run ``run_id`` starts now (atomic write).

    Args:
        work_dir: The run's work dir.
        run_id: The run's identity.
        world_size: Number of processes of the run.
        resumed_from: The checkpoint the run resumed from (None for a fresh run).

    Returns:
        The path of the record.
    """
    record = {
        "run_id": run_id,
        "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "host": socket.gethostname(),
        "pid": os.getpid(),
        "world_size": world_size,
        "resumed": resumed_from is not None,
        "resumed_from": to_recorded(resumed_from and os.path.abspath(resumed_from), work_dir),
        "mmpar_version": __version__,
    }
    path = os.path.join(work_dir, RUN_RECORD)
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(record, f, indent=2)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
    return path


def read_run_record(work_dir: str, logger: logging.Logger | None = None) -> dict | None:
    """Return ``work_dir/last_run.json`` as a dict; None when missing or unreadable (warned)."""
    path = os.path.join(work_dir, RUN_RECORD)
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as err:
        (logger or _logger).warning(f"auto-resume: ignoring unreadable {path}: {err}")
        return None
    if not isinstance(record, dict) or not isinstance(record.get("run_id"), str):
        (logger or _logger).warning(f"auto-resume: ignoring {path}: it names no run_id")
        return None
    if isinstance(record.get("resumed_from"), str):  # recorded relative to the work dir
        record["resumed_from"] = resolve_recorded(record["resumed_from"], work_dir)
    return record


def _run_name(run_id: str | None) -> str:
    return f"run {run_id}" if run_id else "checkpoints without a run id (mmcv or older mmpar)"


def _describe(groups: dict[str | None, list[FoundCheckpoint]]) -> str:
    """``run <id> (newest <file>, iter <n>); ...``, the most recently written run first."""
    parts = []
    for run_id, group in sorted(groups.items(), key=lambda kv: -max(c.mtime for c in kv[1])):
        best = max(group)
        parts.append(f"{_run_name(run_id)} (newest {best.path}, iter {best.iter})")
    return "; ".join(parts)


def _record_candidates(
    record: dict, groups: dict[str | None, list[FoundCheckpoint]]
) -> list[FoundCheckpoint]:
    """The checkpoints of the recorded run: its own, plus the id-less file it resumed from.

    A run resumed from a checkpoint without a run id (mmcv, older mmpar) and stopped before its
    first save has no checkpoint of its own yet; it continues from that file again.
    """
    own = groups.pop(record["run_id"], [])
    source = record.get("resumed_from")
    legacy = groups.get(None, [])
    if isinstance(source, str):
        real = os.path.realpath(source)
        for ckpt in legacy:
            if os.path.realpath(ckpt.path) == real:
                own.append(ckpt)
                legacy.remove(ckpt)
                break
        if not legacy:
            groups.pop(None, None)
    return own


def choose_resume_checkpoint(
    work_dir: str, logger: logging.Logger | None = None, suffix: str = "pth"
) -> str | None:
    """Return the checkpoint auto-resume continues from, or None to start fresh.

    - ``last_run.json`` names a run: the newest loadable checkpoint of that run (ranked by the
      iteration inside, then modification time), or None when it has none. Other runs'
      checkpoints are left alone (logged).
    - No record: with checkpoints of one run (or only id-less ones), the newest of them; with
      no checkpoint, None.

    Raises:
        MixedRunsError: No record and checkpoints of several runs: the message lists each run
            with its newest checkpoint and says how to choose.
    """
    log = logger or _logger
    groups: dict[str | None, list[FoundCheckpoint]] = {}
    for ckpt in scan_checkpoints(work_dir, suffix, logger):
        groups.setdefault(ckpt.run_id, []).append(ckpt)
    record = read_run_record(work_dir, logger)
    if record is not None:
        run_id = record["run_id"]
        own = _record_candidates(record, groups)
        others = f"; left alone: {_describe(groups)}; {RESUME_HINT}" if groups else ""
        if not own:
            log.info(
                f"auto-resume: no checkpoint of run {run_id} (the last run started in "
                f"{work_dir}, see {RUN_RECORD}), starting fresh{others}"
            )
            return None
        chosen = max(own)
        log.info(f"auto-resume: continuing run {run_id} from {chosen.path}{others}")
        return chosen.path
    if not groups:
        log.info(f"auto-resume: no checkpoint in {work_dir}, starting fresh")
        return None
    if len(groups) > 1:
        raise MixedRunsError(
            f"auto-resume: {work_dir} holds checkpoints of {len(groups)} runs and no "
            f"{RUN_RECORD} says which run to continue: {_describe(groups)}. Pass --resume-from "
            "FILE (resume_from in a config) to continue one of them, or use another --work-dir"
        )
    ((run_id, group),) = groups.items()
    chosen = max(group)
    log.info(f"auto-resume: continuing {_run_name(run_id)} from {chosen.path}")
    return chosen.path
