"""Suite-wide pytest configuration."""

import pytest
import torch


def pytest_collection_modifyitems(config, items):
    """Skip tests marked ``cuda`` on machines without a CUDA device."""
    if torch.cuda.is_available():
        return
    skip_cuda = pytest.mark.skip(reason="needs a CUDA device")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip_cuda)
