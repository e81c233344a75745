"""The zero-edit mode: ``import mmcv`` served by mmpar, for projects left unchanged.

Two explicit opt-ins:

- Launcher: ``python -m mmpar.as_mmcv script.py [args...]`` (or ``-m package.module [args...]``)
  runs the script as ``__main__`` the way ``python script.py`` would (``sys.argv``, and
  ``sys.path[0]`` the script's folder), with the mode on. Under torchrun:
  ``torchrun --nproc_per_node 2 -m mmpar.as_mmcv tools/train.py cfg --launcher pytorch``.
- One line at the top of code that owns its entry point: ``import mmpar.as_mmcv``.

Either places a finder first on ``sys.meta_path``. Every ``mmcv.X.Y`` then *is* the module
object ``mmpar.X.Y`` (``sys.modules['mmcv.runner'] is sys.modules['mmpar.runner']``), so
registries, ``isinstance`` checks and pickles are shared between both spellings; classes report
their ``mmpar.*`` module. The top module ``mmcv`` is a module of its own that forwards attribute
access to ``mmpar`` but reports ``__version__`` = :data:`mmpar.version.mmcv_version` (1.7.0
unless ``MMPAR_MMCV_VERSION`` is set; see :mod:`mmpar.version` for why), as does
``mmcv.version``; ``mmpar.__version__`` stays mmpar's own. A name mmpar does not have fails with
:class:`ModuleNotFoundError` as usual, so ``try: from mmcv.onnx import X / except ImportError:``
fallbacks keep working.

With the mode on, the DDP builders of mmcls, mmdet, mmseg and mmaction2 accept the ``'cpu'``
device they pick without CUDA (:mod:`mmpar.parallel.project_cpu_ddp`), so their own
``--launcher pytorch`` training runs on CPU with gloo.

Processes the program starts have the mode too: forked ones inherit it, and ``spawn`` /
``forkserver`` children (which import the parent's ``__main__`` again) start through this module,
because the launcher's ``__main__`` names it. Under torchrun each worker runs the launcher.

A real mmcv that is merely installed is never imported (this finder comes first); one that
was imported before the mode is switched on stops it with an :class:`ImportError`, since two
``mmcv``s in one process would split registries.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import io
import os
import runpy
import sys
import types
import zipfile
from collections.abc import Sequence

import mmpar
from mmpar import version as _version
from mmpar.parallel import project_cpu_ddp
from mmpar.utils.compat_errors import MODULES_NOT_PROVIDED
from mmpar.version import parse_version_info

ALIAS = "mmcv"
TARGET = "mmpar"

__all__ = ["CHILD_MAIN_ENV", "MmcvAliasFinder", "install", "installed", "main"]

USAGE = (
    "usage: python -m mmpar.as_mmcv script.py [args...]\n"
    "       python -m mmpar.as_mmcv -m package.module [args...]\n"
    "Runs the script (or module) as __main__ with `import mmcv` served by mmpar."
)


def _alias_getattr(name: str):
    """Forward ``mmcv.<name>`` to ``mmpar.<name>`` (the top alias module's ``__getattr__``).

    A subpackage not imported yet is imported: mmcv's ``__init__`` imports ``image``,
    ``video`` and ``visualization``, so projects use ``mmcv.visualization.imshow`` after a
    bare ``import mmcv``.
    """
    try:
        return getattr(mmpar, name)
    except AttributeError:
        pass
    if not name.startswith("_") and importlib.util.find_spec(f"{TARGET}.{name}") is not None:
        return importlib.import_module(f"{ALIAS}.{name}")
    raise AttributeError(f"module 'mmcv' (served by mmpar) has no attribute {name!r}")


def _alias_dir() -> list[str]:
    return sorted({*dir(mmpar), "__version__", "version", "version_info", "parse_version_info"})


def _version_module(spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
    """``mmcv.version``: mmcv's version names, reporting the mmcv version mmpar stands in for."""
    module = types.ModuleType(spec.name, "The mmcv version mmpar stands in for.")
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__version__ = _version.mmcv_version
    module.version_info = tuple(parse_version_info(module.__version__, length=3)[:3])
    module.parse_version_info = parse_version_info
    module.__all__ = ["__version__", "version_info", "parse_version_info"]
    return module


def _top_module(spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
    """The module object ``mmcv``: mmpar's names, mmcv's version.

    ``__file__`` and ``__path__`` are mmpar's (the files that serve mmcv), so code that looks
    next to ``mmcv.__file__`` finds mmpar's files, and submodule lookups stay within mmpar.
    """
    module = types.ModuleType(ALIAS, "mmcv 1.x, served by mmpar (python -m mmpar.as_mmcv).")
    module.__spec__ = spec
    module.__loader__ = spec.loader
    module.__file__ = mmpar.__file__
    module.__path__ = list(mmpar.__path__)
    module.__package__ = ALIAS
    module.__getattr__ = _alias_getattr
    module.__dir__ = _alias_dir
    return module


def _alias_loaded_submodules(target_name: str) -> None:
    """Enter ``mmcv.X.Y`` for every ``mmpar.X.Y`` that importing ``mmpar.X`` already loaded.

    Importing a submodule the first time sets it as an attribute of its parent package. A
    package that re-exports a function under its submodule's name (``mmcv.ops.nms`` is both)
    would lose the function to a later ``import mmcv.ops.nms``; with the alias already in
    ``sys.modules`` that import finds it there and leaves the parent alone, as under mmcv.
    """
    prefix = target_name + "."
    for name, module in list(sys.modules.items()):
        if name.startswith(prefix):
            sys.modules.setdefault(ALIAS + name[len(TARGET) :], module)


class MmcvAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Resolve ``mmcv`` and ``mmcv.*`` imports to mmpar (finder and loader in one)."""

    def find_spec(self, fullname: str, path=None, target=None):
        """Return a spec for ``mmcv`` and its submodules; None for every other name."""
        if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
            return None
        if fullname in (ALIAS, f"{ALIAS}.version"):
            return importlib.machinery.ModuleSpec(
                fullname, self, is_package=fullname == ALIAS, origin="mmpar"
            )
        target_name = TARGET + fullname[len(ALIAS) :]
        try:
            target_spec = importlib.util.find_spec(target_name)
        except ModuleNotFoundError:
            target_spec = None
        if target_spec is None:
            raise _missing(fullname)
        spec = importlib.machinery.ModuleSpec(
            fullname,
            self,
            is_package=target_spec.submodule_search_locations is not None,
            origin=target_spec.origin,
        )
        return spec

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        """Make ``mmcv`` / ``mmcv.version``, or import and return ``mmpar.X`` for ``mmcv.X``.

        The import system keeps the attributes (``__name__``, ``__spec__``, ...) of a module
        that already has them, so ``mmpar.X`` stays exactly as it is.
        """
        if spec.name == ALIAS:
            return _top_module(spec)
        if spec.name == f"{ALIAS}.version":
            return _version_module(spec)
        target = importlib.import_module(TARGET + spec.name[len(ALIAS) :])
        if hasattr(target, "__path__"):  # only a package has submodules to alias
            _alias_loaded_submodules(target.__name__)
        return target

    def exec_module(self, module: types.ModuleType) -> None:
        """Nothing to run: mmpar's modules ran when imported under their own names."""
        if module.__name__ == ALIAS:
            # mmcv's top level has its version module as an attribute, and its names.
            version = importlib.import_module(f"{ALIAS}.version")
            module.version = version
            module.__version__ = version.__version__
            module.version_info = version.version_info
            module.parse_version_info = version.parse_version_info


def _missing(fullname: str) -> ModuleNotFoundError:
    """The error for ``mmcv.<...>`` that mmpar has no module for."""
    sub = fullname.split(".")[1]
    if fullname.count(".") == 1 and sub in MODULES_NOT_PROVIDED:
        return ModuleNotFoundError(
            f"No module named {fullname!r}: {fullname} is not provided by mmpar "
            f"({MODULES_NOT_PROVIDED[sub]})",
            name=fullname,
        )
    target = TARGET + fullname[len(ALIAS) :]
    return ModuleNotFoundError(
        f"No module named {fullname!r} (the zero-edit mode serves mmcv from mmpar, which has no "
        f"{target})",
        name=fullname,
    )


_FINDER = MmcvAliasFinder()


def installed() -> bool:
    """Whether the zero-edit mode is on in this process."""
    return any(isinstance(f, MmcvAliasFinder) for f in sys.meta_path)


def install() -> None:
    """Switch the zero-edit mode on (idempotent): the finder goes first on ``sys.meta_path``.

    Raises:
        ImportError: A real mmcv has already been imported in this process.
    """
    imported = sys.modules.get(ALIAS)
    ours = isinstance(getattr(imported, "__loader__", None), MmcvAliasFinder)
    if imported is not None and not ours:
        where = getattr(imported, "__file__", None) or repr(imported)
        raise ImportError(
            f"a real mmcv is already imported ({where}); the zero-edit mode cannot serve mmcv "
            f"from mmpar in this process: switch it on before anything imports mmcv (make "
            f"`import mmpar.as_mmcv` the first import, or run `python -m mmpar.as_mmcv "
            f"script.py`), or uninstall mmcv"
        )
    if not installed():
        sys.meta_path.insert(0, _FINDER)
    # Released projects' own --launcher pytorch path then also runs on CPU (gloo).
    project_cpu_ddp.install()


# The program the launcher runs, for the processes multiprocessing starts with spawn or
# forkserver: a path, or "-m <module>".
CHILD_MAIN_ENV = "MMPAR_AS_MMCV_MAIN"


def _exec_as_main(code: types.CodeType, file: str, package: str | None) -> None:
    """Run ``code`` as the module ``__main__``, as ``python file`` (or ``python -m``) would.

    One thing differs: ``__main__.__spec__`` names this module. multiprocessing's spawn and
    forkserver children re-import the parent's ``__main__`` by that name, so they start
    through the launcher too (:func:`_child_main`) and have the mode on before the program's
    imports run. Forked children simply inherit it.
    """
    module = types.ModuleType("__main__")
    module.__file__ = file
    module.__package__ = package
    module.__spec__ = importlib.util.find_spec(__name__)
    sys.modules["__main__"] = module
    exec(code, module.__dict__)


def _run(argv: Sequence[str]) -> None:
    """Run ``script.py args`` or ``-m module args`` as ``__main__``, as ``python`` would.

    :func:`_preflight` has checked that there is something to run.
    """
    if argv[0] == "-m":
        name, spec = _find_main_module(argv[1])
        code = spec.loader.get_code(name)
        sys.argv = [spec.origin, *argv[2:]]
        _check_training_command()
        os.environ[CHILD_MAIN_ENV] = f"-m {name}"
        _exec_as_main(code, spec.origin, spec.parent)
        return
    script = argv[0]
    sys.argv = list(argv)
    _check_training_command()
    # Python puts the script's folder first on sys.path (`python -m` put the current one).
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    if _is_archive(script):
        runpy.run_path(script, run_name="__main__")  # a folder or zip with __main__.py
        return
    path = os.path.abspath(script)
    with io.open_code(path) as f:
        # dont_inherit: this module's `from __future__` flags are not the script's.
        code = compile(f.read(), path, "exec", dont_inherit=True)
    os.environ[CHILD_MAIN_ENV] = path
    _exec_as_main(code, path, None)


def _check_training_command() -> None:
    """Refuse a training command that ``runner.run`` would refuse, before the program starts.

    A project's ``tools/train.py`` writes into the work dir before it builds its runner; see
    :func:`mmpar.cli.work_dir_check.check_training_command`. Ends the process with one
    ``error:`` line and exit code 2.
    """
    from mmpar.cli.work_dir_check import check_training_command
    from mmpar.utils.usage_error import UsageError

    try:
        check_training_command(sys.argv[1:])
    except UsageError as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def _find_main_module(name: str) -> tuple[str, importlib.machinery.ModuleSpec]:
    """The module ``python -m name`` runs (``name.__main__`` for a package) and its spec.

    Raises:
        ModuleNotFoundError: There is no such module, or the package has no ``__main__``.
    """
    hint = (
        "check the name, and that its package is installed or on sys.path (the current folder is)"
    )
    try:
        spec = importlib.util.find_spec(name)
        package = spec is not None and spec.submodule_search_locations is not None
        if package:  # `python -m package` runs package.__main__
            spec = importlib.util.find_spec(f"{name}.__main__")
    except ModuleNotFoundError as err:
        if err.name is None or not name.startswith(err.name):
            raise  # a module the package's own __init__ imports: its error, as Python's
        raise ModuleNotFoundError(f"No module named {err.name!r}: {hint}", name=err.name) from None
    if package and spec is None:
        raise ModuleNotFoundError(
            f"No module named '{name}.__main__': {name} is a package and cannot be run "
            f"directly; give one of its modules (-m {name}.<module>)",
            name=f"{name}.__main__",
        )
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}: {hint}", name=name)
    if package:
        name = f"{name}.__main__"
    return name, spec


def _preflight(argv: Sequence[str]) -> None:
    """Raise the launcher's own errors before anything of the program runs.

    Raises:
        MmcvVersionError: ``MMPAR_MMCV_VERSION`` is not a version number.
        ModuleNotFoundError: ``-m`` names no module that can run.
        FileNotFoundError: The script is a folder or zip without ``__main__.py``.
    """
    if not _version.mmcv_version:  # reading it checks MMPAR_MMCV_VERSION
        raise ValueError(f"{_version.MMCV_VERSION_ENV} resolved to an empty version")
    if argv[0] == "-m":
        _find_main_module(argv[1])
    elif _is_archive(argv[0]) and not _has_main(argv[0]):
        raise FileNotFoundError(
            f"can't find '__main__' module in {argv[0]!r}: give a script (e.g. "
            f"{os.path.join(argv[0], 'tools', 'train.py')}) or a folder or zip with a __main__.py"
        )


def _is_archive(path: str) -> bool:
    """Whether ``python path`` runs a folder or zip (its ``__main__.py``), not a script."""
    return os.path.isdir(path) or zipfile.is_zipfile(path)


def _has_main(path: str) -> bool:
    """Whether the folder or zip ``path`` has the ``__main__.py`` Python runs."""
    if os.path.isdir(path):
        return any(os.path.isfile(os.path.join(path, f"__main__{ext}")) for ext in (".py", ".pyc"))
    with zipfile.ZipFile(path) as archive:
        return any(n in ("__main__.py", "__main__.pyc") for n in archive.namelist())


def _child_main() -> dict:
    """In a spawn/forkserver child: run the parent's program as ``__mp_main__``.

    Its ``if __name__ == "__main__":`` part stays off, as multiprocessing does for any main
    module; its names are returned, to become those of the child's main module (so pickled
    references to ``__main__.X`` resolve).
    """
    target = os.environ.get(CHILD_MAIN_ENV, "")
    if target.startswith("-m "):
        return runpy.run_module(target[3:], run_name="__mp_main__")
    if target:
        return runpy.run_path(target, run_name="__mp_main__")
    return {}


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m mmpar.as_mmcv``.

    Args:
        argv: ``[script.py, args...]`` or ``['-m', module, args...]``; default ``sys.argv[1:]``.

    Returns:
        int: 0 once the script ends normally (its own ``sys.exit`` passes through); 2, after
        one ``error: <Type>: <message>`` line on stderr, for a wrong command line, a missing
        script or module, a folder or zip without ``__main__.py``, a bad
        ``MMPAR_MMCV_VERSION`` or a real mmcv already imported. Errors of the program itself
        keep their traceback.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "-m" and len(argv) < 2:
        print(f"error: -m needs a module name\n{USAGE}", file=sys.stderr)
        return 2
    if argv[0] != "-m" and not os.path.exists(argv[0]):
        print(f"error: FileNotFoundError: no such script: {argv[0]}", file=sys.stderr)
        return 2
    try:
        _preflight(argv)
        install()
    except (ImportError, ValueError, OSError) as err:
        print(f"error: {type(err).__name__}: {err}", file=sys.stderr)
        return 2
    _run(argv)
    return 0


if __name__ == "__main__":
    # Run by `python -m`: this copy is `__main__`; hand over to the importable module so that
    # one finder class exists (its import switches the mode on).
    from mmpar.as_mmcv import main as _main

    sys.exit(_main())
elif __name__ == "__mp_main__":
    # A spawn/forkserver child of a launcher run (see _exec_as_main): importing the module
    # switches the mode on; then the parent's program runs, its names becoming this module's.
    from mmpar.as_mmcv import _child_main

    globals().update(_child_main())
else:
    install()
