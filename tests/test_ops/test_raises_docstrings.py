"""Every public entry point of ``mmpar.image`` and ``mmpar.ops`` says what it does with bad input.

Issue 36: each function in the packages' ``__all__``, and each class (its docstring, or the
``__init__`` / ``forward`` one of our classes in its MRO, where it validates), has a Google-style
``Raises:`` section. The few that raise nothing of their own are listed below with the reason;
a listed name that gains a ``Raises:`` section (or leaves ``__all__``) fails too, so the list
never goes stale.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import re
import sys

import pytest

# name -> why it has no ``Raises:`` section of its own.
RAISES_NOTHING_OF_ITS_OWN = {
    "mmpar.image": {},
    "mmpar.ops": {
        "Conv2d": "the deprecated torch.nn wrapper: torch's own checks, nothing added",
        "ConvTranspose2d": "the deprecated torch.nn wrapper: torch's own checks, nothing added",
        "Linear": "the deprecated torch.nn wrapper: torch's own checks, nothing added",
        "MaxPool2d": "the deprecated torch.nn wrapper: torch's own checks, nothing added",
        "UnsupportedOpError": "an exception class, not an entry point",
        "get_compiler_version": "takes no input; returns a constant string",
        "get_compiling_cuda_version": "takes no input; returns a constant string",
        "get_onnxruntime_op_path": "takes no input; returns '' as mmcv without the ort build",
        "SparseModule": "an empty base class (isinstance marker), no code to run",
        "SparseConvTensor": "a container; the layers that take it check it (check_sparse_input)",
    },
}

RAISES = re.compile(r"^\s*Raises:\s*\n\s+\S", re.MULTILINE)
# The entries of a section: ``    Name: what``, indented one level below ``Raises:``.
ENTRY = re.compile(r"^(?P<indent>[ ]*)Raises:\n(?P<body>(?:(?P=indent)[ ]+\S.*\n?)+)", re.MULTILINE)


def _docs(obj: object, package: str = "mmpar.") -> list[str]:
    """The docstrings that can hold an entry point's ``Raises:`` section.

    A class's own, and the ``__init__`` / ``forward`` of the classes of ``package`` in its MRO
    (not those of other layers' bases, such as ``BaseModule``, which validate other things).
    """
    if inspect.isclass(obj):
        docs = [obj.__doc__ or ""]
        for cls in obj.__mro__:
            if cls.__module__.startswith(package):
                docs += [
                    cls.__dict__[m].__doc__ or ""
                    for m in ("__init__", "forward")
                    if m in cls.__dict__
                ]
        return docs
    owner = getattr(obj, "__self__", None)
    if inspect.isclass(owner):  # ``Function.apply`` exported as a function (as mmcv does)
        return [owner.__doc__ or ""]
    return [obj.__doc__ or ""]


def _entry_points(package: str) -> list[str]:
    module = importlib.import_module(package)
    return [name for name in module.__all__ if callable(getattr(module, name))]


CASES = [(pkg, name) for pkg in RAISES_NOTHING_OF_ITS_OWN for name in _entry_points(pkg)]


@pytest.mark.parametrize(("package", "name"), CASES, ids=[f"{p}.{n}" for p, n in CASES])
def test_entry_point_documents_its_errors(package, name):
    obj = getattr(importlib.import_module(package), name)
    documented = any(RAISES.search(doc) for doc in _docs(obj, package))
    reason = RAISES_NOTHING_OF_ITS_OWN[package].get(name)
    if reason is None:
        assert documented, f"{package}.{name} has no 'Raises:' section saying what bad input does"
    else:
        assert not documented, f"{package}.{name} is allow-listed ({reason}) but documents errors"


def _documented_types(doc: str) -> list[str]:
    """The exception names of a docstring's ``Raises:`` section (its first-level entries)."""
    names = []
    for section in ENTRY.finditer(inspect.cleandoc(doc) + "\n"):
        lines = section.group("body").splitlines()
        level = len(lines[0]) - len(lines[0].lstrip())
        names += [ln.split(":")[0].strip() for ln in lines if len(ln) - len(ln.lstrip()) == level]
    return names


def _resolve(name: str, package: str) -> object:
    """The exception class called ``name`` where entry points get their errors from.

    A module of ``package`` (helpers raise too, e.g. ``mmpar.ops._region_growing.DtypeError``),
    ``mmpar.utils`` (the ``Check*`` errors) or the builtins; None if there is none.
    """
    scopes = [vars(mod) for key, mod in sys.modules.items() if key.startswith(package)]
    scopes += [vars(importlib.import_module("mmpar.utils")), vars(builtins)]
    return next((scope[name] for scope in scopes if name in scope), None)


@pytest.mark.parametrize(("package", "name"), CASES, ids=[f"{p}.{n}" for p, n in CASES])
def test_documented_errors_are_real_exception_types(package, name):
    """A typo or a made-up name in ``Raises:`` fails: each entry resolves to an exception."""
    obj = getattr(importlib.import_module(package), name)
    for doc in _docs(obj, package):
        for exc in _documented_types(doc):
            found = _resolve(exc, package)
            assert inspect.isclass(found) and issubclass(found, BaseException), (
                f"{package}.{name} documents {exc!r}, which is not an exception type in scope"
            )


@pytest.mark.parametrize("package", sorted(RAISES_NOTHING_OF_ITS_OWN))
def test_allow_list_names_are_exported(package):
    stale = set(RAISES_NOTHING_OF_ITS_OWN[package]) - set(_entry_points(package))
    assert not stale, f"allow-listed names not in {package}.__all__: {sorted(stale)}"


def test_the_checks_themselves():
    """A function without the section is caught, one with it passes; names are resolved."""

    def silent(x):
        """Docstring without the section."""

    def loud(x):
        """Docstring.

        Raises:
            ValueError: Always.
        """

    assert not any(RAISES.search(d) for d in _docs(silent))
    assert any(RAISES.search(d) for d in _docs(loud))
    assert _documented_types(loud.__doc__) == ["ValueError"]
    assert _resolve("CheckValueError", "mmpar.image") is not None
    assert _resolve("ValueErorr", "mmpar.ops") is None


def test_image_wrapper_adds_its_errors_inside_the_raises_section():
    """The entries land in the section, not after a later one; a missing section is started."""
    from mmpar.image._errors import name_opencv_errors

    def with_later_section(img):
        """Do.

        Raises:
            KeyError: Own check.

        Note:
            Later section.
        """

    def without_section(img):
        """Do."""

    doc = name_opencv_errors(with_later_section).__doc__
    raises, note = doc.index("Raises:"), doc.index("Note:")
    assert raises < doc.index("KeyError") < doc.index("NotAnImageError") < note
    assert raises < doc.index("ImageOpError") < note
    assert _documented_types(name_opencv_errors(without_section).__doc__) == [
        "NotAnImageError",
        "ImageOpError",
    ]
