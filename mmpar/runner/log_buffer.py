"""LogBuffer: running history of logged scalars, averaged by the logger hooks (mmcv 1.x API)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import numpy as np


class LogBuffer:
    """Collect scalar values per iteration and average them over the last ``n`` updates.

    Attributes:
        val_history: ``name -> list`` of values, one per :meth:`update`.
        n_history: ``name -> list`` of counts (weights), one per :meth:`update`.
        output: Averaged values written by :meth:`average`, read by logger hooks.
        ready: Whether :meth:`average` has filled ``output`` since the last :meth:`clear_output`.
    """

    def __init__(self) -> None:
        self.val_history: OrderedDict[str, list] = OrderedDict()
        self.n_history: OrderedDict[str, list] = OrderedDict()
        self.output: OrderedDict[str, Any] = OrderedDict()
        self.ready = False

    def clear(self) -> None:
        """Drop all history and output."""
        self.val_history.clear()
        self.n_history.clear()
        self.clear_output()

    def clear_output(self) -> None:
        """Drop the averaged output (history is kept)."""
        self.output.clear()
        self.ready = False

    def update(self, vars: dict, count: int = 1) -> None:
        """Append one value per key, each weighted by ``count`` (e.g. the batch size).

        Args:
            vars: ``name -> scalar`` (python number, 0-d tensor or numpy scalar).
            count: Weight of these values in the average.

        Raises:
            TypeError: ``vars`` is not a dict.
        """
        if not isinstance(vars, dict):
            raise TypeError(
                f"LogBuffer.update expects a dict of scalars, got {type(vars).__name__}"
            )
        for key, var in vars.items():
            if hasattr(var, "item"):  # tensors, numpy scalars
                var = var.item()
            self.val_history.setdefault(key, []).append(var)
            self.n_history.setdefault(key, []).append(count)

    def average(self, n: int = 0) -> None:
        """Average the last ``n`` values of every key (all of them when ``n <= 0``) into output.

        The average is weighted by the counts given to :meth:`update`.
        """
        if not isinstance(n, int):
            raise TypeError(f"n must be an int, got {type(n).__name__}")
        for key in self.val_history:
            values = np.array(self.val_history[key][-n:] if n > 0 else self.val_history[key])
            nums = np.array(self.n_history[key][-n:] if n > 0 else self.n_history[key])
            self.output[key] = float(np.sum(values * nums) / np.sum(nums))
        self.ready = True
