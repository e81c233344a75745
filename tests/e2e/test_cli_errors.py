"""Bad input to the tools: non-zero exit and one clear line, no traceback; print_config output."""

import pytest
from conftest import DIGITS_CONFIG, REPO, run_tool, tool_env

from mmpar import Config

pytestmark = pytest.mark.slow

DIST_VARS = ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'MASTER_ADDR', 'MASTER_PORT', 'LOCAL_WORLD_SIZE')


def _assert_user_error(proc, *fragments):
    assert proc.returncode == 2, (proc.returncode, proc.stderr[-3000:])
    assert 'Traceback' not in proc.stderr, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith('error: '), proc.stderr
    for fragment in fragments:
        assert fragment in last, (fragment, last)


def test_missing_config_is_named(tmp_path):
    missing = tmp_path / 'nope.py'
    _assert_user_error(run_tool('tools/train.py', missing), str(missing))


def test_launcher_pytorch_outside_torchrun_names_the_missing_variables(tmp_path):
    env = {k: v for k, v in tool_env().items() if k not in DIST_VARS}
    proc = run_tool('tools/train.py', DIGITS_CONFIG, '--launcher', 'pytorch', '--work-dir',
                    tmp_path, env=env)
    _assert_user_error(proc, '--launcher pytorch', 'RANK')
    assert 'torchrun' in proc.stderr


def test_unknown_model_type_names_the_type(tmp_path):
    proc = run_tool('tools/train.py', DIGITS_CONFIG, '--work-dir', tmp_path, '--cfg-options',
                    'model.type=NoSuchClassifier')
    _assert_user_error(proc, 'NoSuchClassifier')


def test_test_tool_rejects_missing_checkpoint_and_bad_out(tmp_path):
    _assert_user_error(run_tool('tools/test.py', DIGITS_CONFIG, tmp_path / 'x.pth'), 'x.pth')
    ckpt = tmp_path / 'c.pth'
    ckpt.write_bytes(b'')
    proc = run_tool('tools/test.py', DIGITS_CONFIG, ckpt, '--out', tmp_path / 'r.txt')
    _assert_user_error(proc, 'r.txt', '.json')


def test_infer_tool_rejects_missing_image(tmp_path):
    ckpt = tmp_path / 'c.pth'
    ckpt.write_bytes(b'')
    proc = run_tool('tools/infer.py', DIGITS_CONFIG, ckpt, tmp_path / 'missing.png')
    _assert_user_error(proc, 'missing.png')


def test_print_config_prints_a_loadable_merged_config(tmp_path):
    proc = run_tool('tools/print_config.py', DIGITS_CONFIG, '--cfg-options',
                    'runner.max_epochs=7', 'optimizer.lr=0.123', check=True)
    merged = tmp_path / 'merged.py'
    merged.write_text(proc.stdout)
    cfg = Config.fromfile(str(merged))
    original = Config.fromfile(str(REPO / DIGITS_CONFIG))
    assert cfg.runner.max_epochs == 7
    assert cfg.optimizer.lr == 0.123
    assert cfg.model.to_dict() == original.model.to_dict()
    assert cfg.data.train.type == original.data.train.type

