"""Run the examples of one documentation page, in order, in a scratch copy of the checkout.

Each page gets its own copy of the repository (without ``mmpar/``, which comes from the checkout
under test through ``PYTHONPATH``, and without ``.git``, ``.venv``, ``work_dirs/`` and ``data/``),
so what one page's examples write cannot help or break another page. The environment is the
activated virtualenv the docs tell users to use: ``python``, ``pip`` and ``torchrun`` are the
test interpreter's.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import tomllib
from helpers import free_port
from markdown_blocks import REPO, Block, python_source, with_one_epoch

BLOCK_TIMEOUT = 300  # seconds; the slowest example (a 2-process training) takes ~30 s
NOT_COPIED = {".git", ".venv", "mmpar", "work_dirs", "data", "build"}
# Where examples may write in the checkout: git ignores these.
WRITABLE = ("work_dirs/", "data/")
# Blocks that would start the test suite from inside it; they must be marked not run.
RECURSIVE = ("scripts/test.sh", ".ci/run", "pytest")
# gloo's known abort while a process exits after its work is done (see test_dist_faults.py):
# a block that failed with it is run once more, and the test warns.
GLOO_EXIT_ABORT = "terminate called without an active exception"


@dataclass
class BlockOutcome:
    """What running one block gave.

    Attributes:
        block: The block.
        script: What was run (the block's code, after any one-epoch rewrite).
        returncode: The process's exit code (None: it timed out).
        output: Its stdout and stderr, interleaved.
        seconds: Wall time.
    """

    block: Block
    script: str
    returncode: int | None
    output: str
    seconds: float


@dataclass
class PageOutcome:
    """The outcomes of a page's blocks, up to the first failure, and stray files it left.

    Attributes:
        page: The page.
        blocks: One outcome per block that ran.
        stray_files: Files the examples wrote into the checkout outside ``work_dirs/`` and
            ``data/`` (where a user's clone would get untracked files).
        reruns: Blocks run a second time after gloo's exit abort (``page:line``).
    """

    page: str
    blocks: list[BlockOutcome] = field(default_factory=list)
    stray_files: list[str] = field(default_factory=list)
    reruns: list[str] = field(default_factory=list)

    @property
    def failure(self) -> BlockOutcome | None:
        """The block that failed (the page stops there), or None."""
        return next((b for b in self.blocks if b.returncode != 0), None)


def make_checkout(dest: Path) -> Path:
    """Copy the repository (minus :data:`NOT_COPIED`) to ``dest``; link its virtualenv."""

    def ignore(directory: str, names: list[str]) -> set[str]:
        top = Path(directory) == REPO
        skipped = {n for n in names if n in {"__pycache__", ".ruff_cache", ".pytest_cache"}}
        skipped |= {n for n in names if n.endswith(".egg-info")}
        return skipped | (NOT_COPIED & set(names) if top else set())

    shutil.copytree(REPO, dest, ignore=ignore, symlinks=True)
    venv = Path(sys.prefix)
    if venv != Path(sys.base_prefix):  # scripts/bootstrap.sh finds the installed venv
        (dest / ".venv").symlink_to(venv, target_is_directory=True)
    (dest / "work_dirs").mkdir(exist_ok=True)
    return dest


def console_scripts(bin_dir: Path) -> Path:
    """Write the checkout's console scripts (``mmpar-train``...) into ``bin_dir``.

    As ``mmpar/`` comes from the checkout under test rather than from the virtualenv's install,
    so do its commands: the venv's may be missing or stale (installed from another
    pyproject.toml). Each runs the test interpreter, as pip's would.
    """
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    bin_dir.mkdir(parents=True, exist_ok=True)
    for name, target in scripts.items():
        module, function = target.split(":")
        path = bin_dir / name
        path.write_text(
            f"#!{sys.executable}\nimport sys\nfrom {module} import {function}\n"
            f"sys.exit({function}())\n"
        )
        path.chmod(0o755)
    return bin_dir


def page_env(tmp: Path) -> dict[str, str]:
    """The environment of a page's examples: the test's virtualenv activated, quiet, local."""
    venv_bin = str(Path(sys.executable).parent)
    scripts = str(console_scripts(tmp / "bin"))
    port = str(free_port())
    env = dict(os.environ)
    env.update(
        PATH=os.pathsep.join([scripts, venv_bin, env.get("PATH", "")]),
        VIRTUAL_ENV=sys.prefix,
        PYTHONPATH=str(REPO),  # the checkout under test, also from a git worktree
        TMPDIR=str(tmp),
        MPLBACKEND="Agg",
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        OMP_NUM_THREADS="1",  # two pages run at a time on the CI's two cores
        MKL_NUM_THREADS="1",
        MASTER_PORT=port,  # tools/dist_*.sh
        PORT=port,
        PET_MASTER_PORT=port,  # torchrun's --master-port default
    )
    env.pop("PYTHONHOME", None)
    return env


def run_page(page: str, blocks: list[Block], scratch: Path) -> PageOutcome:
    """Run a page's runnable blocks in order in a fresh checkout copy under ``scratch``.

    Stops at the first block that fails: later blocks of a page may build on it.
    """
    checkout = make_checkout(scratch / "checkout")
    tmp = scratch / "tmp"
    tmp.mkdir()
    before = _files(checkout)
    env = page_env(tmp)
    outcome = PageOutcome(page)
    files_before: dict[int, set[str]] = {}  # by block index: the checkout's files before it ran
    for index, block in enumerate(blocks):
        if not block.runs:
            continue
        files_before[index] = _files(checkout)
        if block.continues:
            _undo_work_dirs(checkout, files_before[_chain_start(blocks, index)])
        recursive = [name for name in RECURSIVE if name in block.code]
        if recursive:
            why = f"runs {recursive[0]}, the suite this test is in"
            outcome.blocks.append(_refused(block, why))
            break
        result = run_block(block, blocks, checkout, env)
        if result.returncode != 0 and GLOO_EXIT_ABORT in result.output:
            outcome.reruns.append(block.where)
            result = run_block(block, blocks, checkout, env)
        outcome.blocks.append(result)
        if result.returncode != 0:
            break
    outcome.stray_files = sorted(f for f in _files(checkout) - before if not f.startswith(WRITABLE))
    return outcome


def _chain_start(blocks: list[Block], index: int) -> int:
    """Index of the first python block of the chain the continuation at ``index`` replays."""
    while blocks[index].continues:
        index = max(i for i in range(index) if blocks[i].lang == "python")
    return index


def _undo_work_dirs(checkout: Path, files_before: set[str]) -> None:
    """Remove what was written under ``work_dirs/`` since ``files_before`` was taken.

    A continuation replays the blocks it continues in a new interpreter; a reader runs it in
    the same session, where those blocks' runs happened once. Replayed over their own
    checkpoints, their runs would be refused as a second run in the same work dir.
    """
    for rel in sorted(_files(checkout) - files_before):
        if rel.startswith("work_dirs/"):
            (checkout / rel).unlink()


def run_block(block: Block, blocks: list[Block], cwd: Path, env: dict[str, str]) -> BlockOutcome:
    """Run one block: bash with ``-e -o pipefail``, python in a fresh interpreter."""
    if block.lang == "python":
        script = python_source(blocks, block)
        command = [sys.executable, "-c", script]
    else:
        script = with_one_epoch(block.code, block.where) if block.one_epoch else block.code
        command = ["bash", "-e", "-o", "pipefail", "-c", script]
    start = time.perf_counter()
    # A session of its own, so a timeout also ends what the block started (torchrun workers).
    proc = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = proc.communicate(timeout=BLOCK_TIMEOUT)
        returncode = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
        returncode = None
        output += f"\n[docs test] killed after {BLOCK_TIMEOUT} s"
    return BlockOutcome(block, script, returncode, output, time.perf_counter() - start)


def _refused(block: Block, why: str) -> BlockOutcome:
    message = f"[docs test] not run: this block {why}; mark it '<!-- Not run in CI: ... -->'"
    return BlockOutcome(block, block.code, -1, message, 0.0)


def _files(root: Path) -> set[str]:
    """Files under ``root`` (symlinked folders such as ``.venv`` not entered), relative."""
    found = set()
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d != "__pycache__"]
        found.update(str(Path(directory, name).relative_to(root)) for name in names)
    return found
