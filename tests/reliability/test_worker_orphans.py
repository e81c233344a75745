"""DataLoader workers of a SIGKILLed training process end with it instead of lingering."""

import os
import select
import signal
import subprocess
import sys
import textwrap

import pytest

# Workers 1.. block forever inside __getitem__ (a slow sample), where torch's own check for a
# dead parent never runs; the parent reports the workers' pids, then is killed.
CHILD = textwrap.dedent(
    """
    import os, threading
    from torch.utils.data import Dataset
    from mmpar.datasets import build_dataloader

    class Blocking(Dataset):
        def __len__(self):
            return 64

        def __getitem__(self, i):
            if i >= 2:
                threading.Event().wait()  # a sample that never finishes loading
            return os.getpid()

    loader = build_dataloader(Blocking(), samples_per_gpu=1, workers_per_gpu=2, dist=False,
                              shuffle=False, seed=0)
    it = iter(loader)
    pids = {int(next(it)[0]) for _ in range(2)}  # collate stacks the ints into a tensor
    print(*sorted(pids), flush=True)
    next(it)  # blocks: the workers are stuck in __getitem__
    """
)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="needs Linux pidfd_open")
def test_workers_die_with_a_killed_parent():
    env = dict(os.environ, OMP_NUM_THREADS="1")
    proc = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        pids = [int(p) for p in proc.stdout.readline().split()]
        assert len(pids) == 2 and proc.pid not in pids
        fds = [os.pidfd_open(pid) for pid in pids]  # taken before the kill: no pid reuse race
        proc.send_signal(signal.SIGKILL)
        assert proc.wait(timeout=60) == -signal.SIGKILL
        # A pidfd turns readable when its process exits: wait for each, no polling.
        alive = [pid for pid, fd in zip(pids, fds) if not select.select([fd], [], [], 30)[0]]
        for fd in fds:
            os.close(fd)
        assert not alive, f"DataLoader workers {alive} outlived their killed parent"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
