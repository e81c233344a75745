# The standard CIFAR-10 schedule for batch 128 on one device: 200 epochs of SGD, lr / 10 at 100 and 150.
optimizer = dict(type="SGD", lr=0.1, momentum=0.9, weight_decay=5e-4)
optimizer_config = dict(grad_clip=None)
lr_config = dict(policy="step", step=[100, 150])
# lr_config = dict(policy='CosineAnnealing', min_lr=0)  # the cosine alternative
runner = dict(type="EpochBasedRunner", max_epochs=200)
