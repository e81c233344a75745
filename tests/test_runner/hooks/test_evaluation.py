"""EvalHook / DistEvalHook: schedule, metrics in the log buffer, best checkpoint, resume, errors."""

import logging
import os
import textwrap
from types import SimpleNamespace

import pytest
import torch
from helpers import TinyModel, run_tool, torchrun_args
from torch import nn
from torch.utils.data import DataLoader, Dataset

from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.evaluation import DistEvalHook, EvalHook, infer_rule
from mmpar.runner.log_buffer import LogBuffer
from mmpar.utils.registry import ConfigArgumentError

torch.set_num_threads(1)


class ScoreDataset(Dataset):
    """Items ``{'x': [i]}``; ``evaluate`` returns the next of a fixed sequence of scores."""

    def __init__(self, scores=(), n=6, key="accuracy"):
        self.scores = list(scores)
        self.n = n
        self.key = key
        self.seen = []

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)])}

    def evaluate(self, results, logger=None, **kwargs):
        self.seen.append((list(results), kwargs))
        return {self.key: self.scores[len(self.seen) - 1], "other": 1.0}


class Doubler(nn.Module):
    """Test forward: one result per sample (2 * x); records the grad and train mode it ran in."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.ones(1))
        self.grad_enabled = []
        self.training_during_forward = []

    def forward(self, x, return_loss=True):
        assert not return_loss
        self.grad_enabled.append(torch.is_grad_enabled())
        self.training_during_forward.append(self.training)
        return [float(v) for v in (2 * x).flatten()]


class FakeRunner:
    def __init__(self, hooks, work_dir, iters_per_epoch=2, max_epochs=4, meta=None):
        self.hooks = hooks
        self.work_dir = str(work_dir)
        self.model = Doubler()
        self.log_buffer = LogBuffer()
        self.logger = logging.getLogger("test_hooks_eval")
        self.meta = meta
        self.rank = 0
        self.epoch = self.iter = self.inner_iter = 0
        self.data_loader = list(range(iters_per_epoch))
        self.max_epochs = max_epochs
        self.max_iters = max_epochs * iters_per_epoch
        self.mode = "train"
        self.saved = []

    def save_checkpoint(self, out_dir, filename_tmpl, create_symlink=True, **kwargs):
        self.saved.append(filename_tmpl)
        torch.save({"meta": dict(self.meta)}, os.path.join(out_dir, filename_tmpl))

    def call(self, stage):
        for hook in self.hooks:
            getattr(hook, stage)(self)

    def run(self, epochs=None):
        self.call("before_run")
        while self.epoch < (epochs or self.max_epochs):
            self.call("before_train_epoch")
            for i in range(len(self.data_loader)):
                self.inner_iter = i
                self.call("before_train_iter")
                self.call("after_train_iter")
                self.iter += 1
            self.call("after_train_epoch")
            self.epoch += 1
        self.call("after_run")


def fake_test(model, loader):
    return [0] * len(loader.dataset)


def make_hook(scores=(0.1,) * 10, cls=EvalHook, n=6, key="accuracy", **kwargs):
    kwargs.setdefault("test_fn", fake_test)
    return cls(DataLoader(ScoreDataset(scores, n=n, key=key), batch_size=2), **kwargs)


def test_registered():
    assert HOOKS.get("EvalHook") is EvalHook and HOOKS.get("DistEvalHook") is DistEvalHook


@pytest.mark.parametrize(
    "kwargs, epochs",
    [
        (dict(), [1, 2, 3, 4]),
        (dict(interval=2), [2, 4]),
        (dict(start=3), [3, 4]),
        (dict(start=1, interval=3), [1, 4]),
        # start=0: also once before training (recorded as runner.epoch + 1 == 1), as in mmcv.
        (dict(start=0, interval=2), [1, 2, 4]),
    ],
)
def test_schedule_by_epoch(tmp_path, kwargs, epochs):
    hook = make_hook(**kwargs)
    seen = []
    hook.evaluate = lambda runner, results: seen.append(runner.epoch + 1)
    FakeRunner([hook], tmp_path).run()
    assert seen == epochs


def test_schedule_by_iter(tmp_path):
    hook = make_hook(by_epoch=False, interval=3)
    seen = []
    hook.evaluate = lambda runner, results: seen.append(runner.iter + 1)
    FakeRunner([hook], tmp_path, iters_per_epoch=4, max_epochs=2).run()
    assert seen == [3, 6]


def test_metrics_go_to_log_buffer(tmp_path):
    hook = make_hook([0.5], metric="top")
    runner = FakeRunner([hook], tmp_path)
    runner.run(epochs=1)
    out = runner.log_buffer.output
    assert runner.log_buffer.ready
    assert dict(out) == {"eval_iter_num": 3, "accuracy": 0.5, "other": 1.0}
    assert hook.dataloader.dataset.seen == [([0] * 6, {"metric": "top"})]


def test_save_best_keeps_only_best(tmp_path):
    hook = make_hook([0.0, 0.5, 0.25, 0.75], save_best="auto")
    runner = FakeRunner([hook], tmp_path, meta={})
    runner.run()
    # 0.0 is a valid first best (mmcv skipped falsy scores).
    assert runner.saved == [
        "best_accuracy_epoch_1.pth",
        "best_accuracy_epoch_2.pth",
        "best_accuracy_epoch_4.pth",
    ]
    assert sorted(os.listdir(tmp_path)) == ["best_accuracy_epoch_4.pth"]
    best = os.path.join(str(tmp_path), "best_accuracy_epoch_4.pth")
    assert runner.meta["hook_msgs"] == {"best_score": 0.75, "best_ckpt": best}
    assert hook.state_dict() == {
        "evaluated_at": 4,
        "best_score": 0.75,
        "best_ckpt": "best_accuracy_epoch_4.pth",  # relative to the work dir (issue 36)
        "key_indicator": "accuracy",
        "rule": "greater",
    }


def test_save_best_less_rule_by_iter(tmp_path):
    hook = make_hook([3.0, 1.0, 2.0], key="val_loss", save_best="val_loss", by_epoch=False)
    assert hook.rule == "less"
    runner = FakeRunner([hook], tmp_path, iters_per_epoch=3, max_epochs=1)
    runner.run()
    assert sorted(os.listdir(tmp_path)) == ["best_val_loss_iter_2.pth"]


def test_meta_none_is_created(tmp_path):
    hook = make_hook([0.5], save_best="accuracy")
    runner = FakeRunner([hook], tmp_path, meta=None)
    runner.run(epochs=1)
    assert runner.meta["hook_msgs"]["best_score"] == 0.5


def test_resume_from_state_does_not_save_worse(tmp_path):
    first = make_hook([0.5, 0.75], save_best="auto")
    runner = FakeRunner([first], tmp_path, meta={}, max_epochs=2)
    runner.run()
    state = first.state_dict()

    second = make_hook([0.625, 0.875], save_best="auto")
    second.load_state_dict(state)
    resumed = FakeRunner([second], tmp_path, meta={}, max_epochs=4)
    resumed.epoch = resumed.iter = 2
    resumed.run()
    assert resumed.saved == ["best_accuracy_epoch_4.pth"]  # 0.625 < 0.75 was not saved
    assert sorted(os.listdir(tmp_path)) == ["best_accuracy_epoch_4.pth"]


def test_resume_from_meta_hook_msgs(tmp_path):
    old = tmp_path / "best_accuracy_epoch_1.pth"
    old.write_text("x")
    meta = {"hook_msgs": {"best_score": 0.5, "best_ckpt": str(old)}}
    hook = make_hook([0.25, 0.625], save_best="accuracy")
    runner = FakeRunner([hook], tmp_path, meta=meta, max_epochs=3)
    runner.epoch = runner.iter = 1
    runner.run()
    assert runner.saved == ["best_accuracy_epoch_3.pth"]
    assert not old.exists()


def test_start_evaluates_once_when_resuming_after_start(tmp_path):
    hook = make_hook(start=1, interval=2)
    seen = []
    hook.evaluate = lambda runner, results: seen.append((runner.epoch, runner.inner_iter))
    runner = FakeRunner([hook], tmp_path, max_epochs=4)
    runner.epoch = runner.iter = 2
    runner.inner_iter = -1
    runner.run()
    # Once before the resumed 3rd epoch runs, then after it (epoch 3 == start + interval).
    assert seen == [(2, -1), (2, 1)]


def test_default_test_fn_restores_train_mode(tmp_path):
    hook = EvalHook(DataLoader(ScoreDataset([0.5], n=5), batch_size=2))
    runner = FakeRunner([hook], tmp_path)
    runner.model.train()
    runner.run(epochs=1)
    assert runner.model.training
    assert runner.model.training_during_forward == [False, False, False]  # tested in eval mode
    assert runner.model.grad_enabled == [False, False, False]
    results, _ = hook.dataloader.dataset.seen[0]
    assert results == [0.0, 2.0, 4.0, 6.0, 8.0]


@pytest.mark.parametrize(
    "key, rule",
    [
        ("accuracy", "greater"),
        ("top1", "greater"),
        ("mAP", "greater"),
        ("bbox_mAP_50", "greater"),
        ("AR@100", "greater"),
        ("loss", "less"),
        ("val_loss", "less"),
        ("psnr", None),
    ],
)
def test_infer_rule(key, rule):
    assert infer_rule(key, EvalHook._default_greater_keys, EvalHook._default_less_keys) == rule


def test_custom_keys_extend_defaults():
    hook = make_hook(save_best="psnr", greater_keys="psnr")
    assert hook.rule == "greater" and hook.greater_keys == ("psnr",)  # replaces, as mmcv


def test_bad_arguments():
    with pytest.raises(ValueError, match="interval must be a positive int"):
        make_hook(interval=0)
    with pytest.raises(ValueError, match=r"valid rules are \['greater', 'less'\]"):
        make_hook(save_best="accuracy", rule="bigger")
    with pytest.raises(ValueError, match="cannot infer .* 'psnr'"):
        make_hook(save_best="psnr")
    with pytest.raises(ValueError, match="start"):
        make_hook(start=-1)
    with pytest.raises(TypeError, match="DataLoader"):
        EvalHook([1, 2, 3])
    # A dataset without evaluate builds (mmcv demands it only when scoring) and fails there.
    hook = EvalHook(DataLoader([1, 2]))
    with pytest.raises(TypeError, match="has no evaluate"):
        hook.evaluate(SimpleNamespace(logger=None), [1, 2])
    with pytest.raises(ValueError, match="only local files"):
        make_hook(file_client_args={"backend": "petrel"})


def test_best_checkpoint_attributes_read_and_write_through_the_hook(tmp_path):
    """mmcv's attribute names keep working now that a BestCheckpoint keeps the state."""
    hook = make_hook([0.5], save_best="auto")
    assert (hook.key_indicator, hook.rule, hook.best_ckpt_path) == ("auto", None, None)
    FakeRunner([hook], tmp_path, meta={}).run(epochs=1)
    assert (hook.key_indicator, hook.rule, hook.best_score) == ("accuracy", "greater", 0.5)
    assert hook.compare_func(0.75, 0.5) and not hook.compare_func(0.25, 0.5)
    assert hook.best_ckpt_path == os.path.join(str(tmp_path), "best_accuracy_epoch_1.pth")
    hook.best_ckpt_path = "elsewhere.pth"
    assert hook.best_checkpoint.best_ckpt_path == "elsewhere.pth"
    assert hook.state_dict()["best_ckpt"] == "elsewhere.pth"
    assert hook.rule_map is EvalHook.rule_map and EvalHook.init_value_map["less"] == float("inf")


