# configs/digits_lenet.py with the fault-injection plugin of test_dist_faults.py (dist_faults.py;
# the tests put this directory on PYTHONPATH so that custom_imports finds it). Inert until
# --cfg-options arms a fault: model.type=DistFaultyClassifier model.fault_action=..., or
# data.train.pipeline.0.sample_idx=N data.train.pipeline.0.action=...
_base_ = ["../../configs/digits_lenet.py"]
custom_imports = dict(imports=["dist_faults"], allow_failed_imports=False)
img_norm_cfg = dict(mean=[77.9], std=[95.8], to_rgb=False)
data = dict(
    train=dict(
        pipeline=[
            dict(type="DistFaultySample", sample_idx=-1),  # -1: no sample fails
            dict(type="RandomCrop", size=8, padding=1),
            dict(type="Normalize", **img_norm_cfg),
            dict(type="ImageToTensor", keys=["img"]),
            dict(type="ToTensor", keys=["gt_label"]),
            dict(type="Collect", keys=["img", "gt_label"]),
        ]
    )
)
