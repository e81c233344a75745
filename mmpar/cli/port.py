"""Port an mmcv 1.x source tree to mmpar: ``python tools/port_mmcv.py path/to/project``.

For every ``.py`` file under the tree it rewrites

- the name ``mmcv`` in code: ``import mmcv``, ``import mmcv.x as y``, ``from mmcv.x import a``
  and every use such as ``mmcv.Config`` or ``mmcv.runner.EpochBasedRunner`` become ``mmpar``;
- version checks: ``mmcv.__version__`` (also ``mmcv.version.__version__`` and
  ``from mmcv import __version__``) becomes ``mmpar.mmcv_version``, the mmcv version mmpar stands
  in for (the one the zero-edit mode reports), so a project's ``min <= version < max`` check
  keeps passing;
- dotted mmcv paths in strings: ``type='mmcv.runner.OptimizerHook'``,
  ``custom_imports=dict(imports=['mmcv.cnn'])``, ``:obj:`mmcv.Config``` in a docstring, code in an
  f-string's braces: wherever ``mmcv.`` is followed by a name. Prose such as ``"mmcv>=1.3"`` and
  URLs (``https://mmcv.readthedocs.io``, ``.../mmcv/...``) stay as written; comments too.

How: each file is parsed with :mod:`ast` (to know which names are keyword arguments, and which
mmcv names the file uses) and cut into tokens with :mod:`tokenize`; only the text of the tokens
above changes, so formatting, comments and line endings stay byte for byte. (No third-party
parser is needed for token-level renames.)

Safety: files are read and rewritten in memory first; nothing is written unless every file
decodes as UTF-8 and parses. Then every folder to write in is checked, every new content goes to
a temporary file beside its target, and only then are they all renamed over the targets
(:mod:`mmpar.cli.staged_write`), keeping permission bits: a read-only folder or a full disk
leaves the tree exactly as it was. Files reached through a symlink are not rewritten (the link
would become a copy); a symlink that leads out of the tree is reported. Hidden folders (``.git``,
``.venv``, ...) and ``__pycache__`` are not entered, except ``.mim`` (an OpenMMLab wheel keeps
the project's ``tools/`` and ``configs/`` there); the summary lists the hidden folders left out.

Report: every mmcv name the tree uses that mmpar does not provide, as
``file:line: mmcv.X.Y is not provided by mmpar (what to use)``, found by importing the mmpar
module and looking the name up (the truth, not a list): a module path resolves as Python's
import does (``mmcv.ops.nms.batched_nms`` is in the module ``mmpar.ops.nms``), and a name that
is one of :mod:`mmpar.ops`'s stand-ins (importable, raises when used) is reported with its
"instead". Then code that numpy 2 no longer runs (``np.float_``, ``np.float``, ``np.sctypes``,
...), found by ruff's NumPy rules (:mod:`mmpar.cli.port_numpy`; ``--fix`` applies ruff's safe
fixes). Exit codes: 0 done (also with names reported), 2 bad input (a path that does not exist,
a file that cannot be read, is not UTF-8 or does not parse, a folder that cannot be written, a
full disk, ``--fix`` without ruff): one ``error:`` line naming the file, nothing written.
"""

from __future__ import annotations

import argparse
import ast
import difflib
import importlib
import importlib.util
import io
import os
import re
import sys
import tokenize
import types
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mmpar.utils.compat_errors import MODULES_NOT_PROVIDED, NotProvidedError

from . import port_numpy
from .staged_write import StagedWriteError, Write, write_all

__all__ = [
    "MMCV_SUBPACKAGES",
    "PortedFile",
    "find_python_files",
    "main",
    "port_source",
    "port_tree",
    "unprovided_names",
]

#: mmcv 1.7.2's subpackages: ``mmcv.<one of these>`` in a string is a module path, which the
#: report checks (other ``mmcv.X`` in strings are mostly prose in docstrings).
MMCV_SUBPACKAGES = frozenset(
    {
        "arraymisc", "cnn", "device", "engine", "fileio", "image", "model_zoo", "onnx", "ops",
        "parallel", "runner", "tensorrt", "utils", "version", "video", "visualization",
    }
)  # fmt: skip

