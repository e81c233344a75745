"""Helpers of the receptive-field search: candidate dilation rates, padding, JSON output."""

from __future__ import annotations

from mmpar.fileio import dump

__all__ = ["expand_rates", "get_single_padding", "write_to_json"]


def write_to_json(config: dict, filename: str) -> None:
    """Write ``config`` to ``filename`` as JSON."""
    with open(filename, "w", encoding="utf-8") as f:
        dump(config, f, file_format="json")


def _clip(value: float, config: dict) -> int:
    return min(max(int(round(value)), config["mmin"]), config["mmax"])


def expand_rates(dilation: tuple, config: dict) -> list:
    """Candidate (h, w) dilation rates around ``dilation``.

    ``num_branches // 2`` rates scaled by ``1 - exp_rate`` (smallest first), ``dilation``
    itself for an odd ``num_branches``, then as many scaled by ``1 + exp_rate``; each clipped
    to ``[mmin, mmax]``, duplicates removed (first occurrence kept).

    Args:
        dilation: The current ``(dh, dw)``.
        config: Holds ``exp_rate``, ``num_branches``, ``mmin`` and ``mmax``.
    """
    exp_rate, pairs = config["exp_rate"], config["num_branches"] // 2
    small = [tuple(_clip((1 - exp_rate) * d, config) for d in dilation[:2])] * pairs
    large = [tuple(_clip((1 + exp_rate) * d, config) for d in dilation[:2])] * pairs
    middle = [dilation] if config["num_branches"] % 2 else []
    return list(dict.fromkeys(small + middle + large))


def get_single_padding(kernel_size: int, stride: int = 1, dilation: int = 1) -> int:
    """Padding that keeps the output size ``ceil(input / stride)`` along one axis."""
    return ((stride - 1) + dilation * (kernel_size - 1)) // 2
