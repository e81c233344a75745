"""BaseModule.init_weights: order, once-only, init-info log, Pretrained; the containers."""

import logging
import warnings

import pytest
import torch
import torch.nn as nn

from mmpar.runner import (
    BaseModule,
    ModuleDict,
    ModuleList,
    Sequential,
    base_module,
    save_checkpoint,
)


class Head(BaseModule):
    def __init__(self, init_cfg=None):
        super().__init__(init_cfg)
        self.fc = nn.Linear(4, 2)


class UserInit(nn.Module):
    """A plain module with its own init_weights (called by its BaseModule parent)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(2, 2)

    def init_weights(self):
        nn.init.constant_(self.proj.weight, -1.0)


class Net(BaseModule):
    def __init__(self, init_cfg=None, head_cfg=None):
        super().__init__(init_cfg)
        self.stem = nn.Linear(3, 4)
        self.head = Head(head_cfg)
        self.user = UserInit()
        self.untouched = nn.Linear(2, 2)


@pytest.fixture
def mmpar_logger(caplog):
    """The ``mmpar`` logger (which may not propagate) with caplog's handler attached."""
    logger = logging.getLogger("mmpar")
    logger.addHandler(caplog.handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    yield logger, caplog
    logger.removeHandler(caplog.handler)
    logger.setLevel(level)


def _messages(caplog):
    return [record.getMessage() for record in caplog.records]


def test_lower_level_init_cfg_wins_and_children_are_initialised():
    net = Net(
        init_cfg=dict(type="Constant", layer="Linear", val=1.0, bias=0.5),
        head_cfg=dict(type="Constant", layer="Linear", val=2.0),
    )
    assert not net.is_init and not net.head.is_init
    net.init_weights()
    assert net.is_init and net.head.is_init
    assert torch.all(net.stem.weight == 1) and torch.all(net.stem.bias == 0.5)
    assert torch.all(net.head.fc.weight == 2)  # the child's own config ran after the parent's
    assert torch.all(net.user.proj.weight == -1)  # a plain child's init_weights is called too
    assert torch.all(net.untouched.weight == 1)  # the parent's layer rule reached it
    assert all(not hasattr(m, "_params_init_info") for m in net.modules())


def test_second_call_is_a_no_op_with_a_warning():
    net = Net(init_cfg=dict(type="Constant", layer="Linear", val=1.0))
    net.init_weights()
    with torch.no_grad():
        net.stem.weight.fill_(9.0)
    with pytest.warns(UserWarning, match="init_weights of Net has been called more than once"):
        net.init_weights()
    assert torch.all(net.stem.weight == 9)
    assert all(not hasattr(m, "_params_init_info") for m in net.modules())


def test_init_info_is_logged_per_parameter(mmpar_logger):
    _, handler = mmpar_logger
    net = Net(
        init_cfg=dict(type="Normal", layer="Linear", std=0.02),
        head_cfg=dict(type="Constant", layer="Linear", val=2.0, bias=1.0),
    )
    net.init_weights()
    text = "\n".join(_messages(handler))
    assert "initialize Net with init_cfg" in text
    assert "stem.weight - torch.Size([4, 3]): \nNormalInit: mean=0, std=0.02, bias=0" in text
    assert "head.fc.weight - torch.Size([2, 4]): \nConstantInit: val=2.0, bias=1.0" in text
    assert (
        "user.proj.weight - torch.Size([2, 2]): \nInitialized by user-defined `init_weights` "
        "in UserInit" in text
    )


def test_untouched_parameters_are_reported_as_unchanged(mmpar_logger):
    _, handler = mmpar_logger
    Net(head_cfg=dict(type="Constant", layer="Conv2d", val=2.0)).init_weights()
    text = "\n".join(_messages(handler))
    assert (
        "head.fc.weight - torch.Size([2, 4]): \nThe value is the same before and after calling "
        "`init_weights` of Net" in text
    )


def test_init_info_goes_to_the_log_file_when_there_is_one(mmpar_logger, tmp_path):
    logger, handler = mmpar_logger
    file_handler = logging.FileHandler(tmp_path / "run.log")
    logger.addHandler(file_handler)
    try:
        Net(init_cfg=dict(type="Constant", layer="Linear", val=3.0)).init_weights()
    finally:
        logger.removeHandler(file_handler)
        file_handler.close()
    content = (tmp_path / "run.log").read_text()
    assert content.count("Name of parameter - Initialization information") == 1
    assert "stem.bias - torch.Size([4]): \nConstantInit: val=3.0, bias=0" in content
    assert not any("stem.bias - " in m for m in _messages(handler))  # not on the console


def test_pretrained_dict_loads_and_skips_the_children(tmp_path):
    torch.manual_seed(3)
    trained = Net()
    path = tmp_path / "net.pth"
    save_checkpoint(trained, str(path))
    net = Net(
        init_cfg=dict(type="Pretrained", checkpoint=str(path)),
        head_cfg=dict(type="Constant", layer="Linear", val=2.0),
    )
    net.init_weights()
    for key, value in net.state_dict().items():
        assert torch.equal(value, trained.state_dict()[key]), key  # head's cfg did not run
    assert net.is_init and not hasattr(net, "_params_init_info")

    backbone = Head(init_cfg=dict(type="Pretrained", checkpoint=str(path), prefix="head."))
    backbone.init_weights()
    assert torch.equal(backbone.fc.weight, trained.head.fc.weight)


class Grower(BaseModule):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def init_weights(self):
        super().init_weights()
        self.fc.weight = nn.Parameter(torch.zeros(2, 2))  # replaced, not initialised


def test_parameters_replaced_during_init_weights_are_an_error():
    parent = Sequential(Grower())
    with pytest.raises(AssertionError, match="appeared while init_weights ran"):
        parent.init_weights()
    assert not hasattr(parent, "_params_init_info")  # cleaned up even on failure


def test_containers_take_init_cfg():
    seq = Sequential(
        nn.Linear(2, 2),
        nn.Linear(2, 2),
        init_cfg=dict(
            type="Constant",
            layer="Linear",
            val=1.0,
            override=dict(name="1", type="Constant", val=4.0),
        ),
    )
    lst = ModuleList(
        [nn.Linear(2, 2), Head()], init_cfg=dict(type="Constant", layer="Linear", val=5.0)
    )
    dct = ModuleDict(
        {"a": nn.Conv2d(1, 1, 1)}, init_cfg=dict(type="Constant", layer="Conv2d", val=6.0)
    )
    for module in (seq, lst, dct):
        module.init_weights()
    assert torch.all(seq[0].weight == 1) and torch.all(seq[1].weight == 4)
    assert torch.all(lst[0].weight == 5) and torch.all(lst[1].fc.weight == 5)
    assert torch.all(dct["a"].weight == 6)
    assert len(seq) == 2 and isinstance(lst, nn.ModuleList) and list(dct) == ["a"]
    assert "init_cfg={'type': 'Constant'" in repr(dct)
    assert base_module.BaseModule is BaseModule and base_module.Sequential is Sequential


def test_init_cfg_is_copied_and_none_does_nothing():
    cfg = dict(type="Constant", layer="Linear", val=1.0)
    head = Head(cfg)
    cfg["val"] = 2.0
    assert head.init_cfg["val"] == 1.0
    plain = Head()
    before = plain.fc.weight.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plain.init_weights()
    assert torch.equal(plain.fc.weight, before) and plain.is_init
