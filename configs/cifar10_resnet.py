# ResNet-18 on CIFAR-10: ~95% top-1 after 200 epochs on one GPU (mmcls reports 94.82%).
_base_ = [
    "./_base_/models/resnet18_cifar.py",
    "./_base_/datasets/cifar10_bs128.py",
    "./_base_/schedules/cifar10_bs128.py",
    "./_base_/default_runtime.py",
]
evaluation = dict(interval=1, metric="accuracy", save_best="auto")
