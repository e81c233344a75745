import os
import random
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import mmpar
from mmpar.utils import set_random_seed


def draws():
    return (
        [random.random() for _ in range(3)],
        np.random.rand(3).tolist(),
        torch.rand(3).tolist(),
    )


def test_same_seed_same_draws_from_all_rngs():
    set_random_seed(123)
    first = draws()
    set_random_seed(123)
    assert draws() == first
    set_random_seed(124)
    other = draws()
    for a, b in zip(first, other):
        assert a != b
    assert os.environ["PYTHONHASHSEED"] == "124"


def test_deterministic_flags():
    before = (
        torch.are_deterministic_algorithms_enabled(),
        torch.backends.cudnn.deterministic,
        torch.backends.cudnn.benchmark,
    )
    try:
        assert set_random_seed(0, deterministic=True) is None
        assert torch.are_deterministic_algorithms_enabled()
        assert torch.backends.cudnn.deterministic is True
        assert torch.backends.cudnn.benchmark is False
        assert "CUBLAS_WORKSPACE_CONFIG" in os.environ
    finally:
        torch.use_deterministic_algorithms(before[0])
        torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = before[1:]


@pytest.mark.parametrize(
    "seed,exc",
    [("1", TypeError), (1.5, TypeError), (True, TypeError), (-1, ValueError), (2**32, ValueError)],
)
def test_bad_seed(seed, exc):
    with pytest.raises(exc, match="seed must be"):
        set_random_seed(seed)


def test_top_level_exports():
    from mmpar import Config, ConfigDict, DictAction, Registry, build_from_cfg  # noqa: F401
    from mmpar.utils import get_logger, import_modules_from_strings, print_log  # noqa: F401

    assert re.fullmatch(r"\d+\.\d+\.\d+.*", mmpar.__version__)


def test_import_is_light():
    # Importing the config/registry layer must not drag in torch & co (the cost is measured in
    # benchmarks/import_time.py).
    code = (
        "import sys, mmpar.utils; "
        "print(sorted(m for m in ('torch', 'torchvision', 'tensorboard', 'matplotlib', 'yaml') "
        "if m in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert proc.stdout.strip() == "[]"
