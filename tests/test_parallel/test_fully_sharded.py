"""MMFullyShardedDataParallel in one process (a world of 1): steps, errors, config choice.

The multi-process behaviour (shards per rank, equality with DDP, checkpoints) is tested with
real torchrun runs elsewhere.
"""

import copy

import pytest
import torch
from torch import nn

from mmpar.apis.train import wrap_model
from mmpar.parallel import (
    MODULE_WRAPPERS,
    MMFullyShardedDataParallel,
    collate,
    is_fully_sharded,
    is_module_wrapper,
)

from ._ddp_worker import Net, _unwrap, make_samples


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return torch.relu(self.fc(x))


class Stacked(Net):
    """Net with two inner blocks, so wrap_modules has units to shard."""

    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())

    def forward(self, img, label):
        feats = self.blocks(img.sum(dim=(2, 3)) / 16.0)
        return nn.functional.cross_entropy(self.fc(feats), label)


def _sgd_steps(model, call, steps=3):
    opt = torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)
    losses = []
    for step in range(steps):
        opt.zero_grad()
        out = call(model, make_samples(step), opt)
        out["loss"].backward()
        opt.step()
        losses.append(out["loss"].item())
    return losses


def test_train_steps_match_the_plain_model(gloo_group):
    plain = Stacked()
    sharded = MMFullyShardedDataParallel(copy.deepcopy(plain), wrap_modules=["Block"])
    assert is_module_wrapper(sharded) and is_fully_sharded(sharded)
    assert is_fully_sharded(sharded.module) and is_fully_sharded(sharded.module.blocks[0])
    assert not is_fully_sharded(plain)

    ref = _sgd_steps(plain, lambda m, s, o: m.train_step(_unwrap(collate(s, 4)), o))
    got = _sgd_steps(sharded, lambda m, s, o: m.train_step(collate(s, 4), o))

    assert got == pytest.approx(ref, rel=1e-6)
    shards = dict(sharded.module.named_parameters())
    for name, value in plain.named_parameters():
        torch.testing.assert_close(shards[name].full_tensor(), value)
    assert "forward" not in sharded.module.__dict__  # the routed forward removed itself


def test_mixed_precision_computes_in_the_given_dtype(gloo_group):
    seen = []
    model = MMFullyShardedDataParallel(Stacked(), param_dtype="bfloat16", reduce_dtype="float32")
    model.module.fc.register_forward_hook(lambda mod, args, out: seen.append(out.dtype))
    out = model.train_step(collate(make_samples(0), 4), None)
    out["loss"].backward()
    assert seen == [torch.bfloat16]
    # The shards (and so the optimizer) keep float32.
    assert {p.dtype for p in model.parameters()} == {torch.float32}


def test_unknown_wrap_module_names_the_classes_there_are(gloo_group):
    with pytest.raises(ValueError, match=r"\['BasicBlock'\].*'Block'.*'Linear'"):
        MMFullyShardedDataParallel(Stacked(), wrap_modules=["BasicBlock"])


def test_bad_dtype_is_named(gloo_group):
    with pytest.raises(ValueError, match="param_dtype='float8'"):
        MMFullyShardedDataParallel(Net(), param_dtype="float8")


def test_needs_a_process_group():
    with pytest.raises(RuntimeError, match="not initialized.*torchrun"):
        MMFullyShardedDataParallel(Net())


def test_model_wrapper_config_chooses_the_wrapper(gloo_group):
    assert "MMFullyShardedDataParallel" in MODULE_WRAPPERS
    wrapped = wrap_model(
        Stacked(), True, wrapper_cfg=dict(type="MMFullyShardedDataParallel", wrap_modules="Block")
    )
    assert isinstance(wrapped, MMFullyShardedDataParallel)
    ddp = wrap_model(Net(), True, wrapper_cfg=dict(find_unused_parameters=True))
    assert type(ddp).__name__ == "MMDistributedDataParallel" and ddp.find_unused_parameters


def test_model_wrapper_needs_distributed_training():
    with pytest.raises(ValueError, match="needs distributed training.*torchrun"):
        wrap_model(Net(), False, wrapper_cfg=dict(type="MMFullyShardedDataParallel"))


def test_a_compiled_model_trains_sharded(gloo_group):
    from mmpar.runner.model_setup.compile import compile_model

    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    plain = Stacked()
    compiled = compile_model(copy.deepcopy(plain), dict(backend="aot_eager"), 1)
    sharded = MMFullyShardedDataParallel(compiled, wrap_modules=["Block"])

    ref = _sgd_steps(plain, lambda m, s, o: m.train_step(_unwrap(collate(s, 4)), o))
    got = _sgd_steps(sharded, lambda m, s, o: m.train_step(collate(s, 4), o))

    assert got == pytest.approx(ref, rel=1e-6)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] > 0  # the compiled path ran


def test_bfloat16_parameters_evaluate_to_float32_results(gloo_group):
    # configs/cifar10_resnet_fsdp.py suggests param_dtype='bfloat16': the first evaluation
    # (forward(return_loss=False) -> the head's scores as numpy arrays) must work.
    from mmpar.models import build_classifier

    torch.manual_seed(0)
    classifier = build_classifier(
        dict(
            type="ImageClassifier",
            backbone=dict(type="LeNet", in_channels=1, input_size=8, padding=2),
            head=dict(type="LinearClsHead", num_classes=10, in_channels=84),
        )
    )
    model = MMFullyShardedDataParallel(classifier, param_dtype="bfloat16")
    img = torch.randn(2, 1, 8, 8)
    with torch.no_grad():
        scores = model(img=img, return_loss=False)
    assert len(scores) == 2 and scores[0].dtype == "float32" and scores[0].shape == (10,)
    assert abs(float(scores[0].sum()) - 1.0) < 1e-3


def test_bfloat16_parameters_return_float32_tensors_from_the_root(gloo_group):
    seen = []
    model = MMFullyShardedDataParallel(Stacked(), param_dtype="bfloat16", wrap_modules=["Block"])
    model.module.blocks[0].register_forward_hook(lambda mod, args, out: seen.append(out.dtype))
    batch = _unwrap(collate(make_samples(0), 4))
    loss = model(batch["img"], batch["label"])
    assert loss.dtype == torch.float32
    assert seen == [torch.bfloat16]  # inner units keep computing (and returning) bfloat16
