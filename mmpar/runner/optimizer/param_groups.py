"""Reading one value of every param group of an optimizer (or a dict of optimizers)."""

from __future__ import annotations

from typing import Any, Callable, Union

from torch.optim import Optimizer


def group_lr(group: dict) -> float:
    """Return a param group's learning rate."""
    return group["lr"]


def group_momentum_or_zero(group: dict) -> float:
    """Return a param group's momentum (or Adam's ``betas[0]``); 0 when it has neither."""
    if "momentum" in group:
        return group["momentum"]
    if "betas" in group:
        return group["betas"][0]
    return 0


def param_group_values(
    optimizer: Union[Optimizer, dict, None], fn: Callable[[dict], Any], what: str
) -> Union[list, dict]:
    """Return ``fn(group)`` for every param group, as the runner's ``current_lr()`` does.

    Args:
        optimizer: An optimizer, or a dict of optimizers by name.
        fn: Reads the value from one param group.
        what: The value's name, for the error message.

    Returns:
        A list with one value per param group, or a dict of such lists by optimizer name.

    Raises:
        RuntimeError: ``optimizer`` is None (the runner has no optimizer).
    """
    if optimizer is None:
        raise RuntimeError(f"{what} is not applicable because the runner has no optimizer")
    if isinstance(optimizer, Optimizer):
        return [fn(group) for group in optimizer.param_groups]
    return {name: [fn(group) for group in optim.param_groups] for name, optim in optimizer.items()}
