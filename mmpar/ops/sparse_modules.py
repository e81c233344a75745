"""Containers of mmcv's sparse convolution (mmcv.ops.sparse_modules)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import torch
from torch import nn

from .sparse_structure import SparseConvTensor

__all__ = [
    "RemoveGrid",
    "SparseModule",
    "SparseSequential",
    "ToDense",
    "is_sparse_conv",
    "is_spconv_module",
]


def is_spconv_module(module: nn.Module) -> bool:
    """Whether ``module`` takes a :class:`SparseConvTensor` (a :class:`SparseModule`)."""
    return isinstance(module, SparseModule)


def is_sparse_conv(module: nn.Module) -> bool:
    """Whether ``module`` is a sparse convolution layer."""
    from .sparse_conv import SparseConvolution

    return isinstance(module, SparseConvolution)


def _mean_update(vals: Any, m_vals: Any, t: float) -> Any:
    """Running mean step ``t / (t + 1) * m + 1 / (t + 1) * v``, per element (mmcv's helper)."""
    vals = vals if isinstance(vals, list) else [vals]
    m_vals = m_vals if isinstance(m_vals, list) else [m_vals]
    outputs = [t / float(t + 1) * m + 1 / float(t + 1) * v for v, m in zip(vals, m_vals)]
    return outputs[0] if len(outputs) == 1 else outputs


class SparseModule(nn.Module):
    """Base of the modules that take a :class:`SparseConvTensor` in :class:`SparseSequential`."""


class SparseSequential(SparseModule):
    """A sequential container for sparse and dense modules, as mmcv's.

    Sparse modules get the :class:`SparseConvTensor`; any other module (``nn.BatchNorm1d``,
    ``nn.ReLU``...) gets its ``features`` (skipped when there are no active sites).
    Built from modules, one ``OrderedDict``, or keyword arguments.

    Raises:
        ValueError: When a keyword name repeats an existing one.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for key, module in args[0].items():
                self.add_module(key, module)
        else:
            for idx, module in enumerate(args):
                self.add_module(str(idx), module)
        for name, module in kwargs.items():
            if name in self._modules:
                raise ValueError("name exists.")
            self.add_module(name, module)
        self._sparity_dict: dict[str, float] = {}

    def __getitem__(self, idx: int) -> nn.Module:
        if not -len(self) <= idx < len(self):
            raise IndexError(f"index {idx} is out of range")
        return list(self._modules.values())[idx]

    def __len__(self) -> int:
        return len(self._modules)

    @property
    def sparity_dict(self) -> dict[str, float]:
        """Per sparse child, the fraction of active sites of its last input."""
        return self._sparity_dict

    def add(self, module: nn.Module, name: str | None = None) -> None:
        """Append ``module`` under ``name`` (default: its position)."""
        if name is None:
            name = str(len(self._modules))
            if name in self._modules:
                raise KeyError("name exists")
        self.add_module(name, module)

    def forward(self, input: Any) -> Any:  # noqa: A002
        """Run the children in order (see the class docstring)."""
        for key, module in self._modules.items():
            if is_spconv_module(module):
                assert isinstance(input, SparseConvTensor), (
                    f"SparseSequential: child {key!r} ({type(module).__name__}) needs a "
                    f"SparseConvTensor, got {type(input).__name__}"
                )
                self._sparity_dict[key] = input.sparity
                input = module(input)
            elif isinstance(input, SparseConvTensor):
                if input.indices.shape[0] != 0:
                    input.features = module(input.features)
            else:
                input = module(input)
        return input

    def fused(self) -> SparseSequential:
        """Return a copy with each sparse convolution + ``nn.BatchNorm1d`` folded into one."""
        from .sparse_conv import SparseConvolution

        mods = list(self._modules.values())
        fused_mods = []
        idx = 0
        while idx < len(mods):
            conv = mods[idx]
            if (
                is_sparse_conv(conv)
                and idx < len(mods) - 1
                and isinstance(mods[idx + 1], nn.BatchNorm1d)
            ):
                bn = mods[idx + 1]
                new = SparseConvolution(
                    ndim=conv.ndim, in_channels=conv.in_channels,
                    out_channels=conv.out_channels, kernel_size=conv.kernel_size,
                    stride=conv.stride, padding=conv.padding, dilation=conv.dilation,
                    groups=conv.groups, bias=True, subm=conv.subm,
                    output_padding=conv.output_padding, transposed=conv.transposed,
                    inverse=conv.inverse, indice_key=conv.indice_key, fused_bn=True,
                )  # fmt: skip
                new.load_state_dict(conv.state_dict(), False)
                new.to(conv.weight.device)
                # mmcv folds with sqrt(var) + eps (not sqrt(var + eps)); kept for equal weights.
                scale = bn.weight.data / (torch.sqrt(bn.running_var) + bn.eps)
                new.weight.data[:] = conv.weight.data * scale
                new.bias.data[:] = (0 - bn.running_mean) * scale + bn.bias.data
                fused_mods.append(new)
                idx += 2
            else:
                fused_mods.append(conv)
                idx += 1
        return SparseSequential(*fused_mods)


class ToDense(SparseModule):
    """Convert a :class:`SparseConvTensor` to a dense (B, C, *spatial) tensor."""

    def forward(self, x: SparseConvTensor) -> torch.Tensor:
        """Return ``x.dense()``."""
        return x.dense()


class RemoveGrid(SparseModule):
    """Drop the tensor's pre-allocated grid buffer."""

    def forward(self, x: SparseConvTensor) -> SparseConvTensor:
        """Return ``x`` with ``grid`` set to None."""
        x.grid = None
        return x
