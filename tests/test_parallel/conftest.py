"""Fixtures shared by the mmpar.parallel tests (``gloo_group`` is in tests/conftest.py)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