_NOT_AFTER = r"(?<![\w./-])"  # not part of a longer name, a dotted path or a URL
_STRING_PATH = re.compile(_NOT_AFTER + r"mmcv(?=\.[A-Za-z_])(?!\.readthedocs\b)")
_FSTRING_VERSION = re.compile(_NOT_AFTER + r"mmcv(?:\.version)?\.__version__\b")
_USED_PATH = re.compile(_NOT_AFTER + r"(mmcv(?:\.[A-Za-z_]\w*)+)")
_VERSION_NAME = "mmcv_version"


@dataclass
class PortedFile:
    """One file of the tree, before and after the port.

    Attributes:
        path: The file.
        rel: Its path relative to the tree (as shown in diffs and reports).
        old: The text as read.
        new: The text after the port.
        uses: ``(line, dotted mmcv name)`` for every mmcv name the file uses.
        bom: Whether the file starts with a UTF-8 byte-order mark (kept on write).
    """

    path: Path
    rel: str
    old: str
    new: str
    uses: list[tuple[int, str]] = field(default_factory=list)
    bom: bool = False

    @property
    def changed(self) -> bool:
        """Whether the port changes the file."""
        return self.old != self.new


# ----------------------------------------------------------------------------- analysis (ast)


def _char_col(line: str, byte_col: int) -> int:
    """Turn an :mod:`ast` column (UTF-8 bytes) into a :mod:`tokenize` one (characters)."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def _attribute_chain(node: ast.AST) -> tuple[str, list[str]] | None:
    """``a.b.c`` -> ``('a', ['b', 'c'])``; None when the chain does not start at a name."""
    attrs = []
    while isinstance(node, ast.Attribute):
        attrs.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return node.id, attrs[::-1]
    return None


def _is_mmcv(name: str | None) -> bool:
    return name is not None and (name == "mmcv" or name.startswith("mmcv."))


def _uses(tree: ast.AST) -> list[tuple[int, str]]:
    """Every mmcv name the module uses: imports, attribute paths from them, paths in strings."""
    bound: dict[str, str] = {}  # a local name -> the mmcv path it stands for
    uses: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_mmcv(alias.name):
                    uses.append((node.lineno, alias.name))
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        bound["mmcv"] = "mmcv"
        elif isinstance(node, ast.ImportFrom) and not node.level and _is_mmcv(node.module):
            for alias in node.names:
                line = getattr(alias, "lineno", node.lineno)
                if alias.name == "*":
                    uses.append((line, node.module))
                    continue
                uses.append((line, f"{node.module}.{alias.name}"))
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    inner: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            inner.update(id(n) for n in ast.walk(node.value) if isinstance(n, ast.Attribute))
            chain = _attribute_chain(node)
            if chain and chain[0] in bound:
                uses.append((node.lineno, ".".join([bound[chain[0]], *chain[1]])))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for match in _USED_PATH.finditer(node.value):
                if match.group(1).split(".")[1] in MMCV_SUBPACKAGES:
                    line = node.lineno + node.value.count("\n", 0, match.start())
                    uses.append((line, match.group(1)))
    return sorted(set(uses))


def _keyword_positions(tree: ast.AST, lines: list[str]) -> set[tuple[int, int]]:
    """Where ``mmcv=`` is a keyword argument of a call: a name of the callee, not ours."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "mmcv":
            found.add((node.lineno, _char_col(lines[node.lineno - 1], node.col_offset)))
    return found


# ----------------------------------------------------------------------------- rewrite (tokens)


def _significant(tokens: list[tokenize.TokenInfo]) -> list[tokenize.TokenInfo]:
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
    return [t for t in tokens if t.type not in skip]


def _is_op(token: tokenize.TokenInfo | None, text: str) -> bool:
    return token is not None and token.type == tokenize.OP and token.string == text


