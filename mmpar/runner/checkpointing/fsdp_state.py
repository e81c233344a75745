"""Full state dicts of a sharded (FSDP) model and its optimizer, gathered and scattered by torch.

A model sharded by :class:`~mmpar.parallel.MMFullyShardedDataParallel` holds one ``DTensor``
shard of every parameter per rank. A checkpoint of it is *collective*: every rank joins the
gather (``torch.distributed.checkpoint.state_dict.get_model_state_dict`` /
``get_optimizer_state_dict`` with ``full_state_dict=True, cpu_offload=True``), rank 0 receives
the full tensors on the CPU and writes them. Loading is collective too: every rank reads the
full state dict and keeps its shard (``set_model_state_dict`` / ``set_optimizer_state_dict``).

The optimizer state is stored in torch's own layout (``optimizer.state_dict()``: parameters
numbered 0, 1, ... in the order of the optimizer's param groups), so a checkpoint of a sharded
run also loads into an unsharded optimizer (DDP, one process) and vice versa.
Whether a runner's saves need every rank is decided by its Checkpointer
(:attr:`~mmpar.runner.checkpointing.checkpointer.Checkpointer.collective`).
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, NamedTuple, Union

import torch.distributed as dist
from torch import nn
from torch.optim import Optimizer

from mmpar.parallel.utils import unwrap_model

__all__ = [
    "broadcast_buffers",
    "gather_full_model_state",
    "gather_full_optimizer_state",
    "load_full_model_state",
    "load_full_optimizer_state",
    "optimizer_state_by_ids",
    "optimizer_state_by_names",
]

Optimizers = Union[Optimizer, dict]


class LoadReport(NamedTuple):
    """What :func:`load_full_model_state` did not load (``nn.Module.load_state_dict``'s)."""

    missing_keys: list
    unexpected_keys: list


def _options(**kwargs: Any) -> Any:
    from torch.distributed.checkpoint.state_dict import StateDictOptions

    return StateDictOptions(**kwargs)


def broadcast_buffers(model: nn.Module) -> None:
    """Copy rank 0's buffers (BatchNorm statistics, ...) to every rank (collective).

    FSDP shards parameters, not buffers, and does not synchronize them: each rank's BatchNorm
    statistics drift apart. A checkpoint holds rank 0's; broadcasting them first makes every
    rank continue with what the checkpoint holds, so a resumed run matches the uninterrupted
    one. A no-op outside ``torch.distributed``.
    """
    if not (dist.is_available() and dist.is_initialized()) or dist.get_world_size() == 1:
        return
    for buf in unwrap_model(model).buffers():
        dist.broadcast(buf, 0)


def gather_full_model_state(model: nn.Module) -> OrderedDict:
    """Gather a sharded model's full state dict onto rank 0's CPU (collective).

    Keys are the plain model's (no wrapper prefix). Other ranks get an empty dict.
    """
    from torch.distributed.checkpoint.state_dict import get_model_state_dict

    state = get_model_state_dict(
        unwrap_model(model), options=_options(full_state_dict=True, cpu_offload=True)
    )
    return OrderedDict(state)


def _param_names(model: nn.Module) -> dict[int, str]:
    """``id(parameter) -> name`` in the bare model (the names torch's state dict APIs use)."""
    return {id(p): name for name, p in unwrap_model(model).named_parameters()}


def _names_in_order(model: nn.Module, optimizer: Optimizer) -> list[str]:
    """The optimizer's parameters' names, in the order ``optimizer.state_dict()`` numbers them."""
    names = _param_names(model)
    order = []
    for group in optimizer.param_groups:
        for p in group["params"]:
            if id(p) not in names:
                raise ValueError(
                    "the optimizer holds a parameter that is not in the model; build it from "
                    "the wrapped model's parameters (build_optimizer(model, cfg.optimizer))"
                )
            order.append(names[id(p)])
    return order


def optimizer_state_by_ids(state: dict) -> dict:
    """Turn an optimizer state keyed by parameter names into torch's numbered layout.

    Parameters are numbered in the order the param groups list them, as
    ``optimizer.state_dict()`` does.
    """
    ids: dict[str, int] = {}
    groups = []
    for group in state["param_groups"]:
        numbered = []
        for name in group["params"]:
            ids.setdefault(name, len(ids))
            numbered.append(ids[name])
        groups.append({**group, "params": numbered})
    return {
        "state": {ids[name]: value for name, value in state["state"].items() if name in ids},
        "param_groups": groups,
    }


def optimizer_state_by_names(state: dict, names: list[str], source: str = "checkpoint") -> dict:
    """Turn torch's numbered optimizer state into one keyed by parameter names.

    Args:
        state: ``{'state': {0: ..., 1: ...}, 'param_groups': [{'params': [0, 1, ...]}]}``.
        names: The name of parameter ``i`` at index ``i`` (the live optimizer's order).
        source: Names the state in error messages.

    Raises:
        ValueError: The numbers do not fit ``names`` (another model or optimizer setup).
    """
    count = sum(len(g["params"]) for g in state["param_groups"])
    if count != len(names):
        raise ValueError(
            f"{source}: the optimizer state has {count} parameters, the optimizer has "
            f"{len(names)}; it belongs to another model or param-group setup"
        )
    groups = [{**g, "params": [names[i] for i in g["params"]]} for g in state["param_groups"]]
    return {"state": {names[i]: v for i, v in state["state"].items()}, "param_groups": groups}


def _each_optimizer(optimizer: Optimizers) -> dict[str | None, Optimizer]:
    return {None: optimizer} if isinstance(optimizer, Optimizer) else dict(optimizer)


def gather_full_optimizer_state(model: nn.Module, optimizer: Optimizers) -> dict:
    """Gather the full optimizer state(s) of a sharded model onto rank 0's CPU (collective).

    Returns torch's numbered layout (a dict of them for a dict of optimizers); other ranks get
    empty dicts.
    """
    from torch.distributed.checkpoint.state_dict import get_optimizer_state_dict

    out = {}
    for key, optim in _each_optimizer(optimizer).items():
        state = get_optimizer_state_dict(
            unwrap_model(model), optim, options=_options(full_state_dict=True, cpu_offload=True)
        )
        out[key] = optimizer_state_by_ids(state) if state else {}
    return out[None] if None in out else out


def load_full_model_state(model: nn.Module, state_dict: dict) -> Any:
    """Load a full (unsharded) state dict into a sharded model; every rank keeps its shard.

    Every rank must call this with the same ``state_dict`` (collective). Entries the model
    lacks are ignored, the model's entries the state dict lacks keep their values; both are
    reported (``missing_keys``, ``unexpected_keys``, as ``nn.Module.load_state_dict``).
    """
    from torch.distributed.checkpoint.state_dict import set_model_state_dict

    own = list(unwrap_model(model).state_dict())
    own_names = set(own)
    known = {k: v for k, v in state_dict.items() if k in own_names}
    report = LoadReport(
        missing_keys=[k for k in own if k not in known],
        unexpected_keys=[k for k in state_dict if k not in known],
    )
    # torch fills the dict it is given with the model's own entries: pass a copy.
    set_model_state_dict(
        unwrap_model(model), known, options=_options(full_state_dict=True, strict=False)
    )
    return report


def load_full_optimizer_state(
    model: nn.Module, optimizer: Optimizer, state: dict, source: str = "checkpoint"
) -> None:
    """Load torch's numbered (full) optimizer state into the optimizer of a sharded model.

    Every rank must call this with the same ``state`` (collective).

    Raises:
        ValueError: The state does not fit the optimizer's parameters.
    """
    from torch.distributed.checkpoint.state_dict import set_optimizer_state_dict

    named = optimizer_state_by_names(state, _names_in_order(model, optimizer), source)
    # torch's loader refuses group entries the live optimizer has not got yet (``initial_lr``,
    # added by LR schedules when the run starts); load_state_dict takes them. So the groups
    # go in as load_state_dict puts them: the saved values, the live parameters.
    saved_groups = named["param_groups"]
    named["param_groups"] = [
        {k: v for k, v in saved.items() if k in live}
        for saved, live in zip(saved_groups, optimizer.param_groups)
    ]
    set_optimizer_state_dict(
        unwrap_model(model), optimizer, named, options=_options(full_state_dict=True)
    )
    for saved, live in zip(saved_groups, optimizer.param_groups):
        live.update({k: v for k, v in saved.items() if k != "params"})
