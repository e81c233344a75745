"""Bad input to the tools: non-zero exit and one clear line, no traceback; print_config output.

Bad configs, checkpoints, data, launchers and work dirs given to tools/train.py and
tools/test.py are covered by tests/reliability/test_bad_input.py.
"""

import pytest

from mmpar import Config

pytestmark = pytest.mark.slow


def _in_process_error(e2e, capsys, tool, *argv):
    """Run ``tools/<tool>.py`` main in this process; return its stderr (it must exit with 2)."""
    with pytest.raises(SystemExit) as info:
        e2e.load_tool(tool).main([str(a) for a in argv])
    assert info.value.code == 2
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # earlier lines: the run's log, if it got that far
    assert last.startswith("error: ") and "Traceback" not in err, err
    return last


def test_test_tool_rejects_missing_checkpoint_and_bad_out(e2e, capsys, tmp_path):
    config = e2e.REPO / e2e.DIGITS_CONFIG
    assert "x.pth" in _in_process_error(e2e, capsys, "test", config, tmp_path / "x.pth")
    ckpt = tmp_path / "c.pth"
    ckpt.write_bytes(b"")
    err = _in_process_error(e2e, capsys, "test", config, ckpt, "--out", tmp_path / "r.txt")
    assert "r.txt" in err and ".json" in err
    err = _in_process_error(e2e, capsys, "test", config, ckpt, "--workers", "0")
    assert "--workers" in err
    # A work dir where the checkpoint belongs: its latest.pth is named, sharded ones are not.
    (tmp_path / "latest.pth").symlink_to("c.pth")
    err = _in_process_error(e2e, capsys, "test", config, tmp_path)
    assert err.endswith(
        f"is a directory, not a checkpoint file; to load the newest checkpoint "
        f"of this work dir, pass {tmp_path / 'latest.pth'}"
    )
    assert "sharded" not in err


def test_infer_tool_rejects_missing_image(e2e, capsys, tmp_path):
    ckpt = tmp_path / "c.pth"
    ckpt.write_bytes(b"")
    err = _in_process_error(
        e2e, capsys, "infer", e2e.REPO / e2e.DIGITS_CONFIG, ckpt, tmp_path / "missing.png"
    )
    assert "missing.png" in err
    (tmp_path / "empty").mkdir()
    err = _in_process_error(
        e2e, capsys, "infer", e2e.REPO / e2e.DIGITS_CONFIG, ckpt, tmp_path / "empty"
    )
    assert "empty" in err


def test_print_config_prints_a_loadable_merged_config(e2e, capsys, tmp_path):
    config = e2e.REPO / e2e.DIGITS_CONFIG
    argv = [str(config), "--cfg-options", "runner.max_epochs=7", "optimizer.lr=0.123"]
    assert e2e.load_tool("print_config").main(argv) == 0
    merged = tmp_path / "merged.py"
    merged.write_text(capsys.readouterr().out)
    cfg = Config.fromfile(str(merged))
    original = Config.fromfile(str(config))
    assert cfg.runner.max_epochs == 7
    assert cfg.optimizer.lr == 0.123
    assert cfg.model.to_dict() == original.model.to_dict()
    assert cfg.data.train.type == original.data.train.type
    _in_process_error(e2e, capsys, "print_config", tmp_path / "missing.py")
