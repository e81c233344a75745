"""Reference outputs of mmcv-full 1.7.2's compiled CPU kernels, for tests/test_ops.

Run outside CI, in a Python where ``import mmcv.ops`` is a real CPU build of mmcv-full 1.7.2
(how to build one: docs/migrating_from_mmcv.md, "Reference data"). One module per op family
(``scripts/mmcv_reference/<family>.py``) makes fixed-seed inputs, runs mmcv's ops on them and
stores inputs, outputs and gradients with :func:`save_case`; run one as
``python -m scripts.mmcv_reference.<family>`` from the repository root. The files land in
``tests/data/mmcv_reference/<family>/<case>.pt``, where ``tests/helpers/mmcv_reference.py``
reads them back.
"""

from __future__ import annotations

from pathlib import Path

import torch

DATA_DIR = Path(__file__).resolve().parents[2] / "tests" / "data" / "mmcv_reference"

__all__ = ["DATA_DIR", "save_case"]


def save_case(family: str, case: str, tensors: dict[str, torch.Tensor]) -> Path:
    """Store one reference case: a flat dict of CPU tensors (inputs, outputs, gradients).

    Args:
        family: The op family, e.g. ``"nms"``; names the folder.
        case: The case's name within the family; names the file.
        tensors: What to store. Tensors only, so the tests can load it with ``weights_only=True``.

    Returns:
        The path written.
    """
    bad = [key for key, value in tensors.items() if not isinstance(value, torch.Tensor)]
    if bad:
        raise TypeError(f"save_case({family!r}, {case!r}): not tensors: {bad}")
    path = DATA_DIR / family / f"{case}.pt"
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({key: value.detach().cpu().contiguous() for key, value in tensors.items()}, path)
    return path
