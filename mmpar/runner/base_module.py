"""``BaseModule``: an ``nn.Module`` initialised from an ``init_cfg`` (mmcv 1.x's base class).

``init_weights()`` applies the module's own ``init_cfg`` (see
:mod:`mmpar.runner.model_setup.weight_init`), then calls ``init_weights()`` of each child that
has one, so configs of lower levels win.
The top-level call records how every parameter ended up initialised and logs that table: into
the ``mmpar`` logger's log file when it has one (only the table, not every line to the
console), else through the logger.
"""

from __future__ import annotations

import copy
import logging
import warnings
from abc import ABCMeta
from collections import defaultdict
from collections.abc import Iterable
from typing import Any, Union

from torch import nn

from mmpar.utils import get_logger, print_log

# mmcv 1.7.2's module imports these too; projects import them from here.
from mmpar.utils.logging import logger_initialized as logger_initialized

from .dist_utils import master_only
from .model_setup.weight_init import _snapshot, initialize, update_init_info

__all__ = ["BaseModule", "ModuleDict", "ModuleList", "Sequential"]

_LOGGER = "mmpar"

InitCfg = Union[dict, list, None]


class BaseModule(nn.Module, metaclass=ABCMeta):
    """Base class of modules whose weights are set by :meth:`init_weights` from ``init_cfg``.

    Args:
        init_cfg: Initialisation config (a dict or a list of dicts); None keeps PyTorch's
            default initialisation for this level (children still apply their own).

    Example:
        >>> class Head(BaseModule):
        ...     def __init__(self):
        ...         super().__init__(init_cfg=dict(type='Normal', layer='Linear', std=0.01))
        ...         self.fc = nn.Linear(8, 2)
        >>> head = Head()
        >>> head.init_weights()
        >>> head.is_init
        True
    """

    def __init__(self, init_cfg: InitCfg = None) -> None:
        super().__init__()
        self._is_init = False
        self.init_cfg = copy.deepcopy(init_cfg)

    @property
    def is_init(self) -> bool:
        """Whether :meth:`init_weights` has run on this module."""
        return self._is_init

    def init_weights(self) -> None:
        """Apply ``init_cfg``, then the children's ``init_weights`` (once; later calls warn).

        A dict ``init_cfg`` of type ``Pretrained`` skips the children, so their own configs
        do not overwrite the loaded weights.
        """
        top_level = not hasattr(self, "_params_init_info")
        if top_level:
            # One table shared by every sub-module: parameter -> how it was initialised, and
            # a fingerprint of its values to notice which initialiser changed it.
            table: defaultdict = defaultdict(dict)
            for param in self.parameters():
                table[param]["init_info"] = (
                    "The value is the same before and after calling `init_weights` of "
                    f"{type(self).__name__} "
                )
                table[param].update(_snapshot(param))
            for module in self.modules():
                module._params_init_info = table
        try:
            if self._is_init:
                warnings.warn(
                    f"init_weights of {type(self).__name__} has been called more than once; "
                    "the call is ignored",
                    stacklevel=2,
                )
            else:
                self._init_once()
                self._is_init = True
            if top_level:
                self._dump_init_info(_LOGGER)
        finally:
            if top_level:
                for module in self.modules():
                    if "_params_init_info" in module.__dict__:
                        del module._params_init_info

    def _init_once(self) -> None:
        name = type(self).__name__
        if self.init_cfg:
            print_log(f"initialize {name} with init_cfg {self.init_cfg}", logger=_LOGGER)
            initialize(self, self.init_cfg)
            if isinstance(self.init_cfg, dict) and self.init_cfg.get("type") == "Pretrained":
                return
        for child in self.children():
            if callable(getattr(child, "init_weights", None)):
                child.init_weights()
                update_init_info(
                    child,
                    init_info="Initialized by user-defined `init_weights` in "
                    f"{type(child).__name__} ",
                )

    @master_only
    def _dump_init_info(self, logger_name: str) -> None:
        """Write how each parameter was initialised to the log file(s), else log it."""
        logger = get_logger(logger_name)
        lines = [
            f"\n{name} - {param.shape}: \n{self._params_init_info[param]['init_info']} \n"
            for name, param in self.named_parameters()
        ]
        files = [h for h in logger.handlers if isinstance(h, logging.FileHandler)]
        for handler in files:
            handler.acquire()
            try:
                handler.stream.write("Name of parameter - Initialization information\n")
                handler.stream.write("".join(lines))
                handler.stream.flush()
            finally:
                handler.release()
        if not files:
            for line in lines:
                print_log(line, logger=logger_name)

    def __repr__(self) -> str:
        text = super().__repr__()
        return f"{text}\ninit_cfg={self.init_cfg}" if self.init_cfg else text


class Sequential(BaseModule, nn.Sequential):
    """``nn.Sequential`` with an ``init_cfg``.

    Args:
        *args: Modules (or one ``OrderedDict`` of them), as for ``nn.Sequential``.
        init_cfg: Initialisation config.
    """

    def __init__(self, *args: Any, init_cfg: InitCfg = None) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.Sequential.__init__(self, *args)


class ModuleList(BaseModule, nn.ModuleList):
    """``nn.ModuleList`` with an ``init_cfg``.

    Args:
        modules: Modules to hold.
        init_cfg: Initialisation config.
    """

    def __init__(self, modules: Iterable[nn.Module] | None = None, init_cfg: InitCfg = None):
        BaseModule.__init__(self, init_cfg)
        nn.ModuleList.__init__(self, modules)


class ModuleDict(BaseModule, nn.ModuleDict):
    """``nn.ModuleDict`` with an ``init_cfg``.

    Args:
        modules: A mapping of name to module, or an iterable of (name, module) pairs.
        init_cfg: Initialisation config.
    """

    def __init__(self, modules: Any = None, init_cfg: InitCfg = None) -> None:
        BaseModule.__init__(self, init_cfg)
        nn.ModuleDict.__init__(self, modules)
