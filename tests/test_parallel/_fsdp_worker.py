"""Worker for the real multi-process FSDP tests; run with torchrun (2 processes, gloo on CPU).

Trains the same model on the same per-rank data with MMDistributedDataParallel and with
MMFullyShardedDataParallel (SGD with momentum, AdamW, SGD with OptimizerHook's gradient
clipping, SGD with ``cpu_offload``; then FSDP with bfloat16 parameters), and
writes ``rank{r}.pt`` into ``--out``: the full weights of each run, the losses, the local shard
shapes of every parameter, gradient and optimizer state tensor, the batch shapes the model saw,
and evaluation outputs (``val_step`` and ``forward(return_loss=False)``) on the sharded model.

The test process imports this file for ``ShardNet`` and ``local_samples`` to compute
single-process references.
"""

import argparse
import os

import torch
from torch import nn

from mmpar.parallel import MMDistributedDataParallel, MMFullyShardedDataParallel, collate
from mmpar.runner.dist_utils import barrier, get_dist_info, init_dist
from mmpar.runner.hooks import OptimizerHook

try:  # imported by the test as part of the package, run by torchrun as a script
    from ._ddp_worker import make_samples
except ImportError:
    from _ddp_worker import make_samples

STEPS = 3
OPTIMIZERS = {
    "sgd": lambda params: torch.optim.SGD(params, lr=0.1, momentum=0.9),
    "adamw": lambda params: torch.optim.AdamW(params, lr=0.01, weight_decay=0.1),
}
# Runs: name -> (optimizer, max_norm of OptimizerHook's gradient clipping or None, extra
# MMFullyShardedDataParallel arguments). The clipped run's max_norm is below the gradients'
# norms, so every step clips.
RUNS = {
    "sgd": ("sgd", None, {}),
    "adamw": ("adamw", None, {}),
    "sgd_clip": ("sgd", 0.05, {}),
    "sgd_offload": ("sgd", None, {"cpu_offload": True}),
}


class Block(nn.Module):
    """The FSDP unit of ``ShardNet`` (``wrap_modules=['Block']``)."""

    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)

    def forward(self, x):
        return torch.relu(self.fc(x)) + x


class ShardNet(nn.Module):
    """Sizes chosen so that dim 0 splits unevenly over 2 ranks (5 -> 3 + 2, 1 -> 1 + 0)."""

    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.stem = nn.Linear(3, 5)
        self.blocks = nn.Sequential(Block(5), Block(5))
        self.head = nn.Linear(5, 2)
        self.scale = nn.Parameter(torch.ones(1))
        self.seen = []  # (img shape, num_samples) of every train/val step

    def forward(self, img, label=None, return_loss=True):
        feats = self.blocks(torch.relu(self.stem(img.sum(dim=(2, 3)) / 16.0)))
        logits = self.head(feats) * self.scale
        if not return_loss:
            return logits
        return nn.functional.cross_entropy(logits.float(), label)

    def train_step(self, data_batch, optimizer=None):
        self.seen.append((tuple(data_batch["img"].shape), len(data_batch["img_metas"])))
        loss = self(data_batch["img"], data_batch["label"])
        return {
            "loss": loss,
            "log_vars": {"loss": loss.item()},
            "num_samples": len(data_batch["img_metas"]),
        }

    val_step = train_step


def local_samples(step: int, rank: int, world_size: int) -> list:
    """This rank's samples of a step (DistributedSampler's interleaving)."""
    return make_samples(step)[rank::world_size]


def _local(t):
    return t.to_local() if hasattr(t, "to_local") else t


def _full(model: nn.Module) -> dict:
    return {
        k: (v.full_tensor() if hasattr(v, "full_tensor") else v).detach().clone()
        for k, v in model.state_dict().items()
    }


