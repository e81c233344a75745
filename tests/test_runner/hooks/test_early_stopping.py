"""EarlyStoppingHook: patience, min_delta, rules, threshold, state, val-workflow source."""

import logging

import pytest
import torch
from helpers.logger_runner import ListHandler
from torch.utils.data import DataLoader

from mmpar.runner.hooks import HOOKS
from mmpar.runner.hooks.early_stopping import EarlyStoppingHook
from mmpar.runner.hooks.evaluation import EvalHook
from mmpar.runner.log_buffer import LogBuffer

torch.set_num_threads(1)


class Scores:
    def __init__(self, scores, key="accuracy"):
        self.scores = list(scores)
        self.key = key
        self.calls = 0

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return i

    def evaluate(self, results, logger=None):
        self.calls += 1
        return {self.key: self.scores[self.calls - 1]}


class FakeRunner:
    """Epoch loop that honours ``should_stop`` after each epoch, like the real runners."""

    def __init__(self, hooks, max_epochs=20):
        self.hooks = hooks
        self.rank = 0
        self.meta = {}
        self.work_dir = "."
        self.model = torch.nn.Linear(1, 1)
        self.log_buffer = LogBuffer()
        self.logger = logging.getLogger(f"test_es.{id(self)}")
        self.logger.propagate = False
        self.logger.setLevel(logging.INFO)
        self.handler = ListHandler()
        self.logger.addHandler(self.handler)
        self.epoch = self.iter = self.inner_iter = 0
        self.max_epochs = max_epochs
        self.data_loader = [0]
        self.mode = "train"
        self.should_stop = False

    def call(self, stage):
        for hook in self.hooks:
            getattr(hook, stage)(self)

    def run(self):
        self.call("before_run")
        while self.epoch < self.max_epochs and not self.should_stop:
            self.call("before_train_epoch")
            self.call("before_train_iter")
            self.call("after_train_iter")
            self.iter += 1
            self.call("after_train_epoch")
            self.epoch += 1
        self.call("after_run")
        return self.epoch


def run_scores(scores, key="accuracy", order="eval_first", **kwargs):
    loader = DataLoader(Scores(scores, key), batch_size=1)
    ev = EvalHook(loader, test_fn=lambda m, dl: [0, 0])
    es = EarlyStoppingHook(key, **kwargs)
    hooks = [ev, es] if order == "eval_first" else [es, ev]
    runner = FakeRunner(hooks, max_epochs=len(scores))
    return runner.run(), es, runner


def test_registered():
    assert HOOKS.get("EarlyStoppingHook") is EarlyStoppingHook


def test_stops_after_patience_without_improvement():
    epochs, es, runner = run_scores([0.5, 0.6, 0.6, 0.55, 0.9, 0.9], patience=2)
    assert epochs == 4  # epochs 3 and 4 did not improve on 0.6
    assert runner.should_stop and es.best_score == 0.6 and es.wait_count == 2
    assert any(
        line.startswith("Early stopping: accuracy did not improve") for line in runner.handler.lines
    )


def test_min_delta():
    # Gains below min_delta=0.1 over the best (0.5) are not improvements.
    epochs, es, _ = run_scores([0.5, 0.55, 0.59, 0.58, 0.7], patience=3, min_delta=0.1)
    assert epochs == 4 and es.best_score == 0.5


def test_less_rule_inferred_for_loss():
    epochs, es, _ = run_scores([3.0, 2.0, 1.0, 1.5, 0.5], key="val_loss", patience=1)
    assert es.rule == "less" and epochs == 4 and es.best_score == 1.0


def test_nan_counts_as_no_improvement():
    epochs, es, _ = run_scores([0.5, float("nan"), float("nan"), 0.9], patience=2)
    assert epochs == 3 and es.best_score == 0.5


def test_stopping_threshold():
    epochs, _, runner = run_scores([0.5, 0.95, 0.99], patience=5, stopping_threshold=0.9)
    assert epochs == 2
    assert any("reached stopping_threshold 0.9" in line for line in runner.handler.lines)


def test_registered_before_eval_hook_sees_results_one_epoch_later():
    epochs, es, _ = run_scores([0.5, 0.4, 0.3, 0.2, 0.1], patience=2, order="es_first")
    assert epochs == 4 and es.best_score == 0.5


def test_state_round_trip():
    _, es, _ = run_scores([0.5, 0.4], patience=5)
    fresh = EarlyStoppingHook("accuracy", patience=5)
    fresh.load_state_dict(es.state_dict())
    assert (fresh.best_score, fresh.wait_count) == (0.5, 1)


def test_missing_metric_names_returned_keys():
    with pytest.raises(KeyError, match=r"monitor='mAP' .*\['accuracy'\]"):
        loader = DataLoader(Scores([0.5]), batch_size=1)
        hooks = [EvalHook(loader, test_fn=lambda m, dl: [0, 0]), EarlyStoppingHook("mAP")]
        FakeRunner(hooks, max_epochs=1).run()


def test_val_workflow_source():
    es = EarlyStoppingHook("loss", patience=1)
    runner = FakeRunner([es])
    runner.call("before_run")
    for losses in ([1.0, 3.0], [2.0, 2.0], [1.0, 1.0]):  # weighted means 2.0, 2.0, 1.0
        runner.log_buffer.clear()
        runner.log_buffer.update({"loss": losses[0]}, count=1)
        runner.log_buffer.update({"loss": losses[1]}, count=1)
        es.after_val_epoch(runner)
        if runner.should_stop:
            break
    assert runner.should_stop and es.best_score == 2.0


def test_bad_arguments():
    with pytest.raises(ValueError, match="cannot infer"):
        EarlyStoppingHook("psnr")
    with pytest.raises(ValueError, match=r"valid rules are \['greater', 'less'\]"):
        EarlyStoppingHook("psnr", rule="up")
    with pytest.raises(ValueError, match="patience"):
        EarlyStoppingHook("accuracy", patience=0)
    with pytest.raises(ValueError, match="min_delta"):
        EarlyStoppingHook("accuracy", min_delta=-1)
