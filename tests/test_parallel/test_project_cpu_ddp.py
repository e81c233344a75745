"""The CPU case added to released projects' DDP builders (mmpar.parallel.project_cpu_ddp).

Stand-in packages named like the projects (``mmdet``, ``mmaction``) are written to ``tmp_path``
with a builder that refuses the CPU as the released one does; the real projects run in
tests/test_real_clients.
"""

from __future__ import annotations

import sys
import textwrap

import pytest

from mmpar.parallel import project_cpu_ddp

REFUSING = """
def {name}(model, device='cuda', {params}):
    assert device in ['cuda', 'mlu'], 'Only available for cuda or mlu devices.'
    return ('project', model, device)
"""


def _write_package(root, dotted, source, reexport):
    """Write the module ``dotted`` (a.b.c) under ``root``; its package re-exports ``reexport``."""
    parts = dotted.split(".")
    for depth in range(1, len(parts)):
        folder = root.joinpath(*parts[:depth])
        folder.mkdir(exist_ok=True)
        (folder / "__init__.py").touch()
    (root.joinpath(*parts[:-1]) / "__init__.py").write_text(
        f"from .{parts[-1]} import {reexport}\n"
    )
    root.joinpath(*parts[:-1], parts[-1] + ".py").write_text(textwrap.dedent(source))


@pytest.fixture
def fake_projects(tmp_path, monkeypatch):
    """``mmdet.utils.util_distribution`` and ``mmaction.utils.distribution_env`` stand-ins."""
    _write_package(
        tmp_path,
        "mmdet.utils.util_distribution",
        REFUSING.format(name="build_ddp", params="*args, **kwargs"),
        "build_ddp",
    )
    _write_package(
        tmp_path,
        "mmaction.utils.distribution_env",
        REFUSING.format(name="build_ddp", params="default_args=None"),
        "build_ddp",
    )
    (tmp_path / "mmdet" / "apis.py").write_text("from mmdet.utils import build_ddp\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in list(sys.modules):
        if name.split(".")[0] in ("mmdet", "mmaction"):
            monkeypatch.delitem(sys.modules, name)
    made = []

    def record(model, *args, **kwargs):
        made.append((model, args, kwargs))
        return "ddp"

    monkeypatch.setattr(project_cpu_ddp, "MMDistributedDataParallel", record)
    yield made
    for name in list(sys.modules):
        if name.split(".")[0] in ("mmdet", "mmaction"):
            del sys.modules[name]


class Model:
    def cpu(self):
        return self


def test_builder_imported_after_install_gets_the_cpu_case(fake_projects):
    project_cpu_ddp.install()
    import mmdet.apis
    import mmdet.utils

    model = Model()
    kwargs = dict(device_ids=[0], broadcast_buffers=False, find_unused_parameters=True)
    # Everywhere the name was imported to, the CPU device now builds MMDistributedDataParallel,
    # without device_ids (DDP refuses them for a CPU module).
    assert mmdet.apis.build_ddp(model, "cpu", **kwargs) == "ddp"
    assert mmdet.utils.build_ddp is mmdet.apis.build_ddp
    assert fake_projects == [
        (model, (), dict(broadcast_buffers=False, find_unused_parameters=True))
    ]
    # Any other device is still the project's own function, with its own checks.
    assert mmdet.utils.build_ddp(model, "cuda", device_ids=[0]) == ("project", model, "cuda")
    with pytest.raises(AssertionError, match="Only available for cuda"):
        mmdet.utils.build_ddp(model, "tpu")
    assert mmdet.utils.build_ddp.__name__ == "build_ddp"
    # The module keeps its own loader (source lookups work as without the hook).
    assert "assert device in" in mmdet.utils.util_distribution.__loader__.get_source(
        "mmdet.utils.util_distribution"
    )


def test_builder_imported_before_install_is_rebound_where_it_was_imported(
    fake_projects, monkeypatch
):
    # A process where the project was imported first (importing this module installed it).
    others = [finder for finder in sys.meta_path if finder is not project_cpu_ddp._FINDER]
    monkeypatch.setattr(sys, "meta_path", others)
    assert not project_cpu_ddp.installed()
    import mmaction.utils

    original = mmaction.utils.build_ddp
    project_cpu_ddp.install()
    model = Model()
    args = dict(device_ids=[0], broadcast_buffers=False)
    assert mmaction.utils.build_ddp is not original
    assert mmaction.utils.distribution_env.build_ddp is mmaction.utils.build_ddp
    assert mmaction.utils.build_ddp(model, "cpu", default_args=args) == "ddp"
    assert mmaction.utils.build_ddp(model, "cpu", args) == "ddp"
    assert fake_projects == [(model, (), dict(broadcast_buffers=False))] * 2
    # Installing twice wraps once.
    wrapped = mmaction.utils.build_ddp
    project_cpu_ddp.install()
    assert mmaction.utils.build_ddp is wrapped
    assert project_cpu_ddp.installed()


def test_unknown_convention_is_a_value_error():
    with pytest.raises(ValueError, match="unknown convention 'kwargs'"):
        project_cpu_ddp.cpu_aware(print, "kwargs")
