import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from mmpar import Config
from mmpar.utils import import_modules_from_strings, plugins

PLUGIN_SRC = Path(__file__).resolve().parents[1] / "data" / "plugin_pkg"


def make_dist_info(site: Path, name: str, entry_points: str) -> None:
    """Make ``site`` look like a site-packages dir holding an installed distribution ``name``."""
    info = site / f"{name.replace('-', '_')}-0.1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points).lstrip())


def run_python(code: str, *path_entries: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(p) for p in path_entries] + [env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


@pytest.fixture
def site(tmp_path):
    """A site dir with the demo plugin 'installed' (dist-info with its entry point)."""
    pyproject = (PLUGIN_SRC / "pyproject.toml").read_text()
    declared = '[project.entry-points."mmpar.plugins"]\ndemo = "mmpar_demo_plugin.hooks"'
    assert declared in pyproject  # keep the fake install in line with the package
    site = tmp_path / "site"
    make_dist_info(site, "mmpar-demo-plugin", "[mmpar.plugins]\ndemo = mmpar_demo_plugin.hooks\n")
    return site


@pytest.mark.slow
def test_entry_point_plugin_is_loaded_lazily_on_first_miss(site):
    result = run_python(
        """
        import sys
        from mmpar import Config
        from mmpar.runner.hooks.hook import HOOKS, Hook
        from mmpar.utils import plugins

        @HOOKS.register_module()
        class LocalHook(Hook):
            pass

        assert HOOKS.get('LocalHook') is LocalHook  # a hit does not load plugins
        assert 'mmpar_demo_plugin.hooks' not in sys.modules and not plugins._loaded
        cfg = Config.fromstring("custom_hooks = [dict(type='MyPluginHook', interval=3)]", '.py')
        hook = HOOKS.build(cfg.custom_hooks[0])
        print(type(hook).__module__, type(hook).__name__, hook.interval, isinstance(hook, Hook))
        print('second load:', plugins.load_entry_point_plugins())
        """,
        site,
        PLUGIN_SRC,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines == ["mmpar_demo_plugin.hooks MyPluginHook 3 True", "second load: False"]


@pytest.mark.slow
def test_broken_plugin_warns_and_does_not_break_lookups(site, tmp_path):
    make_dist_info(
        site,
        "broken-plugin",
        """
        [mmpar.plugins]
        broken = mmpar_broken_plugin
        absent = no_such_module_xyz.hooks
        """,
    )
    (site / "mmpar_broken_plugin.py").write_text("raise RuntimeError('plugin exploded')\n")
    result = run_python(
        """
        import warnings
        from mmpar.runner.hooks.hook import HOOKS

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            print(HOOKS.get('MyPluginHook').__name__)
            try:
                HOOKS.build(dict(type='NoSuchHook'))
            except KeyError as err:
                print('KeyError', 'NoSuchHook' in str(err))
        for w in caught:
            print('WARN', w.message)
        """,
        site,
        PLUGIN_SRC,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "MyPluginHook\nKeyError True\n" in out
    assert 'WARN mmpar plugin entry point "broken = mmpar_broken_plugin"' in out
    assert "RuntimeError: plugin exploded" in out
    assert 'WARN mmpar plugin entry point "absent = no_such_module_xyz.hooks"' in out
    assert out.count("WARN") == 2


class FakeEntryPoint:
    def __init__(self, name, value, error=None):
        self.name, self.value, self.error = name, value, error
        self.loads = 0

    def load(self):
        self.loads += 1
        if self.error:
            raise self.error


def test_load_once_and_warn_in_process(monkeypatch):
    good = FakeEntryPoint("good", "pkg.good")
    bad = FakeEntryPoint("bad", "pkg.bad", ImportError("no module named pkg.bad"))
    monkeypatch.setattr(plugins, "_loaded", False)
    monkeypatch.setattr(plugins, "_plugin_entry_points", lambda: [good, bad])
    with pytest.warns(UserWarning, match=r'"bad = pkg\.bad".*ImportError: no module named'):
        assert plugins.load_entry_point_plugins() is True
    assert plugins.load_entry_point_plugins() is False
    assert (good.loads, bad.loads) == (1, 1)


def test_entry_points_python39_dict_api(monkeypatch):
    import importlib.metadata

    ep = FakeEntryPoint("x", "pkg.x")
    dup = FakeEntryPoint("x", "pkg.x")  # the same distribution seen twice on sys.path
    monkeypatch.setattr(
        importlib.metadata, "entry_points", lambda: {"mmpar.plugins": [ep, dup], "other": [1]}
    )
    assert plugins._plugin_entry_points() == [ep]


# --------------------------------------------------------------------------- custom_imports


@pytest.fixture
def hook_module(tmp_path, monkeypatch):
    """A module in a tmp dir (on sys.path) that registers a hook; cleaned up afterwards."""
    from mmpar.runner.hooks.hook import HOOKS

    name = f"my_hooks_{uuid.uuid4().hex[:8]}"
    hook_name = f"TmpHook{uuid.uuid4().hex[:8]}"
    (tmp_path / "mods").mkdir()
    (tmp_path / "mods" / f"{name}.py").write_text(
        textwrap.dedent(
            f"""
            from mmpar.runner.hooks.hook import HOOKS, Hook

            @HOOKS.register_module()
            class {hook_name}(Hook):
                def __init__(self, priority='LOW'):
                    self.priority = priority
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path / "mods"))
    yield name, hook_name
    HOOKS.module_dict.pop(hook_name, None)
    sys.modules.pop(name, None)


def test_custom_imports_build_hook(write, hook_module):
    from mmpar.runner.hooks.hook import HOOKS

    module, hook_name = hook_module
    path = write(
        "cfg.py",
        f"""
        custom_imports = dict(imports=['{module}'], allow_failed_imports=False)
        custom_hooks = [dict(type='{hook_name}', priority='HIGH')]
        """,
    )
    assert HOOKS.get(hook_name) is None
    cfg = Config.fromfile(path)
    hook = HOOKS.build(cfg.custom_hooks[0])
    assert type(hook).__name__ == hook_name and hook.priority == "HIGH"


def test_custom_imports_not_imported_when_disabled(write, hook_module):
    module, _ = hook_module
    path = write("cfg.yaml", f"custom_imports: {{imports: [{module}]}}\n")
    Config.fromfile(path, import_custom_modules=False)
    assert module not in sys.modules
    Config.fromfile(path)
    assert module in sys.modules


def test_custom_imports_failure_names_module_and_config(write):
    path = write("cfg.py", "custom_imports = dict(imports=['no_such_mod_q1'])\n")
    with pytest.raises(ImportError, match='"no_such_mod_q1"') as info:
        Config.fromfile(path)
    assert str(path) in str(info.value)
    allowed = write(
        "ok.py", "custom_imports = dict(imports=['no_such_mod_q1'], allow_failed_imports=True)\n"
    )
    with pytest.warns(UserWarning, match=r'"no_such_mod_q1".*ok\.py.*ignored'):
        cfg = Config.fromfile(allowed)
    assert cfg.custom_imports.imports == ["no_such_mod_q1"]


def test_custom_imports_bad_spec(write):
    from mmpar.utils import ConfigError

    with pytest.raises(ConfigError, match="custom_imports must be dict"):
        Config.fromfile(write("a.py", "custom_imports = ['os']\n"))
    with pytest.raises(ConfigError, match=r"unknown custom_imports keys \['allow'\]"):
        Config.fromfile(write("b.py", "custom_imports = dict(imports=['os'], allow=True)\n"))


def test_import_modules_from_strings():
    import json
    import os.path

    assert import_modules_from_strings("json") is json
    assert import_modules_from_strings(["json", "os.path"]) == [json, os.path]
    assert import_modules_from_strings([]) is None
    with pytest.warns(UserWarning, match="no_such_mod_q2"):
        assert import_modules_from_strings(["json", "no_such_mod_q2"], True) == [json, None]
    with pytest.raises(TypeError, match="str or a list of str"):
        import_modules_from_strings([1])


def test_custom_imports_given_as_cfg_options_are_imported(hook_module):
    # mmdet-style: --cfg-options custom_imports.imports=[my_pkg.hooks] adds a plugin.
    from mmpar.runner.hooks.hook import HOOKS

    module, hook_name = hook_module
    cfg = Config(dict(model=dict(type="Net")))
    cfg.merge_from_dict({"custom_imports.imports": [module]})
    assert module in sys.modules and HOOKS.get(hook_name) is not None
    with pytest.raises(ImportError, match='"no_such_mod_q2".*--cfg-options'):
        cfg.merge_from_dict({"custom_imports": dict(imports=["no_such_mod_q2"])})
