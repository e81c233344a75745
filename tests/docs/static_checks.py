"""Checks of documentation blocks that are not run: syntax, files, options and config keys.

A block marked ``<!-- Not run in CI: ... -->`` must still be right as far as this machine can tell:
its syntax parses, the repository files it names exist, the flags it gives our tools (and
torchrun) are flags they accept, and the ``--cfg-options`` keys it sets are keys of the named
config, keys mmpar reads (``cfg.get('compile')``), or arguments of the registered class the key
belongs to.
"""

from __future__ import annotations

import ast
import functools
import glob
import inspect
import os
import re
import subprocess
import sys

import tomllib
import yaml
from markdown_blocks import (
    CONSOLE_SCRIPTS,
    DATA_LANGUAGES,
    REPO,
    RUNNABLE_LANGUAGES,
    WRAPPERS,
    Block,
    python_source,
    shell_commands,
)

REPO_DIRS = ("tools/", "configs/", "scripts/", "benchmarks/", "tests/", "docs/", "mmpar/")

TORCHRUN = ("torchrun", "torch.distributed.run")


def check_block(block: Block, blocks: list[Block]) -> list[str]:
    """Problems of one block that is not run (an empty list when it is fine).

    Args:
        block: The block to check.
        blocks: All blocks of its page (for python blocks that continue an earlier one).
    """
    if block.lang not in RUNNABLE_LANGUAGES + DATA_LANGUAGES:
        return [
            f"{block.where}: code block language {block.lang!r} is none of "
            f"{', '.join(RUNNABLE_LANGUAGES + DATA_LANGUAGES)} (use 'text' for output)"
        ]
    if block.lang == "toml":
        return _parse_problem(block, lambda: tomllib.loads(block.code))
    if block.lang == "yaml":
        return _parse_problem(block, lambda: list(yaml.safe_load_all(block.code)))
    if block.lang == "python":
        return _python_problems(block, python_source(blocks, block))
    if block.lang == "bash":
        return _bash_problems(block)
    return []


def _parse_problem(block: Block, parse) -> list[str]:
    try:
        parse()
    except Exception as err:  # the parsers raise their own error types
        return [f"{block.where}: {block.lang} does not parse: {err}"]
    return []


def _python_problems(block: Block, source: str) -> list[str]:
    try:
        tree = ast.parse(source)
    except SyntaxError as err:
        return [f"{block.where}: python syntax error: {err}"]
    strings = [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
    ]
    return [f"{block.where}: {problem}" for problem in _missing_paths(strings)]


def _bash_problems(block: Block) -> list[str]:
    syntax = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True)
    if syntax.returncode != 0:
        return [f"{block.where}: bash syntax error: {syntax.stderr.strip()}"]
    problems = []
    for tokens in shell_commands(block.code):
        problems += _missing_paths(tokens)
        problems += _option_problems(tokens)
    return [f"{block.where}: {problem}" for problem in problems]


def _missing_paths(tokens: list[str]) -> list[str]:
    """Repository paths (``tools/train.py``, ``configs/*.py``) among tokens that do not exist."""
    problems = []
    for token in tokens:
        path = token.split("=", 1)[-1].strip("'\",;()[]")
        path = path[2:] if path.startswith("./") else path
        if not path.startswith(REPO_DIRS) or "<" in path:
            continue
        if not glob.glob(str(REPO / path)):
            problems.append(f"names {path}, which is not in the repository")
    return problems


def _option_problems(tokens: list[str]) -> list[str]:
    """Flags given to our tools or torchrun that they do not accept; unknown config keys."""
    tokens = _drop_assignments(tokens)
    problems = []
    for i, token in enumerate(tokens):
        if token in CONSOLE_SCRIPTS:  # the same flags as the tool in tools/
            args = tokens[i + 1 :]
            problems += _tool_flag_problems(CONSOLE_SCRIPTS[token], args, _config_of(args))
            return problems
        if token in WRAPPERS:
            tool, positionals = WRAPPERS[token]
            args = tokens[i + 1 :]
            problems += _tool_flag_problems(tool, args[positionals:], _config_of(args))
            return problems
        if token.endswith(".py") and token.startswith(("tools/", "benchmarks/")):
            launcher = tokens[:i]
            if any(name in " ".join(launcher) for name in TORCHRUN):
                accepted = _accepted_flags("torchrun")
                problems += _unknown_flags("torchrun", _flags(launcher), accepted)
            args = tokens[i + 1 :]
            problems += _tool_flag_problems(token, args, _config_of(args))
            return problems
    return problems


