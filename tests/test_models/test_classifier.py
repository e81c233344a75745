import numpy as np
import pytest
import torch
import torch.nn.functional as F

from mmpar.models import (
    MODELS,
    CrossEntropyLoss,
    ImageClassifier,
    LinearClsHead,
    accuracy,
    build_classifier,
)
from mmpar.models.classifiers import parse_losses

torch.set_num_threads(1)

LENET_CLS = dict(
    type="ImageClassifier",
    backbone=dict(type="LeNet", in_channels=1, input_size=8, padding=2),
    head=dict(type="LinearClsHead", num_classes=10, in_channels=84, topk=(1, 5)),
)
RESNET_CLS = dict(
    type="ImageClassifier",
    backbone=dict(type="ResNet", depth=18, stem="cifar"),
    neck=dict(type="GlobalAveragePooling"),
    head=dict(type="LinearClsHead", num_classes=10, in_channels=512),
)


def _batch(n=6, c=1, size=8, seed=0):
    g = torch.Generator().manual_seed(seed)
    return dict(
        img=torch.rand(n, c, size, size, generator=g),
        gt_label=torch.randint(0, 10, (n,), generator=g),
        img_metas=[{"sample_idx": i} for i in range(n)],
    )


def test_cross_entropy_loss_matches_torch():
    logits = torch.randn(5, 4)
    labels = torch.tensor([0, 3, 1, 1, 2])
    loss = CrossEntropyLoss(loss_weight=2.0, label_smoothing=0.1)
    expected = 2.0 * F.cross_entropy(logits, labels, label_smoothing=0.1)
    assert torch.allclose(loss(logits, labels), expected)
    weighted = CrossEntropyLoss(class_weight=[1.0, 2.0, 1.0, 1.0], reduction="sum")
    w = torch.tensor([1.0, 2.0, 1.0, 1.0])
    assert torch.allclose(
        weighted(logits, labels), F.cross_entropy(logits, labels, weight=w, reduction="sum")
    )
    soft = F.one_hot(labels, 4).float()
    assert torch.allclose(CrossEntropyLoss()(logits, soft), F.cross_entropy(logits, labels))
    assert CrossEntropyLoss(reduction="none")(logits, labels).shape == (5,)
    with pytest.raises(ValueError, match="label_smoothing"):
        CrossEntropyLoss(label_smoothing=1.0)


def test_accuracy_hand_computed():
    pred = torch.tensor([[0.1, 0.9, 0.0], [0.8, 0.15, 0.05], [0.2, 0.3, 0.5]])
    target = torch.tensor([1, 1, 0])
    top1, top2, top9 = accuracy(pred, target, topk=(1, 2, 9))
    assert top1.item() == pytest.approx(100 / 3)
    assert top2.item() == pytest.approx(200 / 3)
    assert top9.item() == pytest.approx(100.0)


def test_linear_head_losses_and_test():
    head = LinearClsHead(num_classes=3, in_channels=4, topk=(1, 2))
    x = (torch.rand(2, 4),)
    losses = head.forward_train(x, torch.tensor([0, 2]))
    assert set(losses) == {"loss", "accuracy"} and set(losses["accuracy"]) == {"top-1", "top-2"}
    assert torch.allclose(losses["loss"], F.cross_entropy(head(x), torch.tensor([0, 2])))
    scores = head.simple_test(x)
    assert isinstance(scores, list) and len(scores) == 2 and scores[0].shape == (3,)
    np.testing.assert_allclose([s.sum() for s in scores], [1.0, 1.0], rtol=1e-6)
    assert head.fc.weight.std() > 0.05  # built: PyTorch's init; init_weights() sets its own
    head.init_weights()
    assert head.fc.weight.std() < 0.05  # Normal(std=0.01) init


