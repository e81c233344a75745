# CIFAR-10 with the standard augmentation (pad-4 random crop, horizontal flip).
dataset_type = "CIFAR10"
data_root = "data/cifar10"  # holds cifar-10-batches-py/; set download=True to fetch it
img_norm_cfg = dict(mean=[125.307, 122.961, 113.8575], std=[51.5865, 50.847, 51.255], to_rgb=False)
train_pipeline = [
    dict(type="RandomCrop", size=32, padding=4),
    dict(type="RandomFlip", flip_prob=0.5, direction="horizontal"),
    dict(type="Normalize", **img_norm_cfg),
    dict(type="ImageToTensor", keys=["img"]),
    dict(type="ToTensor", keys=["gt_label"]),
    dict(type="Collect", keys=["img", "gt_label"]),
]
test_pipeline = [
    dict(type="Normalize", **img_norm_cfg),
    dict(type="ImageToTensor", keys=["img"]),
    dict(type="ToTensor", keys=["gt_label"]),
    dict(type="Collect", keys=["img", "gt_label"]),
]
data = dict(
    samples_per_gpu=128,
    workers_per_gpu=2,
    train=dict(type=dataset_type, data_prefix=data_root, pipeline=train_pipeline),
    val=dict(type=dataset_type, data_prefix=data_root, pipeline=test_pipeline, test_mode=True),
    test=dict(type=dataset_type, data_prefix=data_root, pipeline=test_pipeline, test_mode=True),
)
evaluation = dict(interval=1, metric="accuracy")