def test_dist_eval_hook_takes_mmcvs_arguments_in_mmcvs_order():
    import inspect

    assert list(inspect.signature(DistEvalHook).parameters) == [
        "dataloader",
        "start",
        "interval",
        "by_epoch",
        "save_best",
        "rule",
        "test_fn",
        "greater_keys",
        "less_keys",
        "broadcast_bn_buffer",
        "tmpdir",
        "gpu_collect",
        "out_dir",
        "file_client_args",
        "eval_kwargs",
    ]
    loader = DataLoader(ScoreDataset(), batch_size=2)
    hook = DistEvalHook(
        loader, 2, 3, False, "accuracy", None, fake_test, None, "x", False, "tmp", True, "out", None
    )
    assert (hook.start, hook.interval, hook.by_epoch, hook.save_best) == (2, 3, False, "accuracy")
    assert hook.test_fn is fake_test and hook.less_keys[-1] == "x"
    assert (hook.broadcast_bn_buffer, hook.tmpdir, hook.gpu_collect) == (False, "tmp", True)
    assert hook.out_dir == "out" and hook.eval_kwargs == {}
    short = DistEvalHook(loader, 1, 2, gpu_collect=True, metric="top")
    assert (short.start, short.interval, short.eval_kwargs) == (1, 2, {"metric": "top"})
    assert short.broadcast_bn_buffer and short.gpu_collect
    assert short.test_fn.func.__name__ == "multi_device_test"
    # An own argument by position, the next one by name: both are taken.
    mixed = DistEvalHook(loader, 1, 1, True, None, None, None, None, None, False, gpu_collect=True)
    assert (mixed.broadcast_bn_buffer, mixed.gpu_collect) == (False, True)
    with pytest.raises(TypeError, match="multiple values for argument 'broadcast_bn_buffer'"):
        DistEvalHook(loader, 1, 1, True, None, None, None, None, None, False, broadcast_bn_buffer=1)
    with pytest.raises(TypeError, match="multiple values for argument 'out_dir'"):
        DistEvalHook(
            loader, 1, 1, True, None, None, None, None, None, True, None, False, "a", out_dir="b"
        )