def _is_name(token: tokenize.TokenInfo | None, text: str) -> bool:
    return token is not None and token.type == tokenize.NAME and token.string == text


def _edits(tokens: list[tokenize.TokenInfo], keywords: set[tuple[int, int]]) -> Iterator[tuple]:
    """Yield ``(start, end, replacement)`` with ``(row, col)`` token positions."""
    toks = _significant(tokens)
    from_mmcv = False  # inside `from mmcv[.version] import ...`
    for i, tok in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1 : i + 5]
        if tok.type == tokenize.NEWLINE:
            from_mmcv = False
        elif tok.type == tokenize.NAME and tok.string == "mmcv" and not _is_op(prev, "."):
            if _is_name(prev, "from"):
                rest = [t.string for t in nxt[:3]]
                from_mmcv = rest[:1] == ["import"] or rest == [".", "version", "import"]
            if tok.start in keywords:
                continue
            if len(nxt) >= 2 and _is_op(nxt[0], ".") and _is_name(nxt[1], "__version__"):
                yield tok.start, nxt[1].end, f"mmpar.{_VERSION_NAME}"
            elif (
                len(nxt) >= 4
                and _is_op(nxt[0], ".")
                and _is_name(nxt[1], "version")
                and _is_op(nxt[2], ".")
                and _is_name(nxt[3], "__version__")
            ):
                yield tok.start, nxt[3].end, f"mmpar.{_VERSION_NAME}"
            else:
                yield tok.start, tok.end, "mmpar"
        elif from_mmcv and tok.type == tokenize.NAME and tok.string == "__version__":
            aliased = bool(nxt) and _is_name(nxt[0], "as")
            new = _VERSION_NAME if aliased else f"{_VERSION_NAME} as __version__"
            yield tok.start, tok.end, new
        elif tok.type == tokenize.STRING:
            prefix = tok.string[: len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
            if "b" in prefix.lower():
                continue
            if "f" in prefix.lower():  # Python < 3.12: code in braces is part of the token
                text = _FSTRING_VERSION.sub(f"mmpar.{_VERSION_NAME}", tok.string)
                text = _STRING_PATH.sub("mmpar", text)
            else:
                text = _STRING_PATH.sub("mmpar", tok.string)
            if text != tok.string:
                yield tok.start, tok.end, text


def port_source(text: str, filename: str = "<string>") -> tuple[str, list[tuple[int, str]]]:
    """Port one module's source.

    Args:
        text: The source (decoded, without a byte-order mark).
        filename: Shown in a syntax error.

    Returns:
        tuple: The ported source and the ``(line, dotted mmcv name)`` uses of the original.

    Raises:
        SyntaxError: ``text`` is not valid Python.
    """
    tree = ast.parse(text, filename=filename)
    if "mmcv" not in text:
        return text, []
    lines = io.StringIO(text).readlines()
    tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    keywords = _keyword_positions(tree, lines)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    out = text
    for start, end, new in sorted(_edits(tokens, keywords), reverse=True):
        a = starts[start[0] - 1] + start[1]
        b = starts[end[0] - 1] + end[1]
        out = out[:a] + new + out[b:]
    return out, _uses(tree)


# ----------------------------------------------------------------------------- the tree


#: Hidden folders that hold project source: an OpenMMLab wheel keeps the project's ``tools/``
#: and ``configs/`` under ``<package>/.mim/`` (what ``mim`` installs them from).
SOURCE_HIDDEN_FOLDERS = frozenset({".mim"})


@dataclass
class SourceFiles:
    """What :func:`find_python_files` found under a tree.

    Attributes:
        files: The regular ``.py`` files to port (never through a symlink), sorted.
        notes: One line per symlink that points out of the tree.
        hidden: The hidden folders (``.git``, ``.venv``, ...) left out, relative to the tree.
    """

    files: list[Path]
    notes: list[str]
    hidden: list[str]


def find_python_files(root: Path) -> SourceFiles:
    """The ``.py`` files to port under ``root``, and what was left out.

    Hidden folders are left out (``.git``, ``.venv``, a tox or editor folder: not the project's
    source), except :data:`SOURCE_HIDDEN_FOLDERS`; ``__pycache__`` too.

    Args:
        root: A folder, or one ``.py`` file.

    Returns:
        SourceFiles: The files, the notes on symlinks out of the tree, the hidden folders left
        out. A path that does not exist gives an empty result (:func:`port_tree` checks first).
    """
    root_real = Path(os.path.realpath(root))
    found = SourceFiles([], [], [])

    def outside(path: Path) -> bool:
        real = Path(os.path.realpath(path))
        return real != root_real and root_real not in real.parents

    def note(path: Path) -> None:
        if outside(path):
            found.notes.append(
                f"skipped {path}: a symlink to {os.path.realpath(path)}, outside {root}"
            )

    if not root.is_dir():
        if root.is_symlink():
            note(root)
        elif root.is_file():
            found.files.append(root)
        return found
    for folder, dirs, names in os.walk(root):
        here = Path(folder)
        for name in sorted(dirs):
            if (here / name).is_symlink():
                note(here / name)
            elif name.startswith(".") and name not in SOURCE_HIDDEN_FOLDERS:
                found.hidden.append((here / name).relative_to(root).as_posix())
        dirs[:] = sorted(
            d
            for d in dirs
            if (not d.startswith(".") or d in SOURCE_HIDDEN_FOLDERS) and d != "__pycache__"
        )
        for name in sorted(names):
            path = here / name
            if not name.endswith(".py"):
                continue
            if path.is_symlink():
                note(path)
            elif path.is_file():
                found.files.append(path)
    found.files.sort()
    found.hidden.sort()
    return found


class PortInputError(ValueError):
    """A file of the tree that the port cannot read (not UTF-8, or not valid Python).

    Attributes:
        kind (str): ``UnicodeDecodeError`` or ``SyntaxError``, for the ``error:`` line.
    """

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


def _read(path: Path, rel: str) -> PortedFile:
    data = path.read_bytes()
    bom = data.startswith(b"\xef\xbb\xbf")
    try:
        text = data[3 if bom else 0 :].decode("utf-8")
    except UnicodeDecodeError as err:
        raise PortInputError(
            "UnicodeDecodeError",
            f"{rel}: not UTF-8 text (byte 0x{data[err.start]:02x} at offset {err.start}); "
            f"convert it to UTF-8 and run again",
        ) from None
    try:
        new, uses = port_source(text, rel)
    except SyntaxError as err:
        raise PortInputError("SyntaxError", f"{rel}:{err.lineno}: {err.msg}") from None
    return PortedFile(path, rel, text, new, uses, bom)


def port_tree(root: Path) -> tuple[list[PortedFile], SourceFiles]:
    """Read and port every file of the tree in memory (nothing is written).

    Args:
        root: A folder or a ``.py`` file.

    Returns:
        tuple: The files, and what :func:`find_python_files` found (notes, hidden folders).

    Raises:
        FileNotFoundError: ``root`` does not exist.
        PortInputError: A file is not UTF-8 or does not parse.
        OSError: A file cannot be read (e.g. permission denied): the error names it.
    """
    if not root.exists():
        raise FileNotFoundError(f"no such file or directory: {root}")
    found = find_python_files(root)
    base = root if root.is_dir() else root.parent
    files = [_read(path, path.relative_to(base).as_posix()) for path in found.files]
    return files, found


def _encoded(ported: PortedFile, text: str) -> bytes:
    return (b"\xef\xbb\xbf" if ported.bom else b"") + text.encode("utf-8")


# ----------------------------------------------------------------------------- what is missing


def _stand_in_reason(obj: object) -> str | None:
    """What to use instead, when ``obj`` is a stand-in of :mod:`mmpar.ops` (raises when used).

    Decided by looking at the object, not at a list (ops keep moving from stand-ins to real
    kernels): a function or constructor whose code is the stand-in factory's is one; calling it
    (it raises at once, before using any argument) gives its own "instead" text.
    """
    try:
        from mmpar.ops import _unsupported
    except ImportError:  # no stand-ins left
        return None
    target = getattr(obj, "__init__", None) if isinstance(obj, type) else obj
    code = getattr(target, "__code__", None)
    if code is None or os.path.realpath(code.co_filename) != os.path.realpath(
        _unsupported.__file__
    ):
        return None
    try:
        obj()  # type: ignore[operator]
    except _unsupported.UnsupportedOpError as err:
        instead = str(err).partition("; instead: ")[2].rstrip(".")
        return f"a stand-in that raises UnsupportedOpError when used; instead: {instead}"
    except Exception:  # noqa: BLE001 - not a stand-in after all: treat it as provided
        return None
    return None


_NO_MODULE = object()


def _submodule(obj: object, part: str) -> object:
    """``obj.part`` as a module when ``obj`` is a package that has one; else ``_NO_MODULE``.

    Raises:
        ModuleNotFoundError: The submodule exists but needs a package that is not installed.
    """
    if not (isinstance(obj, types.ModuleType) and hasattr(obj, "__path__")):
        return _NO_MODULE
    name = f"{obj.__name__}.{part}"
    if importlib.util.find_spec(name) is None:
        return _NO_MODULE
    return importlib.import_module(name)


def _lookup(dotted: str) -> tuple[bool, str]:
    """Whether mmpar provides ``mmcv.<...>`` at ``mmpar.<...>``, and what to use if not.

    A module path resolves as Python's import does: ``mmcv.ops.nms.batched_nms`` is the
    function in the module ``mmpar.ops.nms``, although the package ``mmpar.ops`` also has a
    function called ``nms``. The last name is an attribute first (``from mmcv.ops import nms``
    is the function), then a submodule.
    """
    parts = dotted.split(".")[1:]
    obj: object = importlib.import_module("mmpar")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        try:
            found = _NO_MODULE if last else _submodule(obj, part)
            if found is _NO_MODULE:
                try:
                    found = getattr(obj, part)
                except AttributeError:
                    found = _submodule(obj, part)
        except NotProvidedError as err:
            return False, err.reason
        except ModuleNotFoundError as err:
            where = f"{getattr(obj, '__name__', 'mmpar')}.{part}"
            return False, f"mmpar's {where} needs {err.name}, which is not installed"
        if found is _NO_MODULE:
            return False, MODULES_NOT_PROVIDED.get(part, "") if i == 0 else ""
        reason = _stand_in_reason(found)
        if reason is not None:
            return False, reason
        obj = found
    return True, ""


def unprovided_names(files: Sequence[PortedFile]) -> list[str]:
    """One line per use of an mmcv name that mmpar does not provide.

    Args:
        files: The ported files (their ``uses``).

    Returns:
        list[str]: ``file:line: mmcv.X.Y is not provided by mmpar (what to use)``.
    """
    cache: dict[str, tuple[bool, str]] = {}
    lines = []
    for ported in files:
        for line, name in ported.uses:
            if name not in cache:
                cache[name] = _lookup(name)
            ok, reason = cache[name]
            if not ok:
                why = f" ({reason})" if reason else ""
                lines.append(f"{ported.rel}:{line}: {name} is not provided by mmpar{why}")
    return lines


# ----------------------------------------------------------------------------- command line


def _diff(ported: PortedFile) -> Iterator[str]:
    """The file's change as a unified diff that ``git apply -p1`` takes in the tree's folder."""
    lines = difflib.unified_diff(
        ported.old.splitlines(keepends=True),
        ported.new.splitlines(keepends=True),
        f"a/{ported.rel}",
        f"b/{ported.rel}",
    )
    for line in lines:
        yield line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """Parse the command line."""
    parser = argparse.ArgumentParser(
        prog="port_mmcv",
        description="Rewrite an mmcv 1.x source tree to import mmpar (every .py file under it).",
    )
    parser.add_argument("path", help="the project's folder (or one .py file)")
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="print the changes as a unified diff (git apply -p1 in the folder); write nothing",
    )
    parser.add_argument(
        "--fix",
        action="store_true",
        help="also rewrite code that numpy 2 no longer runs (np.float, np.float_, np.product, "
        "...) with ruff's safe fixes (needs ruff: pip install 'mmpar[port]')",
    )
    return parser.parse_args(argv)


