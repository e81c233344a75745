"""The config key ``compile``: compiled steps under both wrappers, clean checkpoints, errors.

The dynamo ``eager`` backend (or a counting backend) stands in for inductor: what is tested is
which code runs compiled and what the checkpoints hold, not the compiler. The real inductor
backend is exercised by tests/e2e/test_compile_tool.py (its failure without a C++ compiler).
"""

import copy
import math
import os
import pickle
from collections import OrderedDict

import pytest
import torch
from torch import nn
from torch._dynamo.testing import CompileCounter

from mmpar import Config
from mmpar.apis import build_train_runner, train_model
from mmpar.datasets import build_dataset
from mmpar.models import build_classifier
from mmpar.models.classifiers.image import ImageClassifier, parse_losses
from mmpar.parallel import MMDataParallel, MMDistributedDataParallel
from mmpar.runner import get_state_dict, load_checkpoint
from mmpar.runner.checkpointing.model_state import match_compiled_keys
from mmpar.runner.model_setup.compile import (
    CompileBackendError,
    compile_model,
    compile_options,
)
from mmpar.utils import set_random_seed
from mmpar.utils.registry import ConfigArgumentError

torch.set_num_threads(1)

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LENET = dict(
    type="ImageClassifier",
    backbone=dict(type="LeNet", in_channels=1, input_size=8, padding=2),
    head=dict(type="LinearClsHead", num_classes=10, in_channels=84),
)


class DirectClassifier(ImageClassifier):
    """An mmcv-style model whose train_step calls forward_train, not ``self(**data)``."""

    def train_step(self, data, optimizer=None, **kwargs):
        loss, log_vars = parse_losses(self.forward_train(**data))
        return dict(loss=loss, log_vars=log_vars, num_samples=len(data["img"]))


def _model(cls=ImageClassifier):
    set_random_seed(0)
    cfg = dict(LENET)
    cfg.pop("type")
    return cls(**cfg)


def _batch(n=8):
    gen = torch.Generator().manual_seed(1)
    return dict(img=torch.randn(n, 1, 8, 8, generator=gen), gt_label=torch.arange(n) % 10)


@pytest.mark.parametrize("wrapper", ["MMDataParallel", "MMDistributedDataParallel"])
@pytest.mark.parametrize("cls", [ImageClassifier, DirectClassifier])
def test_train_step_runs_compiled_code_under_both_wrappers(request, wrapper, cls):
    if wrapper == "MMDistributedDataParallel":
        request.getfixturevalue("gloo_group")  # parse_losses all-reduces inside the step
    counter = CompileCounter()
    eager, compiled = _model(cls), compile_model(_model(cls), dict(backend=counter))
    assert type(compiled) is cls  # in place: no OptimizedModule, same class and keys
    wrap = {
        "MMDataParallel": lambda m: MMDataParallel(m, device_ids=[-1]),
        "MMDistributedDataParallel": lambda m: MMDistributedDataParallel(m),
    }[wrapper]
    outputs = []
    for model in (eager, compiled):
        out = wrap(model).train_step(_batch(), None)
        out["loss"].backward()
        outputs.append(out)
    # The step was traced: conv, pool, linear and loss ops ran in a compiled graph.
    assert counter.frame_count >= 1 and counter.op_count >= 10
    assert outputs[0]["log_vars"] == outputs[1]["log_vars"]
    for (name, p), q in zip(eager.named_parameters(), compiled.parameters()):
        assert torch.equal(p.grad, q.grad), name
    assert list(compiled.state_dict()) == list(eager.state_dict())


def test_aot_eager_compiles_the_backward_to_the_same_gradients():
    eager, model = _model(), compile_model(_model(), dict(backend="aot_eager"))
    for m in (eager, model):
        MMDataParallel(m, device_ids=[-1]).train_step(_batch(), None)["loss"].backward()
    for (name, p), q in zip(eager.named_parameters(), model.parameters()):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-5, atol=1e-6, msg=name)


