# ResNet-18 with the CIFAR stem (3x3 stride-1 conv, no max-pool) for 32x32 inputs.
model = dict(
    type="ImageClassifier",
    backbone=dict(type="ResNet", depth=18, stem="cifar", num_stages=4, out_indices=(3,)),
    neck=dict(type="GlobalAveragePooling"),
    head=dict(
        type="LinearClsHead",
        num_classes=10,
        in_channels=512,
        loss=dict(type="CrossEntropyLoss", loss_weight=1.0),
        topk=(1, 5),
    ),
)
