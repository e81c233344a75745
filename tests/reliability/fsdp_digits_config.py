# kill_digits_config.py (configs/digits_lenet.py with the fault plugin of test_kill_resume.py)
# trained with a sharded model (FSDP2) and gradient clipping, for test_fsdp_checkpoints.py.
_base_ = ["./kill_digits_config.py"]
model_wrapper = dict(type="MMFullyShardedDataParallel")
optimizer_config = dict(_delete_=True, grad_clip=dict(max_norm=5))
