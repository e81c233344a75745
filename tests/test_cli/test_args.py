"""check_checkpoint_path: what the tools accept as a checkpoint to load, before any work."""

import pytest
import torch

from mmpar.cli import check_checkpoint_path
from mmpar.runner import CorruptCheckpointError


def test_a_checkpoint_file_passes(tmp_path):
    path = tmp_path / "epoch_1.pth"
    torch.save({"state_dict": {}}, path)
    check_checkpoint_path(str(path))


def test_a_missing_checkpoint_is_named_with_its_label(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"^resume_from checkpoint not found: .*nope.pth"):
        check_checkpoint_path(str(tmp_path / "nope.pth"), "resume_from checkpoint")


def test_a_directory_must_be_a_complete_sharded_checkpoint(tmp_path):
    # A work dir given by mistake, or the shards of a save that never got its header.
    (tmp_path / "epoch_1.pth").mkdir()
    (tmp_path / "epoch_1.pth" / ".metadata").write_bytes(b"")
    with pytest.raises(CorruptCheckpointError, match="not a complete sharded checkpoint"):
        check_checkpoint_path(str(tmp_path / "epoch_1.pth"))
    with pytest.raises(CorruptCheckpointError, match="not a complete sharded checkpoint"):
        check_checkpoint_path(str(tmp_path))
