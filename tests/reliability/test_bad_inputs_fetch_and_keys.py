"""Bad input that used to end in a traceback: an unreachable checkpoint URL, a runner without
its limit, a config without the sections training reads.

Each exits with code 2 and one ``error:`` line naming the URL or the key, and leaves the work
dir as it was (an earlier run's files untouched; a work dir that did not exist is not created).
Through ``tools/train.py`` as a real process, as a user meets them; the checks behind them are
also tested in-process (fast) for every key.
"""

from __future__ import annotations

import hashlib
import http.server
import os
import re
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import pytest
from helpers import free_port

from mmpar import Config
from mmpar.apis.train_config import check_train_config, runner_config
from mmpar.utils.config import ConfigMissingKeyError

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "configs" / "digits_lenet.py"
FAST = ["data.workers_per_gpu=0", "runner.max_epochs=1"]
DIST_VARS = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "LOCAL_WORLD_SIZE")


def _train(tmp_path: Path, *argv) -> subprocess.CompletedProcess:
    """``python tools/train.py ...`` from the repository root; torch.hub's cache in tmp_path."""
    env = {k: v for k, v in os.environ.items() if k not in DIST_VARS}
    env.update(OMP_NUM_THREADS="1", NO_COLOR="1", TORCH_HOME=str(tmp_path / "torch_home"))
    return subprocess.run(
        [sys.executable, "tools/train.py", *map(str, argv)],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _error_line(proc: subprocess.CompletedProcess) -> str:
    """The one ``error:`` line of a run that exited with code 2 (no traceback)."""
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1, proc.stderr[-3000:]
    assert proc.stderr.rstrip().endswith(lines[0])  # nothing after it
    return lines[0]


def _snapshot(root: Path) -> dict:
    """Every entry under ``root`` with its kind, size, mtime and content hash."""
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else None
        out[str(path.relative_to(root))] = (path.is_dir(), st.st_size, st.st_mtime_ns, digest)
    return out


@pytest.fixture
def work_dir(tmp_path):
    """An earlier run's work dir; the test fails if a failed run changed it."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "20240101_000000.log").write_text("an earlier run\n")
    (work / "epoch_1.pth").write_bytes(b"earlier weights")
    before = _snapshot(work)
    yield work
    assert _snapshot(work) == before, "a failed run changed the work dir"


@pytest.fixture
def not_found_url():
    """The URL of a checkpoint that a local HTTP server answers with 404."""

    class NotFound(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            self.send_error(404, "Not Found")

        def log_message(self, *args):  # keep the test's output clean
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotFound)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/models/missing.pth"
    server.shutdown()
    thread.join()
    server.server_close()


# ------------------------------------------------------------- a checkpoint URL that fails
@pytest.mark.slow
def test_connection_refused_names_the_url(tmp_path, work_dir):
    url = f"http://127.0.0.1:{free_port()}/ckpt/epoch_1.pth"
    proc = _train(
        tmp_path, DIGITS, "--work-dir", work_dir, "--load-from", url, "--cfg-options", *FAST
    )
    line = _error_line(proc)
    assert line.startswith(f'error: CheckpointDownloadError: cannot fetch checkpoint "{url}": ')
    assert "refused" in line.lower(), line


@pytest.mark.slow
def test_unknown_host_in_the_config_names_the_url(tmp_path):
    # .invalid never resolves (RFC 2606): no traffic leaves the machine. A work dir that did
    # not exist is not created by the failed run.
    url = "http://nonexistent.invalid/x.pth"
    work = tmp_path / "new_work"
    proc = _train(tmp_path, DIGITS, "--work-dir", work, "--cfg-options", f"load_from={url}", *FAST)
    assert _error_line(proc).startswith(
        f'error: CheckpointDownloadError: cannot fetch checkpoint "{url}": '
    )
    assert not work.exists()


@pytest.mark.slow
def test_http_404_names_the_url_and_the_status(tmp_path, work_dir, not_found_url):
    proc = _train(
        tmp_path,
        DIGITS,
        "--work-dir",
        work_dir,
        "--load-from",
        not_found_url,
        "--cfg-options",
        *FAST,
    )
    assert _error_line(proc) == (
        f'error: CheckpointDownloadError: cannot fetch checkpoint "{not_found_url}": '
        "HTTP 404 Not Found"
    )
    assert not (tmp_path / "torch_home" / "hub" / "checkpoints" / "missing.pth").exists()


def test_download_error_is_the_built_in_mmcv_raised(not_found_url, tmp_path):
    """In-process: still a ``urllib.error.URLError``, as the failed download raised before."""
    import urllib.error

    from mmpar.runner import CheckpointDownloadError
    from mmpar.runner.checkpointing.safe_load import load_url_checkpoint

    with pytest.raises(urllib.error.URLError, match="HTTP 404") as info:
        load_url_checkpoint(not_found_url, str(tmp_path), None, True)
    assert isinstance(info.value, CheckpointDownloadError) and info.value.url == not_found_url


# ------------------------------------------------------------------ runner without a limit
@pytest.mark.slow
@pytest.mark.parametrize(
    ("options", "expected"),
    [
        (["runner.max_epochs=None"], "has no runner.max_epochs; training needs it"),
        (["runner.type=IterBasedRunner"], "has no runner.max_iters; training needs it"),
    ],
)
def test_runner_without_its_limit(tmp_path, work_dir, options, expected):
    proc = _train(
        tmp_path,
        DIGITS,
        "--work-dir",
        work_dir,
        "--cfg-options",
        "data.workers_per_gpu=0",
        *options,
    )
    line = _error_line(proc)
    assert line.startswith(f"error: ConfigMissingKeyError: the config {DIGITS} ")
    assert expected in line, line


def _digits(**changes) -> Config:
    cfg = Config.fromfile(str(DIGITS))
    for key, value in changes.items():
        cfg[key] = value
    return cfg


def test_limits_by_runner_type():
    check_train_config(_digits())  # the shipped config has everything
    cases = [
        (dict(type="EpochBasedRunner"), "runner.max_epochs"),
        (dict(type="EpochBasedRunner", max_iters=10), "(max_iters is for an IterBasedRunner)"),
        (dict(type="IterBasedRunner", max_epochs=2), "(max_epochs is for an EpochBasedRunner)"),
        (dict(type="IterBasedRunner", max_iters=None), "runner.max_iters"),
    ]
    for runner, fragment in cases:
        with pytest.raises(ConfigMissingKeyError, match=re.escape(fragment)):
            check_train_config(_digits(runner=runner))
    # The legacy total_epochs stands in for a missing max_epochs (with a warning), not for
    # a missing max_iters.
    with pytest.warns(UserWarning, match="using total_epochs=3"):
        assert runner_config(_digits(runner=dict(type="EpochBasedRunner"), total_epochs=3)) == {
            "type": "EpochBasedRunner",
            "max_epochs": 3,
        }
    with pytest.raises(ConfigMissingKeyError, match="runner.max_iters"):
        check_train_config(_digits(runner=dict(type="IterBasedRunner"), total_epochs=3))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a runner of an unknown type is the builder's business
        check_train_config(_digits(runner=dict(type="MyRunner")))


# ------------------------------------------------------------ config without its sections
@pytest.mark.slow
def test_config_without_sections_names_every_missing_key(tmp_path, work_dir):
    config = tmp_path / "partial.py"
    cfg = _digits()
    for key in ("model", "optimizer", "lr_config"):
        del cfg[key]
    cfg.dump(str(config))
    proc = _train(tmp_path, config, "--work-dir", work_dir)
    line = _error_line(proc)
    assert line.startswith(
        f"error: ConfigMissingKeyError: the config {config} has no model, optimizer, lr_config; "
        "training needs them, e.g. model = dict(type='ImageClassifier'"
    ), line


REQUIRED = [
    "model",
    "data",
    "data.train",
    "data.samples_per_gpu",
    "data.workers_per_gpu",
    "optimizer",
    "lr_config",
    "workflow",
    "runner",
]


@pytest.mark.parametrize("key", REQUIRED)
def test_each_key_training_reads_is_checked(key):
    cfg = _digits()
    *parents, last = key.split(".")
    node = cfg
    for part in parents:
        node = node[part]
    del node[last]
    with pytest.raises(ConfigMissingKeyError, match=rf"has no {key}; training needs it, e\.g\. "):
        check_train_config(cfg)
    with pytest.raises(AttributeError):  # what mmcv's ``cfg.<key>`` raised
        check_train_config(cfg)


def test_a_misspelt_key_gets_a_did_you_mean():
    cfg = _digits()
    data = cfg.data
    data["sample_per_gpu"] = data.pop("samples_per_gpu")
    cfg.pop("workflow")
    cfg["workfow"] = [("train", 1)]
    with pytest.raises(ConfigMissingKeyError) as raised:
        check_train_config(cfg)
    assert (
        "has no data.samples_per_gpu (did you mean data.sample_per_gpu?), "
        "workflow (did you mean workfow?); training needs them, e.g. " in str(raised.value)
    )


def test_conditional_keys_and_none():
    cfg = _digits()
    del cfg.data["val"]
    check_train_config(cfg, validate=False)  # no evaluation: data.val is not read
    with pytest.raises(ConfigMissingKeyError, match="has no data.val"):
        check_train_config(cfg, validate=True)
    cfg.workflow = [("train", 1), ("val", 1)]  # the val phase reads it too
    with pytest.raises(ConfigMissingKeyError, match="has no data.val"):
        check_train_config(cfg, validate=False)
    check_train_config(_digits(lr_config=None))  # None: a constant learning rate
    with pytest.raises(ConfigMissingKeyError, match="has no model"):
        check_train_config(_digits(model=None))


def test_the_api_checks_before_building(tmp_path):
    from mmpar.apis import build_train_runner

    cfg = _digits(work_dir=str(tmp_path / "w"))
    del cfg["optimizer"]
    with pytest.raises(ConfigMissingKeyError, match="has no optimizer"):
        build_train_runner(None, [], cfg)  # fails before touching the model or the data
    assert not (tmp_path / "w").exists()