class StrictScoreDataset(ScoreDataset):
    """``evaluate`` takes named options only (no ``**kwargs``), like mmcls datasets."""

    def evaluate(self, results, metric="accuracy", metric_options=None, logger=None):
        return super().evaluate(
            results, logger=logger, metric=metric, metric_options=metric_options
        )


def strict_hook(cls=EvalHook, **kwargs):
    return cls(DataLoader(StrictScoreDataset([0.5], n=4)), test_fn=fake_test, **kwargs)


def test_unknown_eval_argument_fails_when_the_hook_is_built(tmp_path):
    """Not at the first evaluation, where ``evaluate(**eval_kwargs)`` would reject it."""
    with pytest.raises(ConfigArgumentError) as info:
        strict_hook(intervl=2)
    assert str(info.value) == (
        'EvalHook: unexpected keyword argument "intervl". Did you mean: interval? '
        "Valid arguments: EvalHook: start, interval, by_epoch, save_best, rule, test_fn, "
        "greater_keys, less_keys, out_dir, file_client_args; StrictScoreDataset.evaluate "
        "(gets the others): metric, metric_options"
    )
    with pytest.raises(ConfigArgumentError, match='"metrc". Did you mean: metric?'):
        strict_hook(metrc="accuracy")
    with pytest.raises(ConfigArgumentError, match=r"broadcast_bn_bufer.*broadcast_bn_buffer"):
        strict_hook(DistEvalHook, broadcast_bn_bufer=False)
    with pytest.raises(ConfigArgumentError, match=r"gpu_collect is an argument of DistEvalHook"):
        strict_hook(gpu_collect=True)  # fine for DistEvalHook, not for EvalHook
    # evaluate's own options are passed on.
    hook = strict_hook(metric="mAP", metric_options={"topk": 1})
    FakeRunner([hook], tmp_path).run(epochs=1)
    options = {"metric": "mAP", "metric_options": {"topk": 1}}
    assert hook.dataloader.dataset.seen == [([0] * 4, options)]