def test_eval_forward_and_val_step_compile_and_switch_modes():
    counter = CompileCounter()
    eager, model = _model(), compile_model(_model(), dict(backend=counter))
    wrapped = MMDataParallel(model, device_ids=[-1])
    wrapped.train_step(_batch(), None)["loss"].backward()
    trained = counter.frame_count
    model.eval()
    eager.eval()
    with torch.no_grad():
        scores = wrapped(img=_batch()["img"], return_loss=False)
        val = wrapped.val_step(_batch(), None)
    assert counter.frame_count > trained  # eval mode and no_grad: recompiled, not eager
    with torch.no_grad():
        expected = eager(img=_batch()["img"], return_loss=False)
        assert val["log_vars"] == eager.val_step(_batch())["log_vars"]
    for got, want in zip(scores, expected):
        assert got.shape == want.shape and abs(got - want).max() < 1e-6
    model.train()
    assert wrapped.train_step(_batch(), None)["loss"].requires_grad


def test_backend_failure_at_the_first_step_is_one_clear_error():
    def broken(gm, example_inputs):
        raise OSError("no working compiler\nsecond line of detail")

    model = compile_model(_model(), dict(backend=broken))
    with pytest.raises(CompileBackendError) as info:
        MMDataParallel(model, device_ids=[-1]).train_step(_batch(), None)
    message = str(info.value)
    assert "\n" not in message and message.startswith("compile: ")
    assert "'broken'" in message and "OSError: no working compiler" in message
    assert "backend='aot_eager'" in message and "remove compile" in message


@pytest.mark.parametrize(
    "value, error, words",
    [
        ("inductor", ConfigArgumentError, ["compile: expected True, a dict", "'inductor'"]),
        (dict(bakend="eager"), ConfigArgumentError, ['"bakend"', "Did you mean: backend"]),
        (dict(fullgraph="yes"), ConfigArgumentError, ["compile.fullgraph must be bool"]),
        (dict(backend="indcutor"), ValueError, ["compile.backend: 'indcutor'", "'inductor'"]),
        (dict(mode="fast"), ValueError, ["compile: torch.compile refused", "max-autotune"]),
    ],
)
def test_bad_compile_values_are_refused_naming_the_key(value, error, words):
    with pytest.raises(error) as info:
        compile_model(_model(), value)
    for word in words:
        assert word in str(info.value)


def test_unknown_backend_lists_the_valid_ones_and_eager_values_compile_nothing():
    with pytest.raises(ValueError, match=r"Valid backends .*'aot_eager'.*'eager'.*'inductor'"):
        compile_options(dict(backend="nope"))
    assert compile_options(True) == {}
    for value in (None, False):
        model = _model()
        assert compile_options(value) is None and compile_model(model, value) is model
        assert "train_step" not in vars(model)


def _digits_cfg(work_dir, **changes):
    cfg = Config.fromfile(os.path.join(REPO, "configs", "digits_lenet.py"))
    cfg.merge_from_dict(
        {
            "runner.max_epochs": 2,
            "data.samples_per_gpu": 128,
            "log_config.interval": 100,
            "checkpoint_config": dict(interval=1),
            "seed": 0,
            "work_dir": str(work_dir),
            **changes,
        }
    )
    return cfg


def _run(cfg, validate=False):
    set_random_seed(0)
    return train_model(
        build_classifier(cfg.model), build_dataset(cfg.data.train), cfg, validate=validate
    )


def _weights(path):
    return torch.load(path, weights_only=True)["state_dict"]


def _names(obj):
    """Every dict key and string anywhere in ``obj`` (a checkpoint)."""
    if isinstance(obj, dict):
        meta = getattr(obj, "_metadata", {}) or {}
        return [*map(str, obj), *map(str, meta), *(n for v in obj.values() for n in _names(v))]
    if isinstance(obj, (list, tuple)):
        return [n for v in obj for n in _names(v)]
    return [obj] if isinstance(obj, str) else []


