"""check_checkpoint_path: what the tools accept as a checkpoint to load, before any work."""

import pytest
import torch

from mmpar.cli import UsageError, check_checkpoint_path
from mmpar.runner import CorruptCheckpointError


def test_a_checkpoint_file_passes(tmp_path):
    path = tmp_path / "epoch_1.pth"
    torch.save({"state_dict": {}}, path)
    check_checkpoint_path(str(path))


def test_a_missing_checkpoint_is_named_with_its_label(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"^resume_from checkpoint not found: .*nope.pth"):
        check_checkpoint_path(str(tmp_path / "nope.pth"), "resume_from checkpoint")


def test_a_directory_must_be_a_complete_sharded_checkpoint(tmp_path):
    # The shards of a save that never got its header.
    (tmp_path / "epoch_1.pth").mkdir()
    (tmp_path / "epoch_1.pth" / ".metadata").write_bytes(b"")
    with pytest.raises(CorruptCheckpointError, match="not a complete sharded checkpoint"):
        check_checkpoint_path(str(tmp_path / "epoch_1.pth"))


def test_a_work_dir_given_as_checkpoint_names_its_latest_pth(tmp_path):
    # No talk of sharded checkpoints for a directory that holds none of their files.
    torch.save({"state_dict": {}}, tmp_path / "epoch_2.pth")
    with pytest.raises(
        UsageError, match=r"is a directory, not a checkpoint file; pass one of its "
    ):
        check_checkpoint_path(str(tmp_path), "resume_from checkpoint")
    (tmp_path / "latest.pth").symlink_to("epoch_2.pth")
    with pytest.raises(UsageError) as err:
        check_checkpoint_path(str(tmp_path))
    assert str(err.value) == (
        f'checkpoint "{tmp_path}" is a directory, not a checkpoint file; to load the newest '
        f"checkpoint of this work dir, pass {tmp_path / 'latest.pth'}"
    )
    assert "sharded" not in str(err.value)