def test_a_subclass_scoring_results_itself_may_take_its_own_arguments():
    """mmcv lets an EvalHook subclass with its own ``evaluate`` read ``eval_kwargs`` itself."""

    class OwnScoring(EvalHook):
        def evaluate(self, runner, results):
            return float(self.eval_kwargs["threshold"])

    hook = strict_hook(OwnScoring, threshold=0.5)
    assert hook.eval_kwargs == {"threshold": 0.5}


def test_any_eval_argument_passes_to_an_evaluate_with_kwargs():
    """``evaluate(..., **kwargs)`` may accept anything: nothing is checked (mmcv semantics)."""
    hook = make_hook(intervl=2, metrc="x")
    assert hook.eval_kwargs == {"intervl": 2, "metrc": "x"}


def test_save_best_metric_missing_names_returned_keys(tmp_path):
    hook = make_hook([0.5], save_best="mAP")
    with pytest.raises(KeyError, match=r"save_best='mAP' .*\['accuracy', 'other'\]"):
        FakeRunner([hook], tmp_path, meta={}).run(epochs=1)


DIST_WORKER = textwrap.dedent(
    """
    import json, os, sys
    import torch, torch.distributed as dist
    from torch import nn
    from torch.utils.data import DataLoader, Dataset, DistributedSampler
    from mmpar.runner.hooks.evaluation import DistEvalHook
    from mmpar.runner.log_buffer import LogBuffer
    import logging

    torch.set_num_threads(1)
    dist.init_process_group('gloo')
    rank = dist.get_rank()

    class Data(Dataset):
        def __len__(self):
            return 7
        def __getitem__(self, i):
            return {'x': torch.tensor([float(i)])}
        def evaluate(self, results, logger=None):
            return {'results': results, 'accuracy': sum(results) / 100}

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.bn = nn.BatchNorm1d(1)
            self.bn.running_mean.fill_(float(rank))
        def forward(self, x, return_loss=True):
            return [float(v) * 10 + float(self.bn.running_mean) for v in x.flatten()]

    class Runner:
        def save_checkpoint(self, out_dir, filename_tmpl, **kwargs):
            with open(os.path.join(out_dir, filename_tmpl), 'w') as f:
                f.write('ckpt')

    runner = Runner()
    runner.model, runner.rank, runner.epoch, runner.iter = Model(), rank, 0, 0
    runner.work_dir, runner.meta = sys.argv[1], {}
    runner.log_buffer, runner.logger = LogBuffer(), logging.getLogger('w')
    ds = Data()
    loader = DataLoader(ds, batch_size=2, sampler=DistributedSampler(ds, shuffle=False))
    hook = DistEvalHook(loader, save_best='accuracy')
    hook.before_run(runner)
    hook.after_train_epoch(runner)
    out = dict(runner.log_buffer.output)
    with open(os.path.join(sys.argv[1], f'rank{rank}.json'), 'w') as f:
        bn = float(runner.model.bn.running_mean)
        json.dump({'output': out, 'eval_count': hook.eval_count, 'bn': bn}, f)
    dist.destroy_process_group()
    """
)


