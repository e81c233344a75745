"""Fault injection for ``test_fsdp_checkpoints.py``: die inside a sharded checkpoint's save.

``MMPAR_TEST_FSDP_FAULT=dcp:<glob>`` SIGKILLs every rank once ``torch.distributed.checkpoint``
has written all shards of a sharded checkpoint whose final name matches ``<glob>``, before
rank 0 renames it into place (it prints ``FAULT <spec>`` to stderr first). Inert when unset.
"""

from __future__ import annotations

import fnmatch
import os
import re
import signal
import sys
from typing import Any

import torch.distributed.checkpoint as dcp

ENV = "MMPAR_TEST_FSDP_FAULT"
SPEC = os.environ.get(ENV, "")


def _install(pattern: str) -> None:
    real_save = dcp.save

    def save_then_die(state_dict: Any, *args: Any, checkpoint_id: Any = None, **kwargs: Any):
        result = real_save(state_dict, *args, checkpoint_id=checkpoint_id, **kwargs)
        match = re.fullmatch(r"\.(.+)\.tmp\.\d+", os.path.basename(str(checkpoint_id)))
        if match and fnmatch.fnmatch(match.group(1), pattern):
            print(f"FAULT {SPEC}", file=sys.stderr, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        return result

    dcp.save = save_then_die


if SPEC.startswith("dcp:"):
    _install(SPEC[len("dcp:") :])
elif SPEC:
    raise ValueError(f"{ENV}={SPEC!r}: expected dcp:<glob>")
