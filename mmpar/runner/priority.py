"""Hook priorities (same names and values as mmcv 1.x)."""

from __future__ import annotations

from enum import Enum
from typing import Union


class Priority(Enum):
    """Hook priority levels; a lower value runs earlier.

    ==============  =====
    Level           Value
    ==============  =====
    HIGHEST         0
    VERY_HIGH       10
    HIGH            30
    ABOVE_NORMAL    40
    NORMAL          50
    BELOW_NORMAL    60
    LOW             70
    VERY_LOW        90
    LOWEST          100
    ==============  =====
    """

    HIGHEST = 0
    VERY_HIGH = 10
    HIGH = 30
    ABOVE_NORMAL = 40
    NORMAL = 50
    BELOW_NORMAL = 60
    LOW = 70
    VERY_LOW = 90
    LOWEST = 100


def get_priority(priority: Union[int, str, Priority]) -> int:
    """Return the integer value of a priority.

    Args:
        priority: An int in [0, 100], a level name such as ``'NORMAL'`` (any case) or a
            :class:`Priority`.

    Raises:
        ValueError: An int outside [0, 100] or an unknown level name.
        TypeError: Any other kind of value.
    """
    if isinstance(priority, bool):
        raise TypeError("priority must be an int, str or Priority, not a bool")
    if isinstance(priority, int):
        if not 0 <= priority <= 100:
            raise ValueError(f"priority must be between 0 and 100, but got {priority}")
        return priority
    if isinstance(priority, Priority):
        return priority.value
    if isinstance(priority, str):
        try:
            return Priority[priority.upper()].value
        except KeyError:
            names = ", ".join(Priority.__members__)
            raise ValueError(f'unknown priority "{priority}"; expected one of {names}') from None
    raise TypeError(f"priority must be an int, str or Priority, but got {type(priority).__name__}")