@pytest.mark.slow
def test_dist_eval_hook_two_processes(tmp_path):
    import json

    script = tmp_path / "worker.py"
    script.write_text(DIST_WORKER)
    work = tmp_path / "work"
    work.mkdir()
    proc = run_tool(*torchrun_args(2, script, work), timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    r0 = json.loads((work / "rank0.json").read_text())
    r1 = json.loads((work / "rank1.json").read_text())
    # Rank 0's BN stats (0) were broadcast, the shards were gathered in dataset order without
    # the sampler's padding, and only rank 0 has metrics and saved the best checkpoint.
    assert r0["output"]["results"] == [10.0 * i for i in range(7)]
    assert r0["output"]["eval_iter_num"] == 2
    assert r0["output"]["accuracy"] == pytest.approx(2.1)
    assert r1["output"] == {}
    assert r0["bn"] == r1["bn"] == 0.0
    assert r0["eval_count"] == r1["eval_count"] == 1
    assert "best_accuracy_epoch_1.pth" in os.listdir(work)


# ------------------------------------------------------------------------------------------
# Integration: the real runners with the real logger, eval, EMA and early-stopping hooks.
# ------------------------------------------------------------------------------------------
class RegressionData(Dataset):
    """y = 3x; ``evaluate`` reports the mean squared error of the predictions."""

    def __init__(self, n=8):
        self.x = torch.linspace(-1, 1, n).unsqueeze(1)

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"x": self.x[i], "y": 3 * self.x[i]}

    def evaluate(self, results, logger=None):
        preds = torch.tensor(results)
        return {"mse_loss": float(((preds - 3 * self.x.flatten()) ** 2).mean())}