def train(model, opt, rank, world_size, max_norm=None) -> tuple[list, list]:
    """``STEPS`` steps; the losses and the gradient norms OptimizerHook.clip_grads returned."""
    clipper = OptimizerHook(grad_clip=dict(max_norm=max_norm)) if max_norm else None
    losses, norms = [], []
    for step in range(STEPS):
        # Two chunks per rank: the wrapper merges them back into one local batch.
        batch = collate(local_samples(step, rank, world_size), samples_per_gpu=2)
        opt.zero_grad()
        out = model.train_step(batch, opt)
        out["loss"].backward()
        if clipper is not None:
            norms.append(float(clipper.clip_grads(model.parameters())))
        opt.step()
        losses.append(out["loss"].item())
    return losses, norms


def shard_shapes(model: nn.Module, opt: torch.optim.Optimizer) -> dict:
    """Full shape and this rank's local shapes of each parameter, its gradient and its state."""
    shapes = {}
    for name, p in model.named_parameters():
        state = {k: tuple(_local(v).shape) for k, v in opt.state[p].items() if v.dim() > 0}
        shapes[name] = {
            "full": tuple(p.shape),
            "param": tuple(_local(p).shape),
            "grad": tuple(_local(p.grad).shape),
            "state": state,
            "is_dtensor": hasattr(p, "to_local"),
        }
    return shapes


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    init_dist("pytorch", backend="gloo")
    rank, world_size = get_dist_info()
    result = {}

    for run, (opt_name, max_norm, fsdp_args) in RUNS.items():
        make_opt = OPTIMIZERS[opt_name]
        ddp = MMDistributedDataParallel(ShardNet(), device_ids=None)
        ddp_opt = make_opt(ddp.parameters())
        fsdp = MMFullyShardedDataParallel(ShardNet(), wrap_modules=["Block"], **fsdp_args)
        fsdp_opt = make_opt(fsdp.parameters())  # after wrapping: the sharded parameters
        ddp_losses, ddp_norms = train(ddp, ddp_opt, rank, world_size, max_norm)
        fsdp_losses, fsdp_norms = train(fsdp, fsdp_opt, rank, world_size, max_norm)
        result[run] = {
            "ddp_losses": ddp_losses,
            "fsdp_losses": fsdp_losses,
            "ddp_norms": ddp_norms,
            "fsdp_norms": fsdp_norms,
            "ddp": _full(ddp.module),
            "fsdp": _full(fsdp.module),
            "shards": shard_shapes(fsdp.module, fsdp_opt),
            "seen": list(fsdp.module.seen),
        }
        if run == "sgd":
            val = collate(local_samples(10, rank, world_size), samples_per_gpu=2)
            fsdp.eval()
            ddp.eval()
            with torch.no_grad():
                result["eval"] = {
                    "fsdp_val": fsdp.val_step(val)["loss"],
                    "ddp_val": ddp.val_step(val)["loss"],
                    "fsdp_logits": fsdp(val["img"], return_loss=False),
                    "ddp_logits": ddp(val["img"], return_loss=False),
                    "seen": fsdp.module.seen[-1],
                }

    dtypes = []
    bf16 = MMFullyShardedDataParallel(ShardNet(), wrap_modules=["Block"], param_dtype="bfloat16")
    bf16.module.head.register_forward_hook(lambda m, a, out: dtypes.append(out.dtype))
    bf16_opt = OPTIMIZERS["sgd"](bf16.parameters())
    result["bf16"] = {
        "losses": train(bf16, bf16_opt, rank, world_size)[0],
        "compute_dtypes": sorted({str(d) for d in dtypes}),
        "shard_dtypes": sorted({str(_local(p).dtype) for p in bf16.parameters()}),
        "grad_dtypes": sorted({str(_local(p.grad).dtype) for p in bf16.parameters()}),
        "state_dtypes": sorted(
            {str(_local(v).dtype) for s in bf16_opt.state.values() for v in s.values()}
        ),
        "params": _full(bf16.module),
    }
    torch.save(result, os.path.join(args.out, f"rank{rank}.pt"))
    barrier()


if __name__ == "__main__":
    main()
