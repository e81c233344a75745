"""Where a checkpoint is read from: a path or a URL scheme (mmcv 1.x's ``CheckpointLoader``).

``CheckpointLoader`` maps filename prefixes to loader functions; the longest registered prefix
that matches a filename wins, and the empty prefix (a local path) matches everything else.
Registered here: local paths, ``http(s)://``, ``torchvision://`` (and ``modelzoo://``),
``open-mmlab://`` / ``openmmlab://``, ``mmcls://``, ``pavi://`` and ``s3://``. Every built-in
loader reads with ``weights_only=True`` unless the caller trusts the file, so a downloaded
checkpoint cannot run code either.

The name → URL tables of the model zoos ship as JSON files in ``mmpar/runner/model_zoo/``
(mmcv's place) and are read when a scheme needs them; ``$MMCV_HOME/open_mmlab.json`` adds to
or overrides the ``open-mmlab://`` table as in mmcv.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import json
import logging
import os
import re
import tempfile
import warnings
from collections import OrderedDict
from pathlib import Path
from typing import Any, Callable, Union

from mmpar.utils.compat_errors import CheckValueError, MessageKeyError
from mmpar.utils.dist import barrier, get_dist_info
from mmpar.utils.misc import import_optional

from .safe_load import load_checkpoint_file, load_url_checkpoint

ENV_MMCV_HOME = "MMCV_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
DEFAULT_CACHE_DIR = "~/.cache"

_ZOO_DIR = Path(__file__).parent.parent / "model_zoo"  # mmcv keeps them in runner/model_zoo
_logger = logging.getLogger("mmpar")

MapLocation = Union[str, Callable, dict, None]


class UnknownModelError(MessageKeyError, ValueError):
    """A model-zoo scheme names a model its table does not have (a KeyError, as in mmcv)."""


class ModelZooFileError(TypeError, AssertionError):
    """A model-zoo JSON file does not hold a ``{name: url}`` mapping."""


def _get_mmcv_home() -> str:
    """The cache directory of mmcv's model zoo, created if missing.

    ``$MMCV_HOME`` if set (even to ``''``), else ``$XDG_CACHE_HOME/mmcv``, else
    ``~/.cache/mmcv``; ``~`` is expanded. As in mmcv, an empty ``MMCV_HOME`` gives ``''`` (the
    current directory) and nothing is created.
    """
    default = os.path.join(os.getenv(ENV_XDG_CACHE_HOME, DEFAULT_CACHE_DIR), "mmcv")
    home = os.path.expanduser(os.getenv(ENV_MMCV_HOME, default))
    if home:
        os.makedirs(home, exist_ok=True)
    return home


def _read_url_table(path: Union[str, Path]) -> dict:
    with open(path, encoding="utf-8") as f:
        table = json.load(f)
    if not isinstance(table, dict):
        raise ModelZooFileError(
            f'"{path}" must hold a JSON object {{"model name": "url", ...}}, '
            f"not a {type(table).__name__}"
        )
    return table


@functools.cache
def _shipped_table(name: str) -> dict:
    return _read_url_table(_ZOO_DIR / name)


def _lookup(table: dict, name: str, scheme: str) -> str:
    if name in table:
        return table[name]
    close = difflib.get_close_matches(name, list(table), n=3, cutoff=0.6)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise UnknownModelError(
        f'"{scheme}{name}": no model named "{name}" in the {scheme} table '
        f"({len(table)} names).{hint}"
    )


def get_torchvision_models() -> dict:
    """Return torchvision's model names → weight URLs, as ``torchvision://`` resolves them.

    Plain names (``'resnet50'``) are the original ImageNet weights mmcv 1.x used (torchvision
    0.12's table); ``'<model>.<weights>'`` (``'resnet50.imagenet1k_v2'``, ``'resnet50.default'``)
    name every weight set of the installed torchvision.
    """
    from torchvision import models

    urls = dict(_shipped_table("torchvision_0.12.json"))
    for model_name in models.list_models():
        try:
            weights = models.get_model_weights(model_name)
        except (ValueError, KeyError):  # a builder without weights
            continue
        key = weights.__name__.replace("_Weights", "").lower()
        if hasattr(weights, "DEFAULT"):
            urls[f"{key}.default"] = weights.DEFAULT.url
        for member in weights:
            urls[f"{key}.{member.name.lower()}"] = member.url
    return urls


def get_external_models() -> dict:
    """Return the ``open-mmlab://`` table: shipped names, updated by ``$MMCV_HOME/open_mmlab.json``.

    Raises:
        ModelZooFileError: The override file does not hold a JSON object (also an
            AssertionError, as in mmcv).
    """
    urls = dict(_shipped_table("open_mmlab.json"))
    override = os.path.join(_get_mmcv_home(), "open_mmlab.json")
    if os.path.exists(override):
        urls.update(_read_url_table(override))
    return urls


def get_mmcls_models() -> dict:
    """Return the ``mmcls://`` table: mmcls model names → checkpoint URLs."""
    return dict(_shipped_table("mmcls.json"))


def get_deprecated_model_names() -> dict:
    """Return deprecated ``open-mmlab://`` names → the names that replace them."""
    return dict(_shipped_table("deprecated.json"))


def _process_mmcls_checkpoint(checkpoint: dict) -> dict:
    """Keep an mmcls classifier's backbone weights, without the ``backbone.`` prefix."""
    state_dict = checkpoint.get("state_dict", checkpoint)
    backbone = OrderedDict(
        (k[len("backbone.") :], v) for k, v in state_dict.items() if k.startswith("backbone.")
    )
    return {"state_dict": backbone}


class CheckpointLoader:
    """Registry of checkpoint loaders by filename prefix (mmcv 1.x API).

    A loader is ``fn(filename, map_location=None)``; it may also accept ``weights_only``, which
    :meth:`load_checkpoint` then passes on (all built-in loaders do). Prefixes are regular
    expressions matched at the start of the filename; the longest one that matches wins.
    """

    _schemes: dict = {}

    @classmethod
    def _register_scheme(
        cls, prefixes: Union[str, list, tuple], loader: Callable, force: bool = False
    ) -> None:
        if isinstance(prefixes, str):
            prefixes = [prefixes]
        elif not isinstance(prefixes, (list, tuple)):
            raise TypeError(
                f"prefixes must be a str or a list/tuple of str, got {type(prefixes).__name__}"
            )
        if not callable(loader):
            raise TypeError(f"the loader must be callable, got {type(loader).__name__}")
        for prefix in prefixes:
            if prefix in cls._schemes and not force:
                raise KeyError(
                    f'"{prefix}" is already registered to {cls._schemes[prefix].__name__}; '
                    "pass force=True to replace it"
                )
            cls._schemes[prefix] = loader
        # Longest (then reverse-alphabetical) first, so the most specific prefix matches.
        cls._schemes = OrderedDict(
            sorted(cls._schemes.items(), key=lambda item: (len(item[0]), item[0]), reverse=True)
        )

    @classmethod
    def register_scheme(
        cls,
        prefixes: Union[str, list, tuple],
        loader: Callable | None = None,
        force: bool = False,
    ) -> Any:
        """Register ``loader`` for filenames starting with ``prefixes``; also a decorator.

        Args:
            prefixes: A prefix (a regular expression, e.g. ``'s3://'``) or several.
            loader: ``fn(filename, map_location=None)``. Omit it to use this as a decorator.
            force: Replace a loader already registered for a prefix.

        Returns:
            The decorator when ``loader`` is None, else None.

        Raises:
            KeyError: A prefix is registered already and ``force`` is False.
        """
        if loader is not None:
            cls._register_scheme(prefixes, loader, force=force)
            return None

        def _register(loader_fn: Callable) -> Callable:
            cls._register_scheme(prefixes, loader_fn, force=force)
            return loader_fn

        return _register

    @classmethod
    def _get_checkpoint_loader(cls, path: str) -> Callable:
        """The loader of the longest registered prefix that matches ``path``."""
        for prefix, loader in cls._schemes.items():
            if re.match(prefix, path) is not None:
                return loader
        raise ValueError(f'no checkpoint loader is registered for "{path}"')

    @classmethod
    def load_checkpoint(
        cls,
        filename: str,
        map_location: MapLocation = None,
        logger: logging.Logger | None = None,
        weights_only: bool = True,
    ) -> Any:
        """Load the checkpoint ``filename`` names with the loader registered for its prefix.

        Args:
            filename: A local path or a URL of a registered scheme.
            map_location: Passed to ``torch.load`` (``'cpu'``, a device, a dict, a callable).
            logger: Where the "load checkpoint from ..." line goes (default: ``mmpar``).
            weights_only: Refuse files that need arbitrary Python objects (passed to loaders
                that accept it).

        Returns:
            The loaded object (usually a dict with ``state_dict``, or a state dict).
        """
        if not isinstance(filename, (str, os.PathLike)):
            raise TypeError(f"filename must be a path or URL string, got {type(filename).__name__}")
        filename = os.fspath(filename)
        loader = cls._get_checkpoint_loader(filename)
        kind = loader.__name__[len("load_from_") :] if loader.__name__.startswith("load_") else ""
        (logger or _logger).info(f"load checkpoint from {kind or loader.__name__} path: {filename}")
        params = inspect.signature(loader).parameters
        takes_flag = "weights_only" in params or any(
            p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()
        )
        if takes_flag:
            return loader(filename, map_location, weights_only=weights_only)
        return loader(filename, map_location)


@CheckpointLoader.register_scheme(prefixes="")
def load_from_local(
    filename: str, map_location: MapLocation = None, weights_only: bool = True
) -> Any:
    """Load a local checkpoint file (``~`` is expanded).

    Raises:
        FileNotFoundError: The file does not exist.
        UnsafeCheckpointError: ``weights_only`` refused a Python object in the file.
        CorruptCheckpointError: The file is not a valid checkpoint.
    """
    return load_checkpoint_file(os.path.expanduser(filename), map_location, weights_only)


@CheckpointLoader.register_scheme(prefixes=("http://", "https://"))
def load_from_http(
    filename: str,
    map_location: MapLocation = None,
    model_dir: str | None = None,
    weights_only: bool = True,
) -> Any:
    """Download ``filename`` into the torch hub cache (``model_dir``) once and load it.

    When distributed, the first process of each node downloads while the others wait at a
    barrier, then they read the cached file.
    """
    rank, world_size = get_dist_info()
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    checkpoint = None
    if local_rank == 0:
        checkpoint = load_url_checkpoint(filename, model_dir, map_location, weights_only)
    if world_size > 1:
        barrier()
    if local_rank != 0:
        checkpoint = load_url_checkpoint(filename, model_dir, map_location, weights_only)
    return checkpoint


@CheckpointLoader.register_scheme(prefixes="pavi://")
def load_from_pavi(
    filename: str, map_location: MapLocation = None, weights_only: bool = True
) -> Any:
    """Download a ``pavi://`` model from PAVI's model cloud and load it.

    Raises:
        ImportError: The ``pavi`` package is not installed.
    """
    if not filename.startswith("pavi://"):
        raise CheckValueError(f'load_from_pavi needs a "pavi://" path, got "{filename}"')
    try:
        from pavi import modelcloud
    except ImportError as err:
        raise ImportError(
            f'loading "{filename}" needs the "pavi" package (pip install pavi), which is '
            "not installed"
        ) from err
    model = modelcloud.get(filename[len("pavi://") :])
    with tempfile.TemporaryDirectory() as tmp_dir:
        local = os.path.join(tmp_dir, model.name)
        model.download(local)
        return load_checkpoint_file(local, map_location, weights_only)


@CheckpointLoader.register_scheme(prefixes=r"(\S+\:)?s3://")
def load_from_ceph(
    filename: str,
    map_location: MapLocation = None,
    backend: str = "petrel",
    weights_only: bool = True,
) -> Any:
    """Load an ``s3://`` (or ``bucket:s3://``) checkpoint through the petrel client.

    Raises:
        ValueError: ``backend`` is neither ``'petrel'`` nor ``'ceph'``.
        ImportError: ``petrel_client`` (the petrel-oss SDK) is not installed.
    """
    if backend not in ("petrel", "ceph"):
        raise ValueError(f"load_from_ceph: backend must be 'petrel' or 'ceph', got {backend!r}")
    if backend == "ceph":
        warnings.warn(
            "the 'ceph' backend is deprecated; use 'petrel'", DeprecationWarning, stacklevel=2
        )
    client = import_optional(
        "petrel_client.client",
        f'loading "{filename}"',
        "it is the petrel-oss Python SDK; download the file and load the local copy instead",
    )
    with tempfile.TemporaryDirectory() as tmp_dir:
        local = os.path.join(tmp_dir, "checkpoint.pth")
        with open(local, "wb") as f:
            f.write(client.Client().get(filename))
        return load_checkpoint_file(local, map_location, weights_only)


@CheckpointLoader.register_scheme(prefixes=("modelzoo://", "torchvision://"))
def load_from_torchvision(
    filename: str, map_location: MapLocation = None, weights_only: bool = True
) -> Any:
    """Load torchvision's weights: ``torchvision://resnet50`` or ``torchvision://resnet50.default``.

    Raises:
        UnknownModelError: torchvision has no such name (a KeyError and a ValueError).
    """
    if filename.startswith("modelzoo://"):
        warnings.warn(
            '"modelzoo://" is deprecated; use "torchvision://"', DeprecationWarning, stacklevel=2
        )
        scheme = "modelzoo://"
    else:
        scheme = "torchvision://"
    name = filename[len(scheme) :].lower().replace("_weights", "")
    url = _lookup(get_torchvision_models(), name, scheme)
    return load_from_http(url, map_location=map_location, weights_only=weights_only)


@CheckpointLoader.register_scheme(prefixes=("open-mmlab://", "openmmlab://"))
def load_from_openmmlab(
    filename: str, map_location: MapLocation = None, weights_only: bool = True
) -> Any:
    """Load an OpenMMLab model-zoo checkpoint by name (``open-mmlab://resnet50_v1c``).

    A table entry that is not a URL is a path relative to the mmcv home directory
    (``$MMCV_HOME``). Deprecated names warn and load their replacement.

    Raises:
        UnknownModelError: The table has no such name.
        FileNotFoundError: The entry is a path and the file is missing.
    """
    scheme = "open-mmlab://" if filename.startswith("open-mmlab://") else "openmmlab://"
    name = filename[len(scheme) :]
    deprecated = get_deprecated_model_names()
    if name in deprecated:
        warnings.warn(
            f"{scheme}{name} is deprecated in favor of {scheme}{deprecated[name]}",
            DeprecationWarning,
            stacklevel=2,
        )
        name = deprecated[name]
    url = _lookup(get_external_models(), name, scheme)
    if url.startswith(("http://", "https://")):
        return load_from_http(url, map_location=map_location, weights_only=weights_only)
    return load_checkpoint_file(os.path.join(_get_mmcv_home(), url), map_location, weights_only)


@CheckpointLoader.register_scheme(prefixes="mmcls://")
def load_from_mmcls(
    filename: str, map_location: MapLocation = None, weights_only: bool = True
) -> Any:
    """Load an mmcls classifier's backbone weights (``mmcls://resnet50``), ``backbone.`` stripped.

    Raises:
        UnknownModelError: The table has no such name.
    """
    url = _lookup(get_mmcls_models(), filename[len("mmcls://") :], "mmcls://")
    checkpoint = load_from_http(url, map_location=map_location, weights_only=weights_only)
    return _process_mmcls_checkpoint(checkpoint)