def build_runner(kind, tmp_path, **kwargs):
    import mmpar.runner as R

    torch.manual_seed(0)
    model = TinyModel(in_dim=1)
    runner_cls = R.EpochBasedRunner if kind == "epoch" else R.IterBasedRunner
    runner = runner_cls(
        model,
        optimizer=torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9),
        work_dir=str(tmp_path),
        logger=logging.getLogger("test_hooks_eval.integration"),
        meta={"seed": 0, "exp_name": "tiny"},
        **kwargs,
    )
    runner.register_hook(R.OptimizerHook(), priority="ABOVE_NORMAL")
    runner.register_hook(R.IterTimerHook(), priority="LOW")
    return runner


def read_json_log(path):
    import json

    with open(path) as f:
        return [json.loads(line) for line in f]


def test_epoch_runner_eval_ema_logging_best_ckpt(tmp_path):
    import mmpar.runner as R

    runner = build_runner("epoch", tmp_path, max_epochs=3)
    val_loader = DataLoader(RegressionData(), batch_size=4)
    ema = R.EMAHook(momentum=0.5, warm_up=1)
    runner.register_hook(ema, priority="ABOVE_NORMAL")
    runner.register_hook(R.EvalHook(val_loader, save_best="auto"), priority="LOW")
    runner.register_hook(R.TextLoggerHook(interval=2), priority="VERY_LOW")
    runner.register_hook(R.TensorboardLoggerHook(interval=2), priority="VERY_LOW")
    seen_at_eval = []
    real_eval = RegressionData.evaluate

    def spy(self, results, logger=None):
        seen_at_eval.append(runner.model.fc.weight.item())
        return real_eval(self, results, logger)

    train_loader = DataLoader(RegressionData(), batch_size=2)
    try:
        RegressionData.evaluate = spy
        runner.run([train_loader], [("train", 1)])
    finally:
        RegressionData.evaluate = real_eval
    records = read_json_log(tmp_path / f"{runner.timestamp}.log.json")
    assert records[0] == {"seed": 0, "exp_name": "tiny"}
    train = [r for r in records[1:] if r["mode"] == "train"]
    val = [r for r in records[1:] if r["mode"] == "val"]
    assert [(r["epoch"], r["iter"]) for r in train] == [(e, i) for e in (1, 2, 3) for i in (2, 4)]
    assert [r["epoch"] for r in val] == [1, 2, 3]
    assert all(set(r) == {"mode", "epoch", "iter", "lr", "mse_loss"} for r in val)
    assert all("mse_loss" not in r and {"loss", "time", "data_time"} <= set(r) for r in train)
    # The EMA weights were in the model during evaluation, the live ones are back for training.
    assert ema.swapped  # training ended after an epoch end: the model holds the EMA
    assert seen_at_eval[-1] == runner.model.fc.weight.item()
    best = [n for n in os.listdir(tmp_path) if n.startswith("best_mse_loss_epoch_")]
    assert len(best) == 1
    best_score = min(r["mse_loss"] for r in val)
    assert runner.meta["hook_msgs"]["best_score"] == pytest.approx(best_score, abs=1e-5)
    ckpt = torch.load(tmp_path / best[0], map_location="cpu", weights_only=False)
    assert "EMAHook" in ckpt["mmpar_state"]["hooks"]


