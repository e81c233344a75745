"""Suite-wide pytest configuration."""

import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

# The shared test helpers (tests/helpers/) import as ``helpers``: --import-mode=importlib puts
# no test directory on sys.path by itself.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``cuda`` on machines without a CUDA device."""
    if torch.cuda.is_available():
        return
    skip_cuda = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip_cuda)


@pytest.fixture
def gloo_group(tmp_path):
    """A world-size-1 gloo process group in this process, torn down afterwards."""
    assert not dist.is_initialized()
    dist.init_process_group(
        "gloo", init_method=f"file://{tmp_path / 'pg_store'}", rank=0, world_size=1
    )
    try:
        yield
    finally:
        dist.destroy_process_group()
