"""mmcv 1.x torch-facing names under mmpar.utils: lazy loading, parrots_wrapper, devices, hub."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch import nn

import mmpar.utils as utils
from mmpar.utils import (
    assert_attrs_equal,
    assert_dict_contains_subset,
    assert_dict_has_keys,
    assert_is_norm_layer,
    assert_keys_equal,
    assert_params_all_zeros,
    check_python_script,
    device_type,
    ext_loader,
    jit,
    parrots_jit,
    parrots_wrapper,
    skip_no_elena,
    worker_init_fn,
)

LEFT_OUT = ["BuildExtension", "CppExtension", "CUDAExtension", "_get_cuda_home"]


def _run(code):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout.strip()


def test_star_import_and_dir_stay_torch_free():
    out = _run(
        """
        import sys
        from mmpar.utils import *
        import mmpar.utils as u
        names = dir(u)
        print('torch' in sys.modules, 'TORCH_VERSION' in names, '_BatchNorm' in names)
        """
    )
    assert out == "False True True"


def test_lazy_names_load_from_their_submodule():
    assert "TORCH_VERSION" not in utils.__all__
    assert set(utils._LAZY).isdisjoint(utils.__all__)
    assert utils.__all__ == sorted(utils.__all__)
    for name, submodule in utils._LAZY.items():
        module = __import__(f"mmpar.utils.{submodule}", fromlist=[name])
        assert getattr(utils, name) is getattr(module, name), name
        assert name in dir(utils)
    for name in utils.__all__:
        assert hasattr(utils, name), name


def test_unknown_attribute_is_attribute_error():
    assert not hasattr(utils, "no_such_name_xyz")
    with pytest.raises(AttributeError, match="no_such_name_xyz"):
        utils.no_such_name_xyz  # noqa: B018


@pytest.mark.parametrize("module", ["mmpar.utils", "mmpar.utils.parrots_wrapper"])
@pytest.mark.parametrize("name", LEFT_OUT)
def test_extension_builders_are_not_provided(module, name):
    with pytest.raises(ImportError) as info:
        exec(f"from {module} import {name}", {})
    message = str(info.value)
    assert name in message
    assert "mmpar builds no C++/CUDA extensions" in message
    assert "torch.utils.cpp_extension" in message
    assert name not in dir(sys.modules[module])


def test_parrots_wrapper_names_are_torch_classes():
    assert utils.TORCH_VERSION == torch.__version__
    assert utils.IS_CUDA_AVAILABLE == torch.cuda.is_available()
    assert parrots_wrapper.is_cuda_available() == torch.cuda.is_available()
    assert utils.DataLoader is torch.utils.data.DataLoader
    assert utils.PoolDataLoader is torch.utils.data.DataLoader
    assert utils.SyncBatchNorm is nn.SyncBatchNorm
    assert isinstance(nn.BatchNorm2d(3), utils._BatchNorm)
    assert isinstance(nn.InstanceNorm2d(3), utils._InstanceNorm)
    assert isinstance(nn.Conv2d(1, 1, 1), utils._ConvNd)
    # torch's own class (current torch layers no longer subclass it; neither under mmcv).
    assert utils._ConvTransposeMixin is torch.nn.modules.conv._ConvTransposeMixin
    assert isinstance(nn.MaxPool2d(2), utils._MaxPoolNd)
    assert isinstance(nn.AvgPool2d(2), utils._AvgPoolNd)
    assert isinstance(nn.AdaptiveAvgPool2d(1), utils._AdaptiveAvgPoolNd)
    assert isinstance(nn.AdaptiveMaxPool2d(1), utils._AdaptiveMaxPoolNd)
    assert utils.get_build_config() == torch.__config__.show()
    if torch.version.hip is None:
        assert utils.is_rocm_pytorch() is False


def test_device_flags_are_computed_from_the_backends():
    mps = getattr(torch.backends, "mps", None)
    assert utils.IS_MPS_AVAILABLE is bool(mps is not None and mps.is_available())
    assert device_type.is_mps_available() is utils.IS_MPS_AVAILABLE
    has_mlu = hasattr(torch, "is_mlu_available") and torch.is_mlu_available()
    assert utils.IS_MLU_AVAILABLE is bool(has_mlu)
    for flag, package in [("IS_NPU_AVAILABLE", "torch_npu"), ("IS_IPU_AVAILABLE", "poptorch")]:
        try:
            __import__(package)
        except ImportError:
            assert getattr(utils, flag) is False
    assert device_type.is_npu_available() is utils.IS_NPU_AVAILABLE
    assert device_type.is_ipu_available() is utils.IS_IPU_AVAILABLE


def test_device_flags_follow_the_backend(monkeypatch):
    monkeypatch.setattr(torch, "is_mlu_available", lambda: True, raising=False)
    assert device_type.is_mlu_available() is True
    monkeypatch.setattr(torch, "is_mlu_available", lambda: False)
    assert device_type.is_mlu_available() is False


def test_torch_meshgrid_uses_matrix_indexing():
    a, b = torch.arange(2), torch.arange(3)
    xs, ys = utils.torch_meshgrid(a, b)
    assert xs.shape == ys.shape == (2, 3)
    assert xs[:, 0].tolist() == [0, 1] and ys[0].tolist() == [0, 1, 2]


@pytest.mark.filterwarnings("ignore:`torch.jit.trace` is deprecated:FutureWarning")
def test_is_jit_tracing():
    seen = []

    def forward(x):
        seen.append(utils.is_jit_tracing())
        return x + 1

    assert utils.is_jit_tracing() is False
    torch.jit.trace(forward, torch.zeros(1), check_trace=False)
    assert seen == [True]


def test_load_url_downloads_once_and_loads(tmp_path):
    source = tmp_path / "weights.pth"
    torch.save({"w": torch.arange(3)}, source)
    cache = tmp_path / "cache"
    state = utils.load_url(source.as_uri(), model_dir=str(cache), progress=False)
    assert state["w"].tolist() == [0, 1, 2]
    assert (cache / "weights.pth").is_file()
    source.unlink()  # served from the cache now
    again = utils.load_url(
        source.as_uri(), model_dir=str(cache), map_location="cpu", progress=False, weights_only=True
    )
    assert again["w"].tolist() == [0, 1, 2]
    named = utils.load_url(
        (cache / "weights.pth").as_uri(), str(tmp_path / "c2"), None, False, False, "other.pth"
    )
    assert named["w"].tolist() == [0, 1, 2] and (tmp_path / "c2" / "other.pth").is_file()


def test_worker_init_fn_seeds_all_rngs():
    import random

    worker_init_fn(1, num_workers=4, rank=2, seed=10)  # seed 4 * 2 + 1 + 10 = 19
    draws = (random.random(), np.random.rand(), torch.rand(1).item())
    random.seed(19)
    np.random.seed(19)
    torch.manual_seed(19)
    assert draws == (random.random(), np.random.rand(), torch.rand(1).item())


def test_ext_loader_says_ops_exist_but_loads_no_compiled_extension():
    assert ext_loader.check_ops_exist() is True  # every mmcv.ops name runs on PyTorch code
    with pytest.raises(ImportError, match="builds no C\\+\\+/CUDA extensions"):
        ext_loader.load_ext("_ext", ["nms"])
    version_module = ext_loader.load_ext("version", ["__version__"])
    assert version_module.__name__ == "mmpar.version"
    with pytest.raises(AssertionError, match="lacks"):
        ext_loader.load_ext("version", ["nms"])


def test_parrots_jit_decorators_pass_through(monkeypatch):
    def f(x):
        return x + 1

    assert jit(f) is f
    assert jit(coderize=True)(f) is f
    assert jit(func=None, full_shape=False)(f)(1) == 2
    assert skip_no_elena(f)(2) == 3
    assert parrots_jit.parrots_jit_option is None or isinstance(parrots_jit.parrots_jit_option, str)


def test_dict_and_attr_checks():
    arr = np.array([1, 2])
    assert assert_dict_contains_subset({"a": 1, "b": arr, "c": 3}, {"a": 1, "b": np.array([1, 2])})
    assert not assert_dict_contains_subset({"a": 1, "b": arr}, {"b": np.array([1, 3])})
    assert not assert_dict_contains_subset({"a": 1}, {"z": 1})
    assert assert_dict_contains_subset(
        {"t": torch.tensor([1.0, 2.0])}, {"t": torch.tensor([1.0, 2.0])}
    )
    assert not assert_dict_contains_subset({"t": torch.tensor(1.0)}, {"t": torch.tensor(2.0)})

    class Obj:
        a = 1
        t = torch.ones(2)

    assert assert_attrs_equal(Obj(), {"a": 1, "t": torch.ones(2)})
    assert not assert_attrs_equal(Obj(), {"a": 2})
    assert not assert_attrs_equal(Obj(), {"missing": 1})
    assert assert_dict_has_keys({"a": 1, "b": 2}, ["a"])
    assert not assert_dict_has_keys({"a": 1}, ["a", "b"])
    assert assert_keys_equal(["a", "b"], ["b", "a"])
    assert not assert_keys_equal(["a"], ["a", "b"])


def test_norm_and_zero_checks():
    assert assert_is_norm_layer(nn.BatchNorm1d(2))
    assert assert_is_norm_layer(nn.GroupNorm(1, 2))
    assert assert_is_norm_layer(nn.LayerNorm(2))
    assert assert_is_norm_layer(nn.InstanceNorm2d(2))
    assert not assert_is_norm_layer(nn.Conv2d(1, 1, 1))
    conv = nn.Conv2d(1, 2, 1)
    assert not assert_params_all_zeros(conv)
    nn.init.zeros_(conv.weight)
    assert not assert_params_all_zeros(conv)
    nn.init.zeros_(conv.bias)
    assert assert_params_all_zeros(conv)
    no_bias = nn.Linear(2, 2, bias=False)
    nn.init.zeros_(no_bias.weight)
    assert assert_params_all_zeros(no_bias)


def test_check_python_script_runs_as_main_with_argv(tmp_path, capsys):
    script = tmp_path / "hello.py"
    script.write_text(
        "import sys\n"
        "if __name__ == '__main__':\n"
        "    print('argv', sys.argv[1:])\n"
        "    if sys.argv[1:] == ['fail']:\n"
        "        raise SystemExit(3)\n"
    )
    argv_before = list(sys.argv)
    check_python_script(f"python {script} zz 'two words'")
    assert capsys.readouterr().out == "argv ['zz', 'two words']\n"
    check_python_script(f"{script} yy")
    assert capsys.readouterr().out == "argv ['yy']\n"
    with pytest.raises(SystemExit) as info:
        check_python_script(f"python {script} fail")
    assert info.value.code == 3
    assert sys.argv == argv_before
    # The same script behaves the same as a real subprocess.
    proc = subprocess.run([sys.executable, str(script), "zz"], capture_output=True, text=True)
    assert proc.stdout == "argv ['zz']\n"
