"""Fixtures shared by the mmpar.parallel tests (``gloo_group`` is in tests/conftest.py)."""

import socket

import pytest
import torch


@pytest.fixture
def free_port() -> int:
    """A TCP port that was free a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(autouse=True)
def _one_thread():
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