def test_parse_losses():
    losses = dict(
        loss_cls=torch.tensor([1.0, 3.0]),
        loss_aux=[torch.tensor(1.0), torch.tensor([2.0, 4.0])],
        accuracy={"top-1": torch.tensor(50.0)},
    )
    loss, log_vars = parse_losses(losses)
    assert loss.item() == 2.0 + 4.0
    assert log_vars == {"loss_cls": 2.0, "loss_aux": 4.0, "top-1": 50.0, "loss": 6.0}
    assert all(isinstance(v, float) for v in log_vars.values())
    with pytest.raises(TypeError, match="'bad'"):
        parse_losses(dict(loss=torch.tensor(1.0), bad="x"))


def test_train_step_val_step_and_test_forward():
    model = build_classifier(LENET_CLS)
    assert isinstance(model, ImageClassifier) and not model.with_neck
    data = _batch()
    out = model.train_step(data, optimizer=None)
    assert set(out) == {"loss", "log_vars", "num_samples"} and out["num_samples"] == 6
    assert out["loss"].requires_grad and set(out["log_vars"]) == {"loss", "top-1", "top-5"}
    out["loss"].backward()
    assert model.backbone.features[0].weight.grad is not None
    with torch.no_grad():
        val = model.val_step(data)
    assert val["log_vars"]["loss"] == pytest.approx(out["log_vars"]["loss"], rel=1e-5)
    model.eval()
    with torch.no_grad():
        scores = model(data["img"], return_loss=False, img_metas=data["img_metas"])
        single = model([data["img"]], return_loss=False, img_metas=[data["img_metas"]])
    assert len(scores) == 6 and scores[0].shape == (10,)
    np.testing.assert_allclose(scores[0].sum(), 1.0, rtol=1e-5)
    np.testing.assert_allclose(np.stack(scores), np.stack(single))
    with pytest.raises(KeyError, match="gt_label"):
        model(data["img"])
    with pytest.raises(NotImplementedError, match="test-time augmentation"):
        model([data["img"], data["img"]], return_loss=False)


def test_training_reduces_loss():
    torch.manual_seed(0)
    model = build_classifier(LENET_CLS)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    data = _batch(n=16)
    first = model.train_step(data, opt)["log_vars"]["loss"]
    for _ in range(100):
        out = model.train_step(data, opt)
        opt.zero_grad()
        out["loss"].backward()
        opt.step()
    assert out["log_vars"]["loss"] < first / 4


def test_resnet_classifier_and_pretrained(tmp_path):
    model = build_classifier(RESNET_CLS)
    out = model.train_step(_batch(n=2, c=3, size=32), None)
    assert out["num_samples"] == 2
    torch.save({"meta": {}, "state_dict": model.state_dict()}, tmp_path / "ckpt.pth")
    fresh = build_classifier(dict(RESNET_CLS, pretrained=str(tmp_path / "ckpt.pth")))
    fresh.init_weights()  # the backbones' own init first, then the checkpoint's weights
    for k, v in model.backbone.state_dict().items():
        assert torch.equal(v, fresh.backbone.state_dict()[k])
    torch.save({"unrelated.weight": torch.zeros(1)}, tmp_path / "bad.pth")
    bad = build_classifier(dict(RESNET_CLS, pretrained=str(tmp_path / "bad.pth")))
    with pytest.raises(KeyError, match="no weights"):
        bad.init_weights()


def test_init_cfg():
    cfg = dict(
        LENET_CLS,
        init_cfg=[dict(type="Constant", layer="Conv2d", val=0.5, bias=0.25)],
    )
    model = build_classifier(cfg)
    model.init_weights()
    conv = model.backbone.features[0]
    assert torch.all(conv.weight == 0.5) and torch.all(conv.bias == 0.25)
    assert model.head.fc.weight.std() < 0.05  # the head's own init_cfg ran after the model's
    unknown = build_classifier(dict(LENET_CLS, init_cfg=dict(type="Orthogonal", layer="Conv2d")))
    with pytest.raises(KeyError, match="Orthogonal"):
        unknown.init_weights()


def test_registry_aliases_and_errors():
    assert MODELS.get("ResNet") is not None and MODELS.get("LinearClsHead") is LinearClsHead
    with pytest.raises(KeyError, match="Did you mean: LeNet"):
        build_classifier(dict(LENET_CLS, backbone=dict(type="LeNett")))
