# ResNet-18 on CIFAR-10 trained with FSDP: each rank keeps only its shard of every parameter,
# gradient and optimizer state. Needs torchrun and --launcher pytorch:
#   torchrun --nproc_per_node=2 tools/train.py configs/cifar10_resnet_fsdp.py --launcher pytorch
# See docs/distributed.md, "DDP or FSDP".
_base_ = ["./cifar10_resnet.py"]
model_wrapper = dict(
    type="MMFullyShardedDataParallel",
    wrap_modules=["BasicBlock"],  # each residual block is its own FSDP unit
    param_dtype=None,  # e.g. 'bfloat16' to compute in bf16 (the shards stay float32)
    reduce_dtype=None,  # dtype of the gradient reduce-scatter (default: param_dtype)
    cpu_offload=False,  # True keeps shards, gradients and optimizer state on the CPU
    reshard_after_forward=True,  # free gathered parameters after forward (less memory)
)
