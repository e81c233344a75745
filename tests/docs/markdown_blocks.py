"""The fenced code blocks of README.md and docs/*.md, their markers, and how to run them.

A page's ``bash`` and ``python`` blocks are examples: the docs test runs them in order, in a scratch
copy of the checkout. An HTML comment line directly above a block (blank lines allowed) changes
that; a reader of the rendered page does not see it (what a reader must know, e.g. that an
example needs GPUs or the network, the page says in words):

- ``<!-- Not run in CI: <why>. -->`` -- the block is not run (it needs several hosts, a GPU, a
  download, or is a benchmark); it is still checked statically (see :mod:`static_checks`).
- ``<!-- In CI this runs for one epoch. -->`` -- the docs test adds ``runner.max_epochs=1`` to the
  block's training commands, so the page's long trainings stay fast.
- ``<!-- Continues the block above. -->`` -- a python block that uses the names of the page's
  previous python block: that block's code runs first, in the same fresh interpreter.

Other languages are not run: ``text`` (output, transcripts, layouts), ``toml`` and ``yaml`` (their
syntax is checked).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

RUNNABLE_LANGUAGES = ("bash", "python")
DATA_LANGUAGES = ("text", "toml", "yaml")

FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>\S*)\s*$")
COMMENT = re.compile(r"^<!--\s*(?P<body>.*?)\s*-->$")
SKIP_MARKER = re.compile(r"^Not run in CI: (?P<reason>.+)$")
ONE_EPOCH_MARKER = "In CI this runs for one epoch."
CONTINUES_MARKER = "Continues the block above."
MARKER_STARTS = ("Not run", "In CI", "Continues")
MARKER_FORMS = (
    f"<!-- Not run in CI: <why>. -->, <!-- {ONE_EPOCH_MARKER} --> or <!-- {CONTINUES_MARKER} -->"
)
ONE_EPOCH_OPTION = "runner.max_epochs=1"
SEPARATORS = (";", "&", "&&", "|", "||")

# Shell wrappers: the Python tool their extra arguments reach, after how many positionals.
WRAPPERS = {
    "tools/dist_train.sh": ("tools/train.py", 2),
    "tools/dist_test.sh": ("tools/test.py", 3),
    "tools/slurm_train.sh": ("tools/train.py", 4),
    "tools/slurm_test.sh": ("tools/test.py", 4),
    "scripts/demo.sh": ("tools/train.py", 0),
}
# mmpar's console scripts (pyproject.toml's [project.scripts]) and the tool each one is.
CONSOLE_SCRIPTS = {
    "mmpar-train": "tools/train.py",
    "mmpar-test": "tools/test.py",
    "mmpar-infer": "tools/infer.py",
    "mmpar-analyze-logs": "tools/analyze_logs.py",
    "mmpar-print-config": "tools/print_config.py",
    "mmpar-port": "tools/port_mmcv.py",
    "mmpar-convert-sharded-checkpoint": "tools/convert_sharded_checkpoint.py",
}
# Commands that train: tools/train.py, the wrappers around it and its console script.
TRAINING_COMMANDS = (
    "tools/train.py",
    *(wrapper for wrapper, (tool, _) in WRAPPERS.items() if tool == "tools/train.py"),
    *(script for script, tool in CONSOLE_SCRIPTS.items() if tool == "tools/train.py"),
)


@dataclass
class Block:
    """One fenced code block of a Markdown page.

    Attributes:
        page: The page, relative to the repository root (``docs/tools.md``).
        line: 1-based line of the opening fence.
        lang: The fence's info string (``bash``, ``python``, ``text``...; ``''`` if none).
        code: The block's text, de-indented, ending with a newline.
        skip_reason: Why the block is not run (``<!-- Not run in CI: ... -->``), else None.
        one_epoch: The block's trainings run for one epoch in CI.
        continues: A python block that continues the page's previous python block.
    """

    page: str
    line: int
    lang: str
    code: str
    skip_reason: str | None = None
    one_epoch: bool = False
    continues: bool = False

    @property
    def where(self) -> str:
        """``page:line`` of the block, for messages."""
        return f"{self.page}:{self.line}"

    @property
    def runs(self) -> bool:
        """Whether the docs test executes this block."""
        return self.lang in RUNNABLE_LANGUAGES and self.skip_reason is None


def doc_pages(root: Path = REPO) -> list[Path]:
    """README.md and every page under docs/, sorted."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def parse_blocks(text: str, page: str) -> list[Block]:
    """Return the fenced code blocks of a Markdown text, with the markers above each.

    Args:
        text: The page's Markdown.
        page: Name of the page, used in ``Block.page`` and in error messages.

    Raises:
        ValueError: A fence is not closed, or a marker line is malformed.
    """
    lines = text.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        indent = len(opening["indent"])
        end = i + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        if end == len(lines):
            raise ValueError(f"{page}:{i + 1}: code fence is never closed")
        body = [_dedent(line, indent) for line in lines[i + 1 : end]]
        block = Block(page=page, line=i + 1, lang=opening["lang"], code="\n".join(body) + "\n")
        _apply_markers(block, lines, i)
        blocks.append(block)
        i = end + 1
    return blocks


