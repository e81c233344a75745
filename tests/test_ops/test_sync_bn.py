import os

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from helpers import free_port
from torch import nn

from mmpar.cnn import NORM_LAYERS, build_norm_layer
from mmpar.cnn.utils import revert_sync_batchnorm
from mmpar.ops.sync_bn import SyncBatchNorm, SyncBatchNormFunction


def _pair(**kwargs):
    """An mmcv SyncBatchNorm and a BatchNorm2d with the same parameters."""
    sbn = SyncBatchNorm(3, **kwargs)
    bn = nn.BatchNorm2d(
        3, momentum=sbn.momentum, affine=sbn.affine, track_running_stats=sbn.track_running_stats
    )
    bn.load_state_dict(sbn.state_dict())
    return sbn, bn


def _check_single_process():
    torch.manual_seed(0)
    sbn, bn = _pair()
    for _ in range(2):
        x = torch.randn(4, 3, 5, 5) * 2 + 1
        torch.testing.assert_close(sbn(x), bn(x))
    torch.testing.assert_close(sbn.running_mean, bn.running_mean)
    torch.testing.assert_close(sbn.running_var, bn.running_var)
    assert int(sbn.num_batches_tracked) == 2
    sbn.eval()
    bn.eval()
    x = torch.randn(2, 3, 5, 5)
    torch.testing.assert_close(sbn(x), bn(x))


def test_single_process_is_batch_norm():
    _check_single_process()


def test_cpu_with_a_process_group_of_one(gloo_group):
    # torch's own SyncBatchNorm refuses CPU input once a process group exists
    with pytest.raises(ValueError):
        nn.SyncBatchNorm(3)(torch.randn(2, 3, 4, 4))
    assert SyncBatchNorm(3).group_size == 1
    _check_single_process()


def test_momentum_none_and_untracked_stats():
    torch.manual_seed(0)
    sbn, bn = _pair(momentum=None)
    for _ in range(3):
        x = torch.randn(2, 3, 4, 4)
        torch.testing.assert_close(sbn(x), bn(x))
    torch.testing.assert_close(sbn.running_mean, bn.running_mean)
    sbn, bn = _pair(track_running_stats=False)
    sbn.eval()
    bn.eval()
    x = torch.randn(2, 3, 4, 4)
    torch.testing.assert_close(sbn(x), bn(x))  # batch statistics in eval mode too
    assert sbn.running_mean is None


def test_mmcv_conventions():
    assert NORM_LAYERS.get("MMSyncBN") is SyncBatchNorm
    name, layer = build_norm_layer(dict(type="MMSyncBN", stats_mode="N"), 8, postfix=1)
    assert name == "bn1" and isinstance(layer, SyncBatchNorm) and layer.stats_mode == "N"
    assert sorted(layer.state_dict()) == [
        "bias",
        "num_batches_tracked",
        "running_mean",
        "running_var",
        "weight",
    ]
    # mmcv initialises the weight uniformly in [0, 1), not with ones
    w = SyncBatchNorm(1000).weight
    assert 0 <= w.min() and w.max() < 1 and w.std() > 0.2
    assert SyncBatchNorm(4, affine=False).weight is None
    assert "stats_mode=default" in repr(layer.__class__(4))
    with pytest.raises(AssertionError):
        SyncBatchNorm(4, stats_mode="mean")
    with pytest.raises(ValueError, match="2D"):
        SyncBatchNorm(4)(torch.zeros(4))
    # reverted to a plain batch norm layer sharing the parameters
    model = nn.Sequential(nn.Conv2d(3, 4, 1), SyncBatchNorm(4))
    reverted = revert_sync_batchnorm(model)
    assert not isinstance(reverted[1], nn.SyncBatchNorm)
    assert reverted[1].weight is model[1].weight


