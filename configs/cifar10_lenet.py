# The PyTorch "Training a classifier" tutorial as a config: LeNet, 2 epochs, batch 4, SGD 0.001.
# The tutorial only scales images to [-1, 1] (mean = std = 127.5), with no augmentation.
_base_ = ["./_base_/models/lenet.py", "./_base_/default_runtime.py"]
dataset_type = "CIFAR10"
data_root = "data/cifar10"
img_norm_cfg = dict(mean=[127.5, 127.5, 127.5], std=[127.5, 127.5, 127.5], to_rgb=False)
pipeline = [
    dict(type="Normalize", **img_norm_cfg),
    dict(type="ImageToTensor", keys=["img"]),
    dict(type="ToTensor", keys=["gt_label"]),
    dict(type="Collect", keys=["img", "gt_label"]),
]
data = dict(
    samples_per_gpu=4,
    workers_per_gpu=2,
    train=dict(type=dataset_type, data_prefix=data_root, pipeline=pipeline),
    val=dict(type=dataset_type, data_prefix=data_root, pipeline=pipeline, test_mode=True),
    test=dict(type=dataset_type, data_prefix=data_root, pipeline=pipeline, test_mode=True),
)
evaluation = dict(interval=1, metric=["accuracy", "class_accuracy"])
optimizer = dict(type="SGD", lr=0.001, momentum=0.9)
optimizer_config = dict(grad_clip=None)
lr_config = dict(policy="fixed")
runner = dict(type="EpochBasedRunner", max_epochs=2)
log_config = dict(interval=2000)
