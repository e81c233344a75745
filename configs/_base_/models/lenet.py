# The PyTorch blitz tutorial's network: conv6-pool-conv16-pool-fc120-fc84 + fc to the classes.
model = dict(
    type="ImageClassifier",
    backbone=dict(type="LeNet", in_channels=3, input_size=32),
    head=dict(
        type="LinearClsHead",
        num_classes=10,
        in_channels=84,
        loss=dict(type="CrossEntropyLoss", loss_weight=1.0),
        topk=(1,),
    ),
)
