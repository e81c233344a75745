"""Focal losses with mmcv's integer labels, against the formulas of mmcv's kernels."""

import math

import pytest
import torch

from mmpar.ops import SigmoidFocalLoss, SoftmaxFocalLoss, sigmoid_focal_loss, softmax_focal_loss


def _ref_sigmoid(logits, labels, gamma, alpha, weight=None):
    out = torch.zeros_like(logits)
    for n, t in enumerate(labels.tolist()):
        for c in range(logits.size(1)):
            p = 1 / (1 + math.exp(-float(logits[n, c])))
            if t == c:
                v = -alpha * (1 - p) ** gamma * math.log(p)
            else:
                v = -(1 - alpha) * p**gamma * math.log(1 - p)
            out[n, c] = v * (float(weight[t]) if weight is not None and t < len(weight) else 1)
    return out


def _ref_softmax(logits, labels, gamma, alpha, weight=None):
    probs = torch.softmax(logits, 1)
    out = torch.zeros(len(labels), dtype=logits.dtype)
    for n, t in enumerate(labels.tolist()):
        if t >= 0:
            p = float(probs[n, t])
            out[n] = -alpha * (1 - p) ** gamma * math.log(p)
            out[n] *= float(weight[t]) if weight is not None else 1
    return out


def _data(dtype=torch.float32):
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 4, generator=g, dtype=dtype) * 2
    labels = torch.tensor([0, 3, 4, 2, 4, 1])  # 4 == num_classes: background
    return logits, labels


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_sigmoid_focal_loss_matches_mmcvs_formula(reduction):
    logits, labels = _data()
    weight = torch.tensor([1.0, 2.0, 0.5, 3.0])
    ref = _ref_sigmoid(logits, labels, 2.0, 0.25, weight)
    ref = {"none": ref, "mean": ref.sum() / 6, "sum": ref.sum()}[reduction]
    out = sigmoid_focal_loss(logits, labels, 2.0, 0.25, weight, reduction)
    assert torch.allclose(out, ref, atol=1e-5)
    layer = SigmoidFocalLoss(2.0, 0.25, weight, reduction)
    assert torch.equal(layer(logits, labels), out) and "weight" in dict(layer.named_buffers())
    unweighted = sigmoid_focal_loss(logits, labels, 1.5, 0.4)
    assert torch.allclose(unweighted, _ref_sigmoid(logits, labels, 1.5, 0.4).sum() / 6)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_softmax_focal_loss_matches_mmcvs_formula(reduction):
    logits, labels = _data()
    labels = torch.tensor([0, 3, -1, 2, 1, 1])  # a negative label contributes nothing
    weight = torch.tensor([1.0, 2.0, 0.5, 3.0])
    ref = _ref_softmax(logits, labels, 2.0, 0.25, weight)
    ref = {"none": ref, "mean": ref.sum() / 6, "sum": ref.sum()}[reduction]
    out = softmax_focal_loss(logits, labels, 2.0, 0.25, weight, reduction)
    assert torch.allclose(out, ref, atol=1e-5)
    assert torch.equal(SoftmaxFocalLoss(2.0, 0.25, weight, reduction)(logits, labels), out)


def test_focal_loss_gradients():
    logits, labels = _data(torch.float64)
    logits.requires_grad_(True)
    weight = torch.tensor([1.0, 2.0, 0.5, 3.0], dtype=torch.float64)
    assert torch.autograd.gradcheck(
        lambda x: sigmoid_focal_loss(x, labels, 2.0, 0.25, weight, "none"), (logits,)
    )
    soft_labels = labels.clamp(max=3)
    assert torch.autograd.gradcheck(
        lambda x: softmax_focal_loss(x, soft_labels, 2.0, 0.25, weight, "none"), (logits,)
    )


def test_mmcvs_input_checks():
    logits, labels = _data()
    with pytest.raises(AssertionError):
        sigmoid_focal_loss(logits, labels.float())
    with pytest.raises(AssertionError):
        sigmoid_focal_loss(logits, labels, reduction="avg")
    with pytest.raises(AssertionError):
        softmax_focal_loss(logits, labels, weight=torch.ones(3))
    assert "gamma=2.0, alpha=0.25, reduction=mean" in repr(SigmoidFocalLoss(2.0, 0.25))


def test_layers_are_not_instances_of_each_other_as_in_mmcv():
    # mmcv's two layers are separate nn.Module subclasses; a shared base must not change that.
    assert not isinstance(SoftmaxFocalLoss(2.0, 0.25), SigmoidFocalLoss)
    assert not isinstance(SigmoidFocalLoss(2.0, 0.25), SoftmaxFocalLoss)
