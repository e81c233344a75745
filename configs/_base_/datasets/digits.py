# scikit-learn's 8x8 digits (bundled, offline): 1,438 train / 359 val images, 1 channel.
dataset_type = "Digits"
img_norm_cfg = dict(mean=[77.9], std=[95.8], to_rgb=False)  # measured on the train split
train_pipeline = [
    dict(type="RandomCrop", size=8, padding=1),
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
    samples_per_gpu=32,
    workers_per_gpu=0,
    train=dict(type=dataset_type, pipeline=train_pipeline),
    val=dict(type=dataset_type, pipeline=test_pipeline, test_mode=True),
    test=dict(type=dataset_type, pipeline=test_pipeline, test_mode=True),
)
evaluation = dict(interval=1, metric="accuracy", save_best="auto")