def _worker(rank, port, tmp):
    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2)
    try:
        inputs = torch.load(os.path.join(tmp, "inputs.pt"))
        results = {}
        for mode in ("default", "N"):
            local = inputs["x"][slice(*inputs["slices"][rank])].clone().requires_grad_()
            sbn = SyncBatchNorm(3, stats_mode=mode).double()
            sbn.load_state_dict(inputs["state"])
            out = sbn(local)
            (out * inputs["loss_weights"][slice(*inputs["slices"][rank])]).sum().backward()
            results[mode] = dict(
                out=out.detach(),
                grad=local.grad,
                running_mean=sbn.running_mean,
                running_var=sbn.running_var,
                weight_grad=sbn.weight.grad,
            )
        # mmcv's Function, as its layer calls it in training: the same as the layer's 'N'.
        local = inputs["x"][slice(*inputs["slices"][rank])].clone().requires_grad_()
        sbn = SyncBatchNorm(3, stats_mode="N").double()
        sbn.load_state_dict(inputs["state"])
        args = (sbn.running_mean, sbn.running_var, sbn.weight, sbn.bias, 0.1, 1e-5)
        out = SyncBatchNormFunction.apply(local, *args, dist.group.WORLD, 2, "N")
        (out * inputs["loss_weights"][slice(*inputs["slices"][rank])]).sum().backward()
        results["function"] = dict(
            out=out.detach(),
            grad=local.grad,
            running_mean=sbn.running_mean,
            running_var=sbn.running_var,
            weight_grad=sbn.weight.grad,
        )
        torch.save(results, os.path.join(tmp, f"rank{rank}.pt"))
    finally:
        dist.destroy_process_group()


def _default_mode_reference(x, slices, weight, bias, eps=1e-5):
    """mmcv's 'default' mode: every rank's mean and variance count equally."""
    mean = torch.stack([x[slice(*s)].mean((0, 2, 3)) for s in slices]).mean(0)
    centred = x - mean.view(1, -1, 1, 1)
    var = torch.stack([centred[slice(*s)].pow(2).mean((0, 2, 3)) for s in slices]).mean(0)
    out = centred / torch.sqrt(var.view(1, -1, 1, 1) + eps)
    return out * weight.view(1, -1, 1, 1) + bias.view(1, -1, 1, 1), mean, var


@pytest.mark.slow  # starts two processes (about 3 s of imports on an idle machine)
def test_two_processes_on_cpu(tmp_path):
    torch.manual_seed(0)
    slices = [(0, 3), (3, 4)]  # unequal batches: the two modes differ
    x = torch.randn(4, 3, 2, 2, dtype=torch.float64) * 2 + 1
    loss_weights = torch.randn(4, 3, 2, 2, dtype=torch.float64)
    state = SyncBatchNorm(3).double().state_dict()
    torch.save(
        dict(x=x, slices=slices, loss_weights=loss_weights, state=state), tmp_path / "inputs.pt"
    )
    mp.start_processes(_worker, args=(free_port(), str(tmp_path)), nprocs=2, start_method="spawn")
    ranks = [torch.load(tmp_path / f"rank{r}.pt") for r in range(2)]

    def gathered(mode, key):
        return torch.cat([ranks[0][mode][key], ranks[1][mode][key]])

    # 'N': the batch norm of the whole batch
    bn = nn.BatchNorm2d(3).double()
    bn.load_state_dict(state)
    xg = x.clone().requires_grad_()
    out = bn(xg)
    (out * loss_weights).sum().backward()
    torch.testing.assert_close(gathered("N", "out"), out.detach())
    torch.testing.assert_close(gathered("N", "grad"), xg.grad)
    torch.testing.assert_close(ranks[1]["N"]["running_mean"], bn.running_mean)
    torch.testing.assert_close(ranks[0]["N"]["running_var"], bn.running_var)
    weight_grad = ranks[0]["N"]["weight_grad"] + ranks[1]["N"]["weight_grad"]
    torch.testing.assert_close(weight_grad, bn.weight.grad)

    for rank in ranks:
        for key, value in rank["N"].items():
            torch.testing.assert_close(rank["function"][key], value)

    # 'default': the per-rank statistics averaged with equal weights
    xg = x.clone().requires_grad_()
    out, mean, var = _default_mode_reference(xg, slices, state["weight"], state["bias"])
    (out * loss_weights).sum().backward()
    assert not torch.allclose(out, bn(x))  # the test tells the modes apart
    torch.testing.assert_close(gathered("default", "out"), out.detach())
    torch.testing.assert_close(gathered("default", "grad"), xg.grad)
    torch.testing.assert_close(ranks[0]["default"]["running_mean"], 0.1 * mean.detach())
    unbiased = var.detach() * 16 / 15  # count = local N * H * W * group size, as mmcv
    torch.testing.assert_close(ranks[1]["default"]["running_var"], 0.9 + 0.1 * unbiased)
