"""Receptive-field search: candidate rates, wrapping, one search step, fixed structures."""

import json

import torch
from torch import nn

from mmpar.cnn import Conv2dRFSearchOp, RFSearchHook
from mmpar.cnn.rfsearch.utils import expand_rates, get_single_padding
from mmpar.runner import HOOKS


def search_cfg(**changes):
    search = dict(
        step=0,
        max_step=10,
        search_interval=1,
        exp_rate=0.5,
        init_alphas=0.01,
        mmin=1,
        mmax=24,
        num_branches=3,
        skip_layer=["skipped"],
    )
    return dict(search=dict(search, **changes))


def net():
    torch.manual_seed(0)
    model = nn.Sequential()
    model.add_module("a", nn.Conv2d(3, 4, 3, padding=1))
    model.add_module("pointwise", nn.Conv2d(4, 4, 1))  # nothing to dilate
    model.add_module("skipped", nn.Conv2d(4, 4, 3, padding=1))
    model.add_module("inner", nn.Sequential(nn.Conv2d(4, 4, (3, 1), padding=(1, 0))))
    return model


def test_candidate_rates_and_padding():
    # (1 - 0.5) * 2 = 1, (1 + 0.5) * 2 = 3; small rates first, then the rate itself, then large.
    assert expand_rates((2, 2), search_cfg()["search"]) == [(1, 1), (2, 2), (3, 3)]
    assert expand_rates((2, 4), dict(exp_rate=0.5, num_branches=2, mmin=1, mmax=5)) == [
        (1, 2),
        (3, 5),  # 6 clipped to mmax
    ]
    assert expand_rates((1, 1), search_cfg()["search"]) == [(1, 1), (2, 2)]  # duplicates go
    assert get_single_padding(3, 1, 2) == 2 and get_single_padding(3, 2, 1) == 1


def test_search_wraps_steps_and_writes_the_structure(tmp_path):
    assert HOOKS.get("RFSearchHook") is RFSearchHook
    model = net()
    hook = RFSearchHook(config=search_cfg(), verbose=False)
    hook.init_model(model)
    assert isinstance(model.a, Conv2dRFSearchOp) and isinstance(model.inner[0], Conv2dRFSearchOp)
    assert isinstance(model.pointwise, nn.Conv2d) and isinstance(model.skipped, nn.Conv2d)
    assert model.a.dilation_rates == [(1, 1), (2, 2)]
    assert model.inner[0].dilation_rates == [(1, 1), (2, 1)]  # the 1-wide axis stays
    assert sorted(model.a.state_dict()) == ["branch_weights", "op_layer.bias", "op_layer.weight"]
    x = torch.rand(1, 3, 8, 8)
    out = model(x)
    # Equal branch weights: the mean of the conv at dilation 1 and at dilation 2.
    conv = model.a.op_layer
    at = [nn.functional.conv2d(x, conv.weight, conv.bias, padding=d, dilation=d) for d in (1, 2)]
    assert torch.allclose(model.a(x), (at[0] + at[1]) / 2, atol=1e-6)
    assert out.shape == (1, 4, 8, 8)
    with torch.no_grad():
        model.a.branch_weights.copy_(torch.tensor([0.0, 1.0, 0.0]))  # all on dilation 2
    hook.step(model, str(tmp_path))
    assert model.a.op_layer.dilation == (2, 2) and model.a.op_layer.padding == (2, 2)
    assert model.a.dilation_rates == [(1, 1), (2, 2), (3, 3)]  # expanded around it
    saved = json.loads((tmp_path / "local_search_config_step1.json").read_text())
    # inner.0: equal weights on (1, 1) and (2, 1): round(1.5) = 2 on the searched axis.
    assert saved["structure"] == {"a": [2, 2], "inner.0": [2, 1]}
    assert saved["search"]["step"] == 1


def test_fixed_structure_is_applied(tmp_path):
    path = tmp_path / "structure.json"
    path.write_text(json.dumps(dict(structure={"module.a": 3, "module.inner.0": [2, 1]})))
    model = net()
    RFSearchHook(
        "fixed_single_branch", search_cfg(), rfstructure_file=str(path), verbose=False
    ).init_model(model)
    assert model.a.dilation == (3, 3) and model.a.padding == (3, 3)
    assert model.inner[0].dilation == (2, 1) and model.inner[0].padding == (2, 0)
    assert model(torch.rand(1, 3, 8, 8)).shape == (1, 4, 8, 8)
    multi = net()
    RFSearchHook(
        "fixed_multi_branch", search_cfg(), rfstructure_file=str(path), verbose=False
    ).init_model(multi)
    assert isinstance(multi.a, Conv2dRFSearchOp) and multi.a.op_layer.dilation == (3, 3)
