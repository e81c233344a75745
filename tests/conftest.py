"""Suite-wide pytest configuration."""

import os
import sys
from pathlib import Path

import pytest
import torch
import torch.distributed as dist

# The shared test helpers (tests/helpers/) import as ``helpers``: --import-mode=importlib puts
# no test directory on sys.path by itself.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``cuda`` without a CUDA device; under xdist, start long files first."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        _long_files_first(items)
    if torch.cuda.is_available():
        return
    skip_cuda = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip_cuda)


def _long_files_first(items):
    """Put the files that start processes (a ``slow`` test, or a docs page run) first.

    scripts/test.sh hands whole files to the xdist workers in collection order
    (``--no-loadscope-reorder``): long files started last would leave one worker running
    alone at the end. The order within a file is kept.
    """
    long_files = {item.path for item in items if "slow" in item.keywords}
    long_files |= {item.path for item in items if item.path.parent.name == "docs"}
    items.sort(key=lambda item: item.path not in long_files)  # stable: files stay together


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