def test_checkpoints_round_trip_between_compiled_and_eager_runs(tmp_path):
    eager = _run(_digits_cfg(tmp_path / "eager"))
    compiled_cfg = _digits_cfg(tmp_path / "compile", compile=dict(backend="eager", dynamic=False))
    compiled = _run(compiled_cfg, validate=True)  # EvalHook on the compiled model each epoch
    ckpt = torch.load(tmp_path / "compile" / "epoch_2.pth", weights_only=True)
    assert not [n for n in _names(ckpt) if "_orig_mod" in n or "_compiled" in n]
    # The compiled run's checkpoint loads strictly into an uncompiled model.
    plain = build_classifier(compiled_cfg.model)
    load_checkpoint(plain, str(tmp_path / "compile" / "epoch_2.pth"), strict=True)
    for key, value in get_state_dict(compiled.model).items():
        assert torch.equal(plain.state_dict()[key], value), key
    # The 'eager' backend computes what eager mode does: both runs end with the same weights.
    final = _weights(tmp_path / "eager" / "epoch_2.pth")
    for key, value in ckpt["state_dict"].items():
        assert torch.equal(final[key], value), key
    # Exact resume across the switch: eager epoch 1 -> compiled epoch 2, and the reverse.
    for first, second in ((tmp_path / "eager", "compile"), (tmp_path / "compile", "eager")):
        changes = dict(resume_from=str(first / "epoch_1.pth"))
        if second == "compile":
            changes["compile"] = dict(backend="eager", dynamic=False)
        _run(_digits_cfg(tmp_path / f"resumed-{second}", **changes))
        resumed = _weights(tmp_path / f"resumed-{second}" / "epoch_2.pth")
        for key, value in final.items():
            assert torch.equal(resumed[key], value), (second, key)
    assert eager.epoch == compiled.epoch == 2


def test_build_refuses_an_unknown_backend_before_writing_anything(tmp_path):
    cfg = _digits_cfg(tmp_path / "work", compile=dict(backend="inductorr"))
    with pytest.raises(ValueError, match="compile.backend: 'inductorr'"):
        build_train_runner(build_classifier(cfg.model), build_dataset(cfg.data.train), cfg)
    assert not (tmp_path / "work").exists() or not os.listdir(tmp_path / "work")


def test_orig_mod_keys_of_torch_compile_wrappers_are_stripped_both_ways(tmp_path):
    model = _model()
    wrapped = torch.compile(model, backend="eager")  # OptimizedModule: '_orig_mod.' keys
    assert all(k.startswith("_orig_mod.") for k in wrapped.state_dict())
    path = tmp_path / "elsewhere.pth"
    torch.save(dict(state_dict=MMDataParallel(wrapped, device_ids=[-1]).state_dict()), path)
    plain = _model()
    with torch.no_grad():
        for p in plain.parameters():
            p.zero_()
    load_checkpoint(plain, str(path), strict=True)  # 'module._orig_mod.' -> ''
    for key, value in model.state_dict().items():
        assert torch.equal(plain.state_dict()[key], value), key
    # Saving a model with a compiled child gives clean keys; clean keys load back into it.
    holder = nn.Sequential(OrderedDict(net=torch.compile(_model(), backend="eager")))
    saved = get_state_dict(holder)
    assert saved and not [k for k in [*saved, *saved._metadata] if "_orig_mod" in k]
    assert list(match_compiled_keys(saved, holder.state_dict())) == list(holder.state_dict())
    load_checkpoint(holder, str(path), strict=True, revise_keys=[(r"^module\._orig_mod", "net")])


def test_copies_of_a_compiled_model_step_themselves_not_the_original():
    model = compile_model(_model(), dict(backend="eager"))
    twin = copy.deepcopy(model)
    with torch.no_grad():
        for p in twin.parameters():
            p.zero_()  # all-zero logits: the loss is log(10) for the copy only
    original = model.train_step(_batch())["log_vars"]["loss"]
    assert twin.train_step(_batch())["log_vars"]["loss"] == pytest.approx(math.log(10))
    assert model.train_step(_batch())["log_vars"]["loss"] == original != pytest.approx(2.3026)
    restored = pickle.loads(pickle.dumps(model))
    assert restored.val_step(_batch())["log_vars"]["loss"] == pytest.approx(original)


def test_replicating_a_compiled_model_in_one_process_is_refused():
    with pytest.raises(ValueError, match="replicated over 2 devices"):
        compile_model(_model(), True, replicas=2)
