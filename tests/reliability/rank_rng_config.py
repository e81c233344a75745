# kill_digits_config.py (configs/digits_lenet.py + the SIGKILL plugin of test_kill_resume.py)
# with dropout between backbone and head, for test_rank_rng_resume.py: under --diff-seed each
# rank draws different dropout masks from its own global generator.
_base_ = ["./kill_digits_config.py"]
custom_imports = dict(imports=["kill_faults", "rank_rng_plugin"], allow_failed_imports=False)
model = dict(neck=dict(type="DropoutNeck", p=0.5))
custom_hooks = [
    dict(type="KillFaultHook", priority="BELOW_NORMAL"),
    dict(type="RankWeightsHook", priority="LOWEST"),
]
