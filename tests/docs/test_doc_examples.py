"""Every example of README.md and docs/*.md runs as written (see markdown_blocks for markers).

The pages run two at a time, each in its own scratch copy of the checkout; a page's blocks run
in order, because later examples use what earlier ones wrote (a trained ``latest.pth``).
Blocks marked ``<!-- Not run in CI: ... -->`` are checked statically instead.
"""

from __future__ import annotations

import re
import sys
import warnings
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))  # the sibling helper modules (importlib import mode)
from markdown_blocks import REPO, doc_pages, page_blocks  # noqa: E402
from page_runner import PageOutcome, run_page  # noqa: E402
from static_checks import check_block  # noqa: E402

PAGES = [str(path.relative_to(REPO)) for path in doc_pages()]
PARALLEL_PAGES = 2
OUTPUT_TAIL = 4000  # characters of a failing block's output shown


def _selected_pages(session: pytest.Session) -> list[str]:
    return [
        item.callspec.params["page"]
        for item in session.items
        if item.originalname == "test_page_examples_run" and hasattr(item, "callspec")
    ]


@pytest.fixture(scope="module")
def page_runs(request, tmp_path_factory) -> dict[str, Future]:
    """Start every selected page's run, two at a time; a test waits for its own page."""
    pool = ThreadPoolExecutor(PARALLEL_PAGES, thread_name_prefix="docs")
    futures = {}
    for page in _selected_pages(request.session):
        scratch = tmp_path_factory.mktemp(Path(page).stem)
        futures[page] = pool.submit(run_page, page, page_blocks(REPO / page), scratch)
    yield futures
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.parametrize("page", PAGES)
def test_page_examples_run(page, page_runs):
    outcome: PageOutcome = page_runs[page].result()
    for where in outcome.reruns:
        message = f"{where}: ran twice, the first run hit gloo's abort at process exit"
        warnings.warn(message, stacklevel=1)
    failed = outcome.failure
    if failed is not None:
        pytest.fail(
            f"{failed.block.where}: the {failed.block.lang} example exited with "
            f"{failed.returncode} after {failed.seconds:.1f} s.\n--- code ---\n{failed.script}"
            f"--- output (tail) ---\n{failed.output[-OUTPUT_TAIL:]}",
            pytrace=False,
        )
    assert not outcome.stray_files, (
        f"{page}: the examples wrote files into the checkout outside work_dirs/ and data/ "
        f"(a user would get untracked files): {outcome.stray_files}"
    )
    runnable = [b for b in page_blocks(REPO / page) if b.runs]
    assert len(outcome.blocks) == len(runnable)


@pytest.mark.parametrize("page", PAGES)
def test_blocks_not_run_are_valid(page):
    blocks = page_blocks(REPO / page)
    problems = [p for block in blocks if not block.runs for p in check_block(block, blocks)]
    assert not problems, "\n".join(problems)


LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target>[^)\s]+)\)")


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors of a page: lower case, punctuation dropped, spaces to '-'."""
    anchors = set()
    in_fence = False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", PAGES)
def test_links_resolve(page):
    """Relative links point into the repository, to files and headings that exist."""
    source = REPO / page
    text = source.read_text(encoding="utf-8")
    problems = []
    for match in LINK.finditer(text):
        target = match["target"]
        if re.match(r"^[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        file_part, _, anchor = target.partition("#")
        path = (source.parent / file_part).resolve() if file_part else source
        if not path.is_relative_to(REPO):
            problems.append(f"{target}: outside the repository (users do not have it)")
        elif not path.exists():
            problems.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md":
            if anchor not in _anchors(path.read_text(encoding="utf-8")):
                problems.append(f"{target}: {path.name} has no heading #{anchor}")
    assert not problems, f"{page}: broken links:\n" + "\n".join(problems)
