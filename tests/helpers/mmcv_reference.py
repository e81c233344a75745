"""Read the reference outputs of mmcv-full's compiled kernels (scripts/mmcv_reference/)."""

from __future__ import annotations

from pathlib import Path

import torch

DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "mmcv_reference"


def reference_cases(family: str) -> list[str]:
    """Return the names of the stored cases of one op family, sorted.

    Raises:
        FileNotFoundError: When the family has no stored data (regenerate it: see
            scripts/mmcv_reference/__init__.py).
    """
    folder = DATA_DIR / family
    cases = sorted(path.stem for path in folder.glob("*.pt"))
    if not cases:
        raise FileNotFoundError(f"no mmcv-full reference data in {folder}")
    return cases


def load_reference(family: str, case: str) -> dict[str, torch.Tensor]:
    """Load one stored case: the dict of tensors written by ``scripts.mmcv_reference.save_case``."""
    return torch.load(DATA_DIR / family / f"{case}.pt", weights_only=True)
