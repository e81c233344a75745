# configs/digits_lenet.py with the fault-injection plugin of test_kill_resume.py. Inert unless
# the environment variable MMPAR_TEST_FAULT arms a fault (see kill_faults.py); the tests put
# this directory on PYTHONPATH so that custom_imports finds the plugin.
_base_ = ["../../configs/digits_lenet.py"]
custom_imports = dict(imports=["kill_faults"], allow_failed_imports=False)
# BELOW_NORMAL: after the optimizer step and the checkpoint hook, before evaluation and logging.
custom_hooks = [dict(type="KillFaultHook", priority="BELOW_NORMAL")]
img_norm_cfg = dict(mean=[77.9], std=[95.8], to_rgb=False)
data = dict(
    val=dict(
        pipeline=[
            dict(type="KillFaultPoint"),
            dict(type="Normalize", **img_norm_cfg),
            dict(type="ImageToTensor", keys=["img"]),
            dict(type="ToTensor", keys=["gt_label"]),
            dict(type="Collect", keys=["img", "gt_label"]),
        ]
    )
)
