"""A minimal ``srun`` for tests: runs ``--ntasks`` copies of a command on this machine.

It understands what ``tools/slurm_*.sh`` pass (``-p``, ``--job-name``, ``--gres``,
``--ntasks``, ``--ntasks-per-node``, ``--cpus-per-task``, ``--kill-on-bad-exit`` and any other
``--name[=value]`` option), records them as JSON in ``$FAKE_SRUN_RECORD``, and gives each task
the variables a real job step sets: ``SLURM_PROCID`` (0..ntasks-1), ``SLURM_LOCALID`` (its
index on its node), ``SLURM_NODEID``, ``SLURM_NTASKS``, ``SLURM_NNODES``, ``SLURM_NODELIST``
(``fakenode[0-<nodes-1>]``, which only a (fake) ``scontrol show hostnames`` resolves),
``SLURM_JOB_NAME``, ``SLURM_JOB_ID``, ``SLURM_JOB_PARTITION``, ``SLURM_CPUS_PER_TASK``.
Tasks inherit the rest of the environment, as with srun's default ``--export=ALL``.

With ``--kill-on-bad-exit=1`` the first task that fails ends the others (SIGKILL). The exit
code is the highest of the tasks' (128 + N for a task ended by signal N), as srun reports.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

VALUE_OPTIONS = {"-p": "partition", "-n": "ntasks", "-J": "job-name"}  # value in the next arg
KNOWN_OPTIONS = {
    "partition",
    "job-name",
    "gres",
    "ntasks",
    "ntasks-per-node",
    "cpus-per-task",
    "kill-on-bad-exit",
}


def parse(argv: list[str]) -> tuple[dict, list[str], list[str]]:
    """Split srun's argv into (known options, other options, the command)."""
    options: dict = {}
    extra: list[str] = []
    i = 0
    while i < len(argv) and argv[i].startswith("-"):
        arg = argv[i]
        if arg in VALUE_OPTIONS:
            options[VALUE_OPTIONS[arg]] = argv[i + 1]
            i += 2
            continue
        name, _, value = arg[2:].partition("=")
        if name in KNOWN_OPTIONS:
            options[name] = value
        else:
            extra.append(arg)
        i += 1
    return options, extra, argv[i:]


def main() -> int:
    options, extra, command = parse(sys.argv[1:])
    if not command:
        print("srun: fatal: no command to run", file=sys.stderr)
        return 1
    record = os.environ.get("FAKE_SRUN_RECORD")
    if record:
        with open(record, "w", encoding="utf-8") as f:
            json.dump({"options": options, "extra": extra, "command": command}, f)
    ntasks = int(options.get("ntasks", 1))
    per_node = int(options.get("ntasks-per-node") or ntasks)
    nodes = -(-ntasks // per_node)
    common = {
        "SLURM_NTASKS": str(ntasks),
        "SLURM_NPROCS": str(ntasks),
        "SLURM_NNODES": str(nodes),
        "SLURM_NODELIST": f"fakenode[0-{nodes - 1}]" if nodes > 1 else "fakenode0",
        "SLURM_JOB_NAME": options.get("job-name", command[0]),
        "SLURM_JOB_ID": "4242",
        "SLURM_JOB_PARTITION": options.get("partition", "fake"),
        "SLURM_CPUS_PER_TASK": options.get("cpus-per-task", "1"),
    }
    tasks = []
    for rank in range(ntasks):
        env = dict(os.environ, **common)
        env.update(
            SLURM_PROCID=str(rank),
            SLURM_LOCALID=str(rank % per_node),
            SLURM_NODEID=str(rank // per_node),
        )
        tasks.append(subprocess.Popen(command, env=env))
    kill_on_bad_exit = options.get("kill-on-bad-exit") == "1"
    running = {task.pid: task for task in tasks}
    codes = []
    while running:
        pid, status = os.wait()  # whichever task ends next
        task = running.pop(pid, None)
        if task is None:
            continue
        code = task.returncode = os.waitstatus_to_exitcode(status)
        codes.append(128 - code if code < 0 else code)
        if code != 0 and kill_on_bad_exit:
            for other in running.values():
                other.kill()
    return max(codes)


if __name__ == "__main__":
    sys.exit(main())
