"""Which mmcv names of a source tree work in the zero-edit mode: the port report's referee.

    python -m mmpar.as_mmcv try_mmcv_names.py TREE OUT_JSON

Independently of the port tool, every ``.py`` file under TREE (hidden folders included) is read
with :mod:`ast`; each mmcv import statement (``import mmcv.x``, ``from mmcv.x import a``) and
each attribute path from a plain ``import mmcv`` (``mmcv.runner.get_dist_info``) is executed in
this process, where ``mmcv`` is served by mmpar. A name does not work when its import or lookup
fails, or when it is an op of ``mmpar.ops`` that raises ``NotImplementedError`` as soon as it is
called (a stand-in for a compiled kernel). OUT_JSON gets the sorted list of those names.
"""

import ast
import json
import sys
from pathlib import Path


def _statements(tree):
    """``(dotted name, code that gets it)`` for every mmcv name a module uses."""
    found = []
    plain_mmcv = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "mmcv" or alias.name.startswith("mmcv."):
                    found.append((alias.name, f"import {alias.name}"))
                    plain_mmcv |= alias.asname is None
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module == "mmcv" or node.module.startswith("mmcv."):
                for alias in node.names:
                    if alias.name != "*":
                        code = f"from {node.module} import {alias.name} as _obj"
                        found.append((f"{node.module}.{alias.name}", code))
    if plain_mmcv:
        for node in ast.walk(tree):
            chain = []
            while isinstance(node, ast.Attribute):
                chain.append(node.attr)
                node = node.value
            if chain and isinstance(node, ast.Name) and node.id == "mmcv":
                dotted = ".".join(["mmcv", *reversed(chain)])
                found.append((dotted, f"import mmcv\n_obj = {dotted}"))
    return found


def _works(code):
    namespace = {}
    try:
        exec(code, namespace)
    except (ImportError, AttributeError):
        return False
    obj = namespace.get("_obj")
    if callable(obj) and getattr(obj, "__module__", "").startswith("mmpar.ops"):
        try:
            obj()
        except NotImplementedError:
            return False
        except Exception:  # a real op refusing to run without arguments
            return True
    return True


def main(root, out):
    statements = {}
    for path in sorted(Path(root).rglob("*.py")):
        for name, code in _statements(ast.parse(path.read_bytes())):
            statements.setdefault(name, code)
    failing = sorted(name for name, code in statements.items() if not _works(code))
    Path(out).write_text(json.dumps(failing))


if __name__ == "__main__":
    main(*sys.argv[1:3])