def _drop_assignments(tokens: list[str]) -> list[str]:
    i = 0
    while i < len(tokens) and re.match(r"^[A-Za-z_]\w*=", tokens[i]):
        i += 1
    return tokens[i:]


def _flags(tokens: list[str]) -> list[str]:
    return [t.split("=", 1)[0] for t in tokens if t.startswith("--") and len(t) > 2]


def _config_of(args: list[str]) -> str | None:
    for arg in args:
        if arg.startswith("configs/") and arg.endswith(".py"):
            return arg
    return None


def _tool_flag_problems(tool: str, args: list[str], config: str | None) -> list[str]:
    if not (REPO / tool).is_file():
        return []  # reported by the path check
    problems = _unknown_flags(tool, _flags(args), _accepted_flags(tool))
    if "--cfg-options" in args and config is not None:
        start = args.index("--cfg-options") + 1
        for pair in args[start:]:
            if pair.startswith("-"):
                break
            key = pair.split("=", 1)[0]
            problem = config_key_problem(config, key)
            if problem:
                problems.append(problem)
    return problems


def _unknown_flags(tool: str, flags: list[str], accepted: frozenset[str]) -> list[str]:
    return [f"{tool} has no flag {flag}" for flag in flags if flag not in accepted]


@functools.cache
def _accepted_flags(tool: str) -> frozenset[str]:
    """The ``--flags`` a tool's ``--help`` lists."""
    if tool == "torchrun":
        command = [sys.executable, "-m", "torch.distributed.run", "--help"]
    else:
        command = [sys.executable, str(REPO / tool), "--help"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    help_text = subprocess.run(
        command, capture_output=True, text=True, cwd=REPO, env=env, timeout=120, check=True
    ).stdout
    return frozenset(re.findall(r"(?<![\w-])(--[A-Za-z][\w-]*)", help_text))


def config_key_problem(config: str, key: str) -> str | None:
    """Why ``--cfg-options KEY=...`` names no key of ``config``, or None when it does.

    A key is fine when the merged config has it, when its first part is a top-level key mmpar
    reads with a default (``cfg.get('compile')``), or when it is a new argument of a dict with
    a registered ``type`` whose class accepts it (``data.train.download``).
    """
    from mmpar import Config

    node = Config.fromfile(str(REPO / config))._cfg_dict.to_dict()
    parts = key.split(".")
    for i, part in enumerate(parts):
        if isinstance(node, (list, tuple)) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
            continue
        if isinstance(node, dict) and part in node:
            node = node[part]
            continue
        if i == 0 and part in optional_top_level_keys():
            return None
        last = i == len(parts) - 1
        if last and isinstance(node, dict) and part in registered_arguments(node.get("type")):
            return None
        return f"--cfg-options {key}: {config} has no key {'.'.join(parts[: i + 1])}"
    return None


@functools.cache
def optional_top_level_keys() -> frozenset[str]:
    """Top-level config keys mmpar reads with a default: ``cfg.get("key")`` in its code."""
    keys = set()
    sources = [*REPO.glob("mmpar/**/*.py"), *REPO.glob("tools/*.py")]
    for source in sources:
        keys.update(re.findall(r"\bcfg\.get\(\s*[\"'](\w+)[\"']", source.read_text()))
    return frozenset(keys)


def registered_arguments(type_name: object) -> frozenset[str]:
    """Argument names of the class registered under ``type_name`` in any mmpar registry."""
    if not isinstance(type_name, str):
        return frozenset()
    from mmpar.datasets.builder import BATCH_SAMPLERS, DATASETS, PIPELINES, SAMPLERS
    from mmpar.models.builder import MODELS
    from mmpar.parallel.registry import MODULE_WRAPPERS
    from mmpar.runner.builder import RUNNERS
    from mmpar.runner.hooks.hook import HOOKS
    from mmpar.runner.optimizer.builder import OPTIMIZERS

    registries = (DATASETS, PIPELINES, SAMPLERS, BATCH_SAMPLERS, MODELS, MODULE_WRAPPERS)
    for registry in (*registries, RUNNERS, HOOKS, OPTIMIZERS):
        cls = registry.get(type_name)
        if cls is not None:
            return frozenset(inspect.signature(cls).parameters)
    return frozenset()
