# configs/digits_lenet.py with the signal plugin of test_preemption.py (preempt_faults.py; the
# tests put this directory on PYTHONPATH). Inert until --cfg-options arms the hook, e.g.
# custom_hooks.0.point=after_train_iter custom_hooks.0.at=30 (see preempt_faults.py).
_base_ = ["../../configs/digits_lenet.py"]
custom_imports = dict(imports=["preempt_faults"], allow_failed_imports=False)
# BELOW_NORMAL: after the optimizer step and the checkpoint hook, before evaluation and logging.
custom_hooks = [dict(type="SignalFaultHook", priority="BELOW_NORMAL")]
img_norm_cfg = dict(mean=[77.9], std=[95.8], to_rgb=False)
data = dict(
    val=dict(
        pipeline=[
            dict(type="SignalFaultPoint"),
            dict(type="Normalize", **img_norm_cfg),
            dict(type="ImageToTensor", keys=["img"]),
            dict(type="ToTensor", keys=["gt_label"]),
            dict(type="Collect", keys=["img", "gt_label"]),
        ]
    )
)