def _dedent(line: str, indent: int) -> str:
    """Remove a fence's indent from a line of its block (a top-level fence: nothing)."""
    if not indent:
        return line
    return line[indent:] if line[:indent].isspace() else line.lstrip()


def _apply_markers(block: Block, lines: list[str], fence: int) -> None:
    """Set the block's flags from the marker comments directly above its fence (blank lines skip).

    A marker-like line that is not a marker (a typo, or the old visible ``*In CI ...*`` form)
    is an error rather than silently ignored.
    """
    for line in reversed(lines[:fence]):
        line = line.strip()
        if not line:
            continue
        comment = COMMENT.match(line)
        body = comment["body"] if comment else None
        skip = SKIP_MARKER.match(body) if body else None
        if skip:
            block.skip_reason = skip["reason"].rstrip(".")
        elif body == ONE_EPOCH_MARKER:
            block.one_epoch = True
        elif body == CONTINUES_MARKER:
            block.continues = True
        elif (body or "").startswith(MARKER_STARTS) or _old_visible_marker(line):
            raise ValueError(
                f"{block.page}: {line!r} above line {block.line} looks like a docs-test marker "
                f"but is not one; markers are HTML comments: {MARKER_FORMS}"
            )
        else:
            break


def _old_visible_marker(line: str) -> bool:
    """``*In CI this runs for one epoch.*`` and the like: the markers' old, visible form."""
    return line.startswith("*") and line.lstrip("*").startswith(MARKER_STARTS)


def page_blocks(path: Path, root: Path = REPO) -> list[Block]:
    """The blocks of one page file (see :func:`parse_blocks`)."""
    return parse_blocks(path.read_text(encoding="utf-8"), str(path.relative_to(root)))


def python_source(blocks: list[Block], block: Block) -> str:
    """The code a python block runs: the blocks it continues first, then its own."""
    if not block.continues:
        return block.code
    index = blocks.index(block)
    previous = [b for b in blocks[:index] if b.lang == "python"]
    if not previous:
        raise ValueError(f"{block.where}: {CONTINUES_MARKER!r} but no python block above it")
    return python_source(blocks, previous[-1]) + block.code


def logical_lines(script: str) -> list[str]:
    """The lines of a shell script with backslash continuations joined."""
    return script.replace("\\\n", " ").splitlines()


def shell_commands(script: str) -> list[list[str]]:
    """Split a shell script into simple commands (token lists), comments dropped.

    Commands are separated by newlines and ``;``, ``&&``, ``||``, ``|``, ``&``. Here-document
    bodies are not commands and are left out. Good enough for documentation examples; it is not
    a shell parser.
    """
    commands = []
    lines = iter(logical_lines(script))
    for line in lines:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|<>")
        lexer.whitespace_split = True
        lexer.commenters = "#"
        try:
            tokens = list(lexer)
        except ValueError:  # an unbalanced quote spanning lines (python -c "..."): keep raw
            tokens = line.split()
        heredoc_end = None
        current: list[str] = []
        redirection = None
        for token in tokens:
            if token in SEPARATORS:
                if current:
                    commands.append(current)
                current, redirection = [], None
            elif token and set(token) <= set("<>&|;"):  # a redirection: '>', '>>', '<<'...
                redirection = token
            elif redirection:  # the file or here-doc delimiter, not an argument
                if redirection in ("<<", "<<-"):
                    heredoc_end = token
                redirection = None
            else:
                current.append(token)
        if current:
            commands.append(current)
        if heredoc_end is not None:
            for body_line in lines:
                if body_line.strip() == heredoc_end:
                    break
    return commands


def with_one_epoch(script: str, where: str = "block") -> str:
    """Add ``--cfg-options runner.max_epochs=1`` to every training command of a shell script.

    A command that already passes ``--cfg-options`` gets the option added to that list (a
    second ``--cfg-options`` would replace the first); an existing ``runner.max_epochs`` is
    replaced.

    Raises:
        ValueError: The script has no training command, so the marker is wrong.
    """
    out = []
    changed = False
    for line in logical_lines(script):
        if not any(command in line for command in TRAINING_COMMANDS):
            out.append(line)
            continue
        code, comment = _split_comment(line)
        code = re.sub(r"\s+runner\.max_epochs=\S+", "", code)
        if "--cfg-options" in code:
            code = code.replace("--cfg-options", f"--cfg-options {ONE_EPOCH_OPTION}", 1)
        else:
            tail = re.search(r"\s*(&&|\|\||;|&|\|).*$", code)
            cut = tail.start() if tail else len(code.rstrip())
            code = f"{code[:cut]} --cfg-options {ONE_EPOCH_OPTION}{code[cut:]}"
        out.append(code + comment)
        changed = True
    if not changed:
        raise ValueError(f"{where}: marked {ONE_EPOCH_MARKER!r} but runs no training command")
    return "\n".join(out) + "\n"


def _split_comment(line: str) -> tuple[str, str]:
    """Split ``cmd args  # comment`` into the command and the comment (quotes respected)."""
    quote = None
    for i, char in enumerate(line):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i].rstrip(), "  " + line[i:]
    return line, ""
