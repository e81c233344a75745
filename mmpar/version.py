"""mmpar's version, and the mmcv version mmpar stands in for.

Kept in its own module, free of imports beyond the standard library, so packaging reads
``__version__`` without importing torch.

``mmcv_version`` is the mmcv 1.x version that ``mmcv.__version__`` reports in the zero-edit mode
(``python -m mmpar.as_mmcv``) and that the port tool writes where code compared
``mmcv.__version__``. The default, ``1.7.0``, is the newest version every supported project
accepts: mmpose 0.29 and mmaction2 0.24 accept up to 1.7.0 (inclusive), mmdet 2.28 and
mmsegmentation 0.30 up to 1.8.0 (mmseg exclusive), mmcls 0.25 up to 1.9.0, and all of them
1.4.2 or lower as their minimum. mmpar's API is mmcv 1.7.2's, so every feature check those
projects make (``>= 1.3.17``, ``>= 1.4.4``, ``>= 1.6.0``, ...) takes the newer branch. The
environment variable ``MMPAR_MMCV_VERSION`` overrides it (read once, on first use of
``mmcv_version``: a bad value fails there with one clear :class:`MmcvVersionError`, so
``import mmpar`` itself never fails on it and tools can report it as one line).
"""

from __future__ import annotations

import os
import re

__version__ = "0.1.0"
#: mmpar's release numbers as ints, as mmcv's ``version_info`` is for mmcv (e.g. ``(0, 1, 0)``).
version_info: tuple = tuple(int(x) for x in __version__.split(".")[:3])

#: The environment variable that overrides :data:`mmcv_version`.
MMCV_VERSION_ENV = "MMPAR_MMCV_VERSION"
#: The mmcv version reported when :data:`MMCV_VERSION_ENV` is not set.
DEFAULT_MMCV_VERSION = "1.7.0"

# A PEP 440 release: numbers, then optional pre/post/dev parts (``1.7.0``, ``1.6.0rc1``).
_RELEASE = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?")
#: The accepted form of :data:`MMCV_VERSION_ENV`, as error messages state it.
MMCV_VERSION_FORM = "numbers separated by dots, optionally with rcN/aN/bN, .postN or .devN"


class MmcvVersionError(ValueError):
    """``MMPAR_MMCV_VERSION`` is set to something that is not a version number."""


def _mmcv_version() -> str:
    value = os.environ.get(MMCV_VERSION_ENV, "").strip() or DEFAULT_MMCV_VERSION
    if not _RELEASE.fullmatch(value):
        raise MmcvVersionError(
            f"{MMCV_VERSION_ENV}={value!r} is not a version number; set it to the mmcv 1.x "
            f"version to report ({MMCV_VERSION_FORM}), e.g. {MMCV_VERSION_ENV}="
            f"{DEFAULT_MMCV_VERSION}, or unset it"
        )
    return value


_resolved: dict[str, str] = {}


def __getattr__(name: str) -> str:
    """``mmcv_version``: the mmcv version mmpar reports for ``mmcv.__version__``.

    Read from :data:`MMCV_VERSION_ENV` on first use (see the module docstring).

    Raises:
        MmcvVersionError: The variable is set to something that is not a version number.
    """
    if name != "mmcv_version":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name not in _resolved:
        _resolved[name] = _mmcv_version()
    return _resolved[name]


def parse_version_info(version_str: str, length: int = 4) -> tuple:
    """Split a version string into a tuple, as mmcv 1.x's ``mmcv.version.parse_version_info``.

    The release part is padded with zeros (or cut) to ``length`` numbers, followed by the
    pre- or post-release tag and number, or by ``0, 0`` for a final release.

    Args:
        version_str: A PEP 440 version, e.g. ``"1.7.0"`` or ``"2.0.0rc1"``.
        length: How many release numbers to keep.

    Returns:
        tuple: e.g. ``(1, 7, 0, 0, 0, 0)`` or ``(2, 0, 0, 0, 'rc', 1)``.

    Raises:
        packaging.version.InvalidVersion: ``version_str`` is not a PEP 440 version.
    """
    from packaging.version import Version

    version = Version(version_str)
    release = [*version.release[:length], *[0] * (length - len(version.release))]
    if version.pre is not None:
        return (*release, *version.pre)
    if version.post is not None:
        return (*release, "post", version.post)
    return (*release, 0, 0)
