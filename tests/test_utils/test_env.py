import sys

import numpy as np
import torch

import mmpar
from mmpar.utils import collect_env


def test_collect_env():
    env = collect_env()
    assert env["PyTorch"] == torch.__version__
    assert env["NumPy"] == np.__version__
    assert env["mmpar"] == mmpar.__version__
    assert env["Python"].startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert env["sys.platform"] == sys.platform
    assert env["CUDA available"] is torch.cuda.is_available()
    assert "TorchVision" in env and "platform" in env
    if torch.cuda.is_available():
        assert env["CUDA"] == torch.version.cuda
        assert any(key.startswith("GPU ") for key in env)
    else:
        assert not any(key.startswith("GPU ") for key in env)
