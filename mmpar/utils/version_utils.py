"""Version strings as comparable tuples, and the git hash of the working directory."""

from __future__ import annotations

import os
import subprocess
import warnings

from packaging.version import InvalidVersion, Version

from .compat_errors import CheckTypeError, CheckValueError

# Pre-releases sort before the release: dev < alpha < beta < rc < final < post.
_PRE_RELEASE = {"a": -3, "b": -2, "rc": -1}
_DEV = -4


class VersionStringError(CheckValueError, InvalidVersion):
    """A version string that is not PEP 440.

    A ValueError, an AssertionError (mmcv with old ``packaging``) and a
    ``packaging.version.InvalidVersion`` (mmcv with current ``packaging``).
    """


def digit_version(version_str: str, length: int = 4) -> tuple[int, ...]:
    """Turn a PEP 440 version string into a tuple of ints that compares like the versions.

    The release part is cut or zero-padded to ``length`` numbers; two more numbers follow:
    ``(-3|-2|-1, n)`` for alpha/beta/rc ``n``, ``(-4, 0)`` for a dev release, ``(1, n)`` for
    post-release ``n`` and ``(0, 0)`` for a final release. So
    ``digit_version('1.10.0rc1') == (1, 10, 0, 0, -1, 1)``.

    Args:
        version_str: The version, e.g. ``torch.__version__``.
        length: How many release numbers to keep.

    Returns:
        The tuple.

    Raises:
        ValueError: ``version_str`` is not a valid version (also an AssertionError, as in
            mmcv, and a ``packaging.version.InvalidVersion``): :class:`VersionStringError`.
        TypeError: ``version_str`` is not a str.
    """
    if not isinstance(version_str, str):
        raise CheckTypeError(
            f"digit_version: version_str must be a str, but got {type(version_str).__name__}"
        )
    try:
        if "parrots" in version_str:
            raise InvalidVersion("parrots versions have no numbers to compare")
        version = Version(version_str)
    except InvalidVersion as err:
        raise VersionStringError(
            f"digit_version: {version_str!r} is not a PEP 440 version such as '1.13.1' or "
            f"'2.1.0rc1' ({err})"
        ) from err
    release = list(version.release[:length])
    release += [0] * (length - len(release))
    if version.is_prerelease:
        if version.pre is None:  # a dev release
            release += [_DEV, 0]
        elif version.pre[0] in _PRE_RELEASE:
            release += [_PRE_RELEASE[version.pre[0]], version.pre[1]]
        else:  # packaging normalizes every spelling to a/b/rc; kept as mmcv does
            warnings.warn(
                f"digit_version: unknown pre-release {version.pre[0]!r} in {version_str!r}; "
                "comparisons with it may be wrong",
                stacklevel=2,
            )
            release += [_DEV, version.pre[1]]
    elif version.is_postrelease:
        release += [1, version.post]
    else:
        release += [0, 0]
    return tuple(release)


def _minimal_ext_cmd(cmd: list[str]) -> bytes:
    """Run ``cmd`` in a minimal C-locale environment and return its stdout (mmcv's helper).

    Raises:
        OSError: The command cannot be run or exits with an error.
    """
    env = {key: os.environ[key] for key in ("SYSTEMROOT", "PATH", "HOME") if key in os.environ}
    env.update(LANGUAGE="C", LANG="C", LC_ALL="C")
    proc = subprocess.run(cmd, capture_output=True, env=env, check=False)
    if proc.returncode != 0:
        raise OSError(f"{cmd[0]} exited with {proc.returncode}")
    return proc.stdout


def get_git_hash(fallback: str = "unknown", digits: int | None = None) -> str:
    """Return the commit hash of ``HEAD`` in the current working directory's git repository.

    Args:
        fallback: Returned when git is not installed or the directory is not in a repository.
        digits: Keep only the first ``digits`` characters; all 40 when None.

    Returns:
        The hash, or ``fallback``.

    Raises:
        TypeError: ``digits`` is neither None nor an int.
    """
    if digits is not None and not isinstance(digits, int):
        raise TypeError(f"get_git_hash: digits must be None or an int, but got {digits!r}")
    try:
        sha = _minimal_ext_cmd(["git", "rev-parse", "HEAD"]).decode("ascii", errors="replace")
    except OSError:
        return fallback
    sha = sha.strip()
    if not sha:
        return fallback
    return sha if digits is None else sha[:digits]


__all__ = ["VersionStringError", "digit_version", "get_git_hash"]