def _numpy_report(files: list[PortedFile], fix: bool) -> tuple[list[str], str]:
    """Find (and with ``fix`` rewrite, in memory) code numpy 2 no longer runs.

    Returns:
        tuple: One line per finding left, and the summary's sentence about it.

    Raises:
        RuntimeError: ``fix`` without ruff installed, or ruff failed.
    """
    ruff = port_numpy.ruff_binary()
    if ruff is None:
        if fix:
            raise RuntimeError(f"--fix needs ruff: {port_numpy.MISSING_RUFF}")
        return [], f"numpy 2 check skipped: {port_numpy.MISSING_RUFF}"
    names = {f.path: f.rel for f in files}
    found = port_numpy.findings(ruff, [f.path for f in files], names)
    fixed = 0
    if fix and found:
        with_findings = {name for name, _, _ in found}
        left = [item for item in found if item[0] not in with_findings]
        for ported in files:
            if ported.rel in with_findings:
                ported.new = port_numpy.fix_source(ruff, ported.new, ported.rel)
                left += port_numpy.findings_in_source(ruff, ported.new, ported.rel)
        fixed, found = len(found) - len(left), sorted(left)
    lines = [
        f"{name}:{line}: numpy 2 does not run this: {message}" for name, line, message in found
    ]
    note = f"fixed {fixed} numpy 2 findings, " if fix else ""
    hint = " (--fix rewrites those ruff can)" if found and not fix else ""
    return lines, f"{note}{len(found)} numpy 2 findings left{hint}"


