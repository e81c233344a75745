"""mmcv 1.x's ``mmcv.device._functions``: scatter to the current device, ``[-1]`` keeps CPU."""

import pytest
import torch

from mmpar.device._functions import Scatter, scatter


def test_cpu_scatter_keeps_tensors_and_lists():
    x = torch.arange(6.0).reshape(2, 3).t()  # not contiguous
    out = scatter(x, [-1])
    assert torch.equal(out, x) and out.is_contiguous()
    outs = scatter([x, torch.ones(2)], [-1])
    assert isinstance(outs, list) and torch.equal(outs[1], torch.ones(2))


def test_scatter_class_returns_a_tuple():
    x = torch.zeros(2)
    assert isinstance(Scatter.forward([-1], x), tuple)
    assert len(Scatter.forward([-1], [x, x])) == 2


def test_other_inputs_are_a_type_error():
    with pytest.raises(TypeError, match="tensor or a list"):
        scatter(5, [-1])