def test_epoch_runner_early_stopping(tmp_path):
    import mmpar.runner as R

    runner = build_runner("epoch", tmp_path, max_epochs=10)
    runner.optimizer.param_groups[0]["lr"] = 0.0  # nothing improves
    val_loader = DataLoader(RegressionData(), batch_size=4)
    runner.register_hook(R.EvalHook(val_loader), priority="LOW")
    runner.register_hook(R.EarlyStoppingHook("mse_loss", patience=2), priority="VERY_LOW")
    runner.run([DataLoader(RegressionData(), batch_size=4)], [("train", 1)])
    assert runner.epoch == 3  # epochs 2 and 3 did not improve on epoch 1


def test_iter_runner_eval_by_iter_separate_records(tmp_path):
    import mmpar.runner as R

    runner = build_runner("iter", tmp_path, max_iters=8)
    val_loader = DataLoader(RegressionData(), batch_size=4)
    runner.register_hook(R.EvalHook(val_loader, by_epoch=False, interval=4), priority="LOW")
    runner.register_hook(R.TextLoggerHook(interval=2, by_epoch=False), priority="VERY_LOW")
    runner.register_hook(R.TensorboardLoggerHook(interval=2, by_epoch=False), priority="VERY_LOW")
    loaders = [
        DataLoader(RegressionData(), batch_size=2),
        DataLoader(RegressionData(), batch_size=2),
    ]
    runner.run(loaders, [("train", 2), ("val", 1)])
    records = read_json_log(tmp_path / f"{runner.timestamp}.log.json")[1:]
    assert [(r["mode"], r["iter"]) for r in records] == [
        ("train", 2),
        ("train", 4),
        ("val", 2),
        ("train", 6),
        ("train", 8),
        ("val", 2),
    ]
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(tmp_path / "tf_logs"))
    acc.Reload()
    assert set(acc.Tags()["scalars"]) == {"train/loss", "val/mse_loss", "learning_rate", "momentum"}
    assert [e.step for e in acc.Scalars("val/mse_loss")] == [4, 8]
    assert [e.step for e in acc.Scalars("train/loss")] == [2, 4, 6, 8]


def test_no_metrics_skips_the_best_checkpoint_with_mmcv_warning():
    hook = make_hook(save_best="auto")
    hook.dataloader.dataset.evaluate = lambda results, logger=None: {}
    runner = SimpleNamespace(logger=None, log_buffer=SimpleNamespace(output={}, ready=False))
    with pytest.warns(UserWarning, match=r"Since `eval_res` is an empty dict"):
        assert hook.evaluate(runner, [1.0]) is None


def test_subclass_default_keys_decide_the_rule():
    class LossTopEvalHook(EvalHook):
        _default_greater_keys = ("acc",)
        _default_less_keys = ("loss", "loss_top")

    assert LossTopEvalHook(DataLoader(ScoreDataset()), save_best="loss_top").rule == "less"
    assert EvalHook(DataLoader(ScoreDataset()), save_best="top1").rule == "greater"


def test_given_keys_replace_the_defaults_as_mmcv():
    hook = make_hook(save_best="accuracy", greater_keys=[], less_keys=["acc"])
    assert hook.rule == "less"
