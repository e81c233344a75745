"""get_model_complexity_info on a tiny network whose FLOPs are counted by hand below."""

import io

import pytest
import torch
from torch import nn

from mmpar.cnn import Conv2d, Linear, get_model_complexity_info
from mmpar.cnn.utils import flops_counter as fc


def tiny_net():
    # Input 3 x 8 x 8 (one sample):
    #   conv 3->4, k3, bias: 6x6 output; 3*3*3*4 = 108 multiply-adds per position x 36
    #        positions = 3888, plus 4 * 36 = 144 for the bias             -> 4032
    #   BN(4), affine: 2 per element, 4 * 36 elements                      ->  288
    #   ReLU: 1 per output element                                          ->  144
    #   MaxPool2d(2): 1 per input element                                   ->  144
    #   Linear 36 -> 5: input elements x out features (bias not counted)   ->  180
    #   total                                                               -> 4788
    # Parameters: conv 108 + 4, BN 4 + 4, linear 36 * 5 + 5 = 305.
    return nn.Sequential(
        nn.Conv2d(3, 4, 3),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(36, 5),
    )


def test_counts_of_the_hand_computed_network():
    flops, params = get_model_complexity_info(
        tiny_net(), (3, 8, 8), print_per_layer_stat=False, as_strings=False
    )
    assert (flops, params) == (4788.0, 305)


def test_strings_use_mmcvs_units():
    flops, params = get_model_complexity_info(tiny_net(), (3, 8, 8), print_per_layer_stat=False)
    assert (flops, params) == ("0.0 GFLOPs", "305")
    assert fc.flops_to_string(4788.0, units=None) == "4.79 KFLOPs"
    # The examples of mmcv's docstrings.
    assert fc.flops_to_string(1e9) == "1.0 GFLOPs"
    assert fc.flops_to_string(2e5, "MFLOPs") == "0.2 MFLOPs"
    assert fc.flops_to_string(3e-9, None) == "3e-09 FLOPs"
    assert fc.params_to_string(1e9) == "1000.0 M"
    assert fc.params_to_string(2e5) == "200.0 k"
    assert fc.params_to_string(3e-9) == "3e-09"
    assert fc.params_to_string(2e5, "K") == "200.0 K"
    assert fc.flops_to_string(12345678, "KFLOPs", precision=1) == "12345.7 KFLOPs"


def test_per_layer_printout():
    out = io.StringIO()
    get_model_complexity_info(tiny_net(), (3, 8, 8), ost=out)
    lines = out.getvalue().splitlines()
    assert lines[1] == "  0.0 M, 100.000% Params, 0.0 GFLOPs, 100.000% FLOPs, "
    # conv: 112 / 305 params, 4032 / 4788 FLOPs; BN: 8 / 305, 288 / 4788.
    assert lines[2] == (
        "  (0): Conv2d(0.0 M, 36.721% Params, 0.0 GFLOPs, 84.211% FLOPs, "
        "3, 4, kernel_size=(3, 3), stride=(1, 1))"
    )
    assert lines[3].startswith(
        "  (1): BatchNorm2d(0.0 M, 2.623% Params, 0.0 GFLOPs, 6.015% FLOPs, 4,"
    )
    # The printing leaves the modules' own repr as it was.
    assert "Params" not in repr(tiny_net())


def test_hooks_are_removed_and_the_mode_restored():
    net = tiny_net()
    net.train()
    get_model_complexity_info(net, (3, 8, 8), print_per_layer_stat=False)
    assert net.training
    assert all(not m._forward_hooks for m in net.modules())
    assert not any(hasattr(m, "__flops_handle__") for m in net.modules())
    assert not hasattr(net, "__batch_counter_handle__")
    assert "extra_repr" not in net[0].__dict__


def test_input_constructor_passes_keyword_arguments():
    def one_sample(shape):
        return dict(input=torch.zeros(1, *shape))

    # Keyword inputs carry no batch size the counter can see: it assumes 1, as mmcv does.
    with pytest.warns(UserWarning, match="batch size is 1"):
        flops, _ = get_model_complexity_info(
            tiny_net(),
            (3, 8, 8),
            print_per_layer_stat=False,
            as_strings=False,
            input_constructor=one_sample,
        )
    assert flops == 4788.0


def test_mmpar_wrappers_and_exact_types():
    wrapped = nn.Sequential(Conv2d(3, 4, 3), nn.Flatten(), Linear(144, 2))
    flops, _ = get_model_complexity_info(
        wrapped, (3, 8, 8), print_per_layer_stat=False, as_strings=False
    )
    assert flops == 4032 + 144 * 2
    assert fc.is_supported_instance(Conv2d(1, 1, 1)) and fc.is_supported_instance(nn.ReLU())

    class MyConv(nn.Conv2d):
        pass

    # Matching is by exact type, as in mmcv (so the numbers agree with mmcv-computed tables).
    assert not fc.is_supported_instance(MyConv(1, 1, 1))


def test_more_layer_kinds():
    # deconv 2->3, k2 s2, bias on a 2x4x4 input: 2*2*2*3 = 24 per input position x 16 = 384,
    # bias 3 * 8 * 8 = 192; Upsample x2 on 3x8x8: 3 * 16 * 16 = 768 output elements;
    # GroupNorm without affine: 768; LayerNorm(16) with affine: 2 * 768.
    net = nn.Sequential(
        nn.ConvTranspose2d(2, 3, 2, stride=2),
        nn.Upsample(scale_factor=2),
        nn.GroupNorm(1, 3, affine=False),
        nn.LayerNorm(16),
    )
    flops, params = get_model_complexity_info(
        net, (2, 4, 4), print_per_layer_stat=False, as_strings=False
    )
    assert flops == 384 + 192 + 768 + 768 + 2 * 768
    assert params == 2 * 3 * 2 * 2 + 3 + 16 + 16


def test_module_level_counting_api():
    net = fc.add_flops_counting_methods(tiny_net())
    with pytest.raises(ZeroDivisionError, match="forward"):
        net.compute_average_flops_cost()
    net.start_flops_count()
    net(torch.zeros(3, 3, 8, 8))
    assert net.compute_average_flops_cost() == (4788.0, 305)
    net.stop_flops_count()
    net(torch.zeros(1, 3, 8, 8))  # not counted any more
    assert net.compute_average_flops_cost() == (4788.0, 305)
    with pytest.warns(UserWarning, match="already defined"):  # mmcv warns on a re-count too
        net.reset_flops_count()
    assert net.__batch_counter__ == 0 and net[0].__flops__ == 0


def test_bad_arguments_are_assertions():
    with pytest.raises(AssertionError):
        get_model_complexity_info(tiny_net(), [3, 8, 8])
    with pytest.raises(AssertionError):
        get_model_complexity_info(tiny_net(), ())
    with pytest.raises(AssertionError):
        get_model_complexity_info(lambda x: x, (3,))


def test_model_without_parameters_prints_without_dividing_by_zero():
    out = io.StringIO()
    flops, params = get_model_complexity_info(nn.Sequential(nn.ReLU()), (2, 2), ost=out)
    assert (flops, params) == ("0.0 GFLOPs", "0")
    assert "0.000% Params" in out.getvalue()
