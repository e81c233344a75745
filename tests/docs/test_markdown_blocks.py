"""The docs-test harness itself: block extraction, markers, rewrites, static checks, page runs."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))  # importlib import mode
from markdown_blocks import (  # noqa: E402
    parse_blocks,
    python_source,
    shell_commands,
    with_one_epoch,
)
from page_runner import run_page  # noqa: E402
from static_checks import check_block, config_key_problem  # noqa: E402

PAGE = """# A page

Intro.

```bash
echo one
```

<!-- Not run in CI: needs two hosts. -->

```bash
torchrun --nnodes=2 tools/train.py configs/digits_lenet.py --launcher pytorch
```

<!-- In CI this runs for one epoch. -->

```bash
python tools/train.py configs/digits_lenet.py
```

```python
x = 1
```

<!-- Continues the block above. -->

```python
print(x + 1)
```

- a list item:

  ```text
  indented output
  ```
"""


def test_blocks_and_markers_are_parsed():
    blocks = parse_blocks(PAGE, "page.md")
    assert [(b.line, b.lang) for b in blocks] == [
        (5, "bash"),
        (11, "bash"),
        (17, "bash"),
        (21, "python"),
        (27, "python"),
        (33, "text"),
    ]
    assert [b.skip_reason for b in blocks][:3] == [None, "needs two hosts", None]
    assert [b.one_epoch for b in blocks] == [False, False, True, False, False, False]
    assert [b.continues for b in blocks] == [False] * 4 + [True, False]
    assert [b.runs for b in blocks] == [True, False, True, True, True, False]
    assert blocks[5].code == "indented output\n"
    assert python_source(blocks, blocks[4]) == "x = 1\nprint(x + 1)\n"


@pytest.mark.parametrize(
    "text, message",
    [
        ("```bash\necho\n", "never closed"),
        ("<!-- Not run here: GPU. -->\n\n```bash\necho\n```\n", "looks like a docs-test marker"),
        ("*In CI this runs for one epoch.*\n\n```bash\necho\n```\n", "are HTML comments"),
        ("<!-- Continues the block above. -->\n\n```python\nx\n```\n", "no python block above"),
    ],
)
def test_malformed_pages_are_errors(text, message):
    with pytest.raises(ValueError, match=message):
        blocks = parse_blocks(text, "page.md")
        python_source(blocks, blocks[0])


@pytest.mark.parametrize(
    "script, expected",
    [
        (
            "python tools/train.py configs/digits_lenet.py\n",
            "python tools/train.py configs/digits_lenet.py --cfg-options runner.max_epochs=1\n",
        ),
        (  # joins the existing list: a second --cfg-options would replace the first
            "python tools/train.py c.py --cfg-options optimizer.lr=0.1 --seed 1\n",
            "python tools/train.py c.py --cfg-options runner.max_epochs=1 optimizer.lr=0.1 "
            "--seed 1\n",
        ),
        (
            "python tools/train.py c.py --cfg-options runner.max_epochs=30 optimizer.lr=0.1\n",
            "python tools/train.py c.py --cfg-options runner.max_epochs=1 optimizer.lr=0.1\n",
        ),
        (
            "bash scripts/demo.sh && echo done  # the demo\n",
            "bash scripts/demo.sh --cfg-options runner.max_epochs=1 && echo done  # the demo\n",
        ),
        (
            "bash tools/dist_train.sh configs/digits_lenet.py 2 \\\n    --work-dir w\n",
            "bash tools/dist_train.sh configs/digits_lenet.py 2      --work-dir w "
            "--cfg-options runner.max_epochs=1\n",
        ),
    ],
)
def test_one_epoch_rewrite(script, expected):
    assert with_one_epoch(script) == expected


def test_one_epoch_marker_without_training_is_an_error():
    with pytest.raises(ValueError, match="runs no training command"):
        with_one_epoch("python tools/test.py c.py ckpt.pth\n", "page.md:3")


def test_shell_commands_split_and_skip_comments_and_heredocs():
    script = (
        "mkdir -p w && cd w  # make it\n"
        "cat > a.py <<'EOF'\n"
        "x = 'tools/missing.py'\n"
        "EOF\n"
        "FOO=1 python tools/train.py c.py | tee log; echo end\n"
    )
    assert shell_commands(script) == [
        ["mkdir", "-p", "w"],
        ["cd", "w"],
        ["cat"],
        ["FOO=1", "python", "tools/train.py", "c.py"],
        ["tee", "log"],
        ["echo", "end"],
    ]


def _marked(code: str, lang: str = "bash"):
    (block,) = parse_blocks(f"<!-- Not run in CI: a test. -->\n\n```{lang}\n{code}```\n", "p.md")
    return check_block(block, [block])


def test_static_checks_accept_a_correct_block():
    code = (
        "NNODES=2 bash tools/dist_train.sh configs/digits_lenet.py 8 --seed 1 "
        "--cfg-options runner.max_epochs=2 data.samples_per_gpu=4\n"
        "torchrun --nnodes=2 --node_rank=0 tools/train.py configs/cifar10_resnet.py "
        "--launcher pytorch --cfg-options data.train.download=True compile.backend=eager\n"
    )
    assert _marked(code) == []


@pytest.mark.parametrize(
    "code, problem",
    [
        ("python tools/train.py configs/nope.py\n", "names configs/nope.py"),
        ("python tools/train.py configs/digits_lenet.py --epochs 3\n", "no flag --epochs"),
        ("torchrun --nproc-per-gpu=2 tools/train.py configs/digits_lenet.py\n", "torchrun has"),
        (
            "python tools/test.py configs/digits_lenet.py x.pth --cfg-options runner.max_epoch=1\n",
            "has no key runner.max_epoch",
        ),
        ("bash tools/slurm_train.sh p j configs/digits_lenet.py w --resume\n", "no flag --resume"),
        ("echo 'unclosed\n", "bash syntax error"),
    ],
)
def test_static_checks_find_problems(code, problem):
    problems = _marked(code)
    assert len(problems) == 1 and problem in problems[0], problems


def test_static_checks_of_python_and_data_blocks():
    assert "python syntax error" in _marked("def f(:\n", "python")[0]
    assert "names configs/gone.py" in _marked("init_model('configs/gone.py')\n", "python")[0]
    assert "toml does not parse" in _marked("[a\n", "toml")[0]
    assert "language 'sh'" in _marked("echo\n", "sh")[0]


def test_config_keys_against_the_config_and_registries():
    assert config_key_problem("configs/digits_lenet.py", "optimizer.lr") is None
    assert config_key_problem("configs/digits_lenet.py", "log_config.hooks.0.type") is None
    assert config_key_problem("configs/digits_lenet.py", "compile") is None  # cfg.get('compile')
    # a new argument of a registered class: CIFAR10(download=...), EpochBasedRunner(max_iters=)
    assert config_key_problem("configs/cifar10_resnet.py", "data.train.download") is None
    assert config_key_problem("configs/digits_lenet.py", "runner.max_iters") is None
    assert "has no key data.train.downlaod" in config_key_problem(
        "configs/cifar10_resnet.py", "data.train.downlaod"
    )
    assert "has no key log_config.hooks.5" in config_key_problem(
        "configs/digits_lenet.py", "log_config.hooks.5.type"
    )


def test_a_page_runs_in_order_in_its_own_checkout(tmp_path):
    page = (
        "```bash\nmkdir -p work_dirs/x && echo 41 > work_dirs/x/n\n```\n\n"
        "```python\nprint(int(open('work_dirs/x/n').read()) + 1)\n```\n\n"
        "```bash\necho stray > stray.txt && false\n```\n\n"
        "```bash\necho never\n```\n"
    )
    outcome = run_page("page.md", parse_blocks(page, "page.md"), tmp_path)
    assert [b.returncode for b in outcome.blocks] == [0, 0, 1]  # stops at the failure
    assert outcome.blocks[1].output == "42\n"
    assert outcome.failure is outcome.blocks[2]
    assert outcome.stray_files == ["stray.txt"]
    assert (tmp_path / "checkout" / "configs" / "digits_lenet.py").is_file()
    assert not (tmp_path / "checkout" / "mmpar").exists()  # imported from the tree under test


def test_a_block_that_would_start_the_suite_is_refused(tmp_path):
    outcome = run_page("p.md", parse_blocks("```bash\nbash scripts/test.sh\n```\n", "p"), tmp_path)
    assert outcome.failure is not None and "mark it" in outcome.failure.output
