# kill_digits_config.py (configs/digits_lenet.py with the fault plugin of test_kill_resume.py)
# trained with a sharded model (FSDP2) and gradient clipping, for test_fsdp_checkpoints.py.
# Its second plugin, fsdp_faults.py, can SIGKILL a run after the shards of a sharded
# checkpoint are written, before it is renamed into place (MMPAR_TEST_FSDP_FAULT).
_base_ = ["./kill_digits_config.py"]
custom_imports = dict(imports=["kill_faults", "fsdp_faults"], allow_failed_imports=False)
model_wrapper = dict(type="MMFullyShardedDataParallel")
optimizer_config = dict(_delete_=True, grad_clip=dict(max_norm=5))