def _hidden_note(hidden: list[str]) -> list[str]:
    if not hidden:
        return []
    shown = ", ".join(hidden[:10]) + (
        f", ... ({len(hidden) - 10} more)" if len(hidden) > 10 else ""
    )
    return [f"port_mmcv: left out {len(hidden)} hidden folders (not project source): {shown}"]


def main(argv: Sequence[str] | None = None) -> int:
    """Port the tree; see the module docstring.

    Returns:
        int: 0 when done (also with names or numpy findings reported), 2 on bad input (a path
        that does not exist, a file that cannot be read or is not UTF-8 or Python, a folder that
        cannot be written, a full disk, ``--fix`` without ruff): one ``error:`` line, and the
        tree as it was.
    """
    args = parse_args(argv)
    root = Path(args.path)
    try:
        files, found = port_tree(root)
        numpy_lines, numpy_note = _numpy_report(files, args.fix)
        changed = [f for f in files if f.changed]
        if args.dry_run:
            for ported in changed:
                sys.stdout.writelines(_diff(ported))
        else:
            write_all(
                [Write(f.path, f.rel, _encoded(f, f.new), _encoded(f, f.old)) for f in changed]
            )
    except PortInputError as err:
        print(f"error: {err.kind}: {err}", file=sys.stderr)
        return 2
    except (OSError, RuntimeError) as err:
        kind = "OSError" if isinstance(err, StagedWriteError) else type(err).__name__
        print(f"error: {kind}: {err}", file=sys.stderr)
        return 2
    report = [*found.notes, *unprovided_names(files), *numpy_lines, *_hidden_note(found.hidden)]
    for line in report:
        print(line, file=sys.stderr)
    verb = "would rewrite" if args.dry_run else "rewrote"
    print(
        f"port_mmcv: {verb} {len(changed)} of {len(files)} Python files under {root}; {numpy_note}",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
