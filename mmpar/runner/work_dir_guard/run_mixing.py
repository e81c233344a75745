"""A new run never mixes its checkpoints with another run's in one work dir.

A training that does not resume (no ``runner.resume(...)`` before ``runner.run``: no
``--resume-from``, no ``--auto-resume``) is a new run (a new ``run_id``, see
:mod:`mmpar.runner.checkpointing.run_identity`). Started in a work dir that already holds
checkpoints, it would write its own ``epoch_N.pth``, ``latest.pth`` and ``best_*.pth`` beside them:
``latest.pth`` would point to one run, ``best_*`` to another. The run stops instead, before
writing any checkpoint, with one line that says what to do, in the options of the program that
runs (:mod:`.program_options`): ``--work-dir DIR`` (a folder of its own), or continue the run
there (``--auto-resume``, else ``--resume-from <its latest checkpoint>``). It does not pick a
new folder itself, so that every path the docs and the user's next command name
(``work_dirs/<config>/latest.pth``) stays where they expect it.
"""

from __future__ import annotations

import difflib
import os
import os.path as osp

from mmpar.utils.usage_error import UsageError

from ..checkpointing.run_identity import FoundCheckpoint, scan_checkpoints
from ..checkpointing.safe_load import CheckpointError, load_checkpoint_file
from .program_options import resume_action, work_dir_hint

# Lines of the dumped config that say where or how a run starts, not what it trains.
_PLACE_KEYS = ("work_dir", "auto_resume", "resume_from", "gpu_ids")


class WorkDirHasOtherRunError(UsageError):
    """A new run was started in a work dir that holds another run's checkpoints."""


def _what_it_trains(config_text: str) -> list[str]:
    return [line for line in config_text.splitlines() if not line.startswith(_PLACE_KEYS)]


def _saved_config(path: str) -> str | None:
    """The config text stored in a checkpoint file's ``meta`` (None if unreadable)."""
    if osp.isdir(path):  # sharded: its header is not worth reading for a message
        return None
    try:
        ckpt = load_checkpoint_file(path, "cpu", weights_only=True, mmap=True)
    except CheckpointError:
        return None
    text = ((ckpt or {}).get("meta") or {}).get("config") if isinstance(ckpt, dict) else None
    return text if isinstance(text, str) else None


def _first_difference(old: str, new: str) -> str | None:
    """The first changed line of ``new`` against ``old`` (places ignored); None if equal."""
    old_lines, new_lines = _what_it_trains(old), _what_it_trains(new)
    if old_lines == new_lines:
        return None
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, _, _, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "insert") and j1 < j2:
            return new_lines[j1].strip()
        if tag == "delete":
            return "a key removed"
    return "the config"


def check_new_run_work_dir(work_dir: str, config_text: str | None, resuming: bool) -> None:
    """Refuse a new run in a work dir holding another run's checkpoints (rank 0, under the lock).

    Args:
        work_dir: The run's work dir.
        config_text: The new run's config (``cfg.pretty_text``, as stored in ``meta``); None
            when unknown (the message then does not compare configs).
        resuming: ``--resume-from`` or ``--auto-resume``: the run continues one that is
            there (or starts the recorded run's first checkpoint), so nothing mixes.

    Raises:
        WorkDirHasOtherRunError: The work dir holds ``*.pth`` checkpoints; the message names
            the newest, says whether it was trained with the same config, and what to pass.
    """
    if resuming or not osp.isdir(work_dir):
        return
    found: list[FoundCheckpoint] = scan_checkpoints(work_dir)
    if not found:
        return
    # The newest by iteration; of equal ones a regular checkpoint rather than a best_* copy.
    newest = max(found, key=lambda c: (c.iter, not osp.basename(c.path).startswith("best_")))
    name = osp.basename(newest.path)
    run = f"run {newest.run_id}" if newest.run_id else "a run"
    runs = {c.run_id for c in found}
    if len(runs) > 1:
        run = f"{len(runs)} runs, the newest {run}"
    saved = None if config_text is None else _saved_config(newest.path)
    change = None if saved is None or config_text is None else _first_difference(saved, config_text)
    latest = osp.join(work_dir, "latest.pth")
    resume = resume_action(latest if osp.lexists(latest) else newest.path)
    where = f'work_dir "{work_dir}" holds {len(found)} checkpoint(s) of {run} (newest {name}'
    where += f", iteration {newest.iter})" if newest.iter >= 0 else ")"
    if saved is not None and change is None:
        raise WorkDirHasOtherRunError(
            f"{where}, trained with this same config. A new run would mix its checkpoints "
            f"with them: {resume} to continue that run, or {work_dir_hint('DIR')} to train "
            "again in a folder of its own. Nothing was written"
        )
    differs = f", trained with a different config (this one has: {change})" if change else ""
    raise WorkDirHasOtherRunError(
        f"{where}{differs}. A new run would mix its checkpoints with them: "
        f"{work_dir_hint(_suggest(work_dir))} to give this run a folder of its own, or "
        f"{resume} to continue that run. Nothing was written"
    )


def _suggest(work_dir: str) -> str:
    """``<work_dir>_2`` (or the first free ``_<n>``), a folder name to suggest."""
    base = work_dir.rstrip(os.sep) or work_dir
    n = 2
    while osp.exists(f"{base}_{n}"):
        n += 1
    return f"{base}_{n}"
