"""MlflowLoggerHook: metrics, params, tags and the model in a local MLflow store, read back."""

import pytest
import torch
from helpers.logger_runner import train_losses, val_losses

from mmpar.runner.hooks import HOOKS


# mlflow's own SQLAlchemy store uses a loader option SQLAlchemy deprecates; not ours to fix.
@pytest.mark.filterwarnings("ignore:The ``noload`` loader strategy is deprecated")
def test_mlflow_metrics_params_tags_and_model(isolated, train, toy_model):
    from mlflow import MlflowClient
    from mlflow.pytorch import load_model

    hook = HOOKS.build(
        dict(
            type="MlflowLoggerHook",
            exp_name="toy",
            tags={"team": "vision"},
            params={"lr": 0.01, "arch": "linear"},
            interval=1,
        )
    )
    runner, records = train(hook)

    import mlflow

    # As under mmcv, the run MLflow started on the hook's first call stays active after
    # training (MLflow ends it at exit); the caller ends it.
    active = mlflow.active_run()
    assert active is not None
    mlflow.end_run()
    client = MlflowClient()
    experiment = client.get_experiment_by_name("toy")
    (run,) = client.search_runs([experiment.experiment_id])
    assert run.info.run_id == active.info.run_id
    assert run.data.params == {"lr": "0.01", "arch": "linear"}
    assert run.data.tags["team"] == "vision"

    history = client.get_metric_history(run.info.run_id, "train/loss")
    expected = train_losses(records)
    assert [m.step for m in history] == list(range(1, 7))
    assert [m.value for m in history] == pytest.approx([expected[s] for s in range(1, 7)], abs=1e-5)
    # Every record (val too) carries lr and momentum at step runner.iter + 1; a val epoch
    # after 3 iterations is at step 4, as in mmcv.
    lr = client.get_metric_history(run.info.run_id, "learning_rate")
    assert sorted(m.step for m in lr) == [1, 2, 3, 4, 4, 5, 6, 7]
    assert lr[0].value == pytest.approx(0.01)
    val = sorted(client.get_metric_history(run.info.run_id, "val/val_loss"), key=lambda m: m.step)
    assert [m.step for m in val] == [4, 7]
    assert [m.value for m in val] == pytest.approx(val_losses(records), abs=1e-5)
    assert "train/time" not in run.data.metrics

    model = load_model(f"runs:/{run.info.run_id}/models")
    for name, value in toy_model.state_dict().items():
        assert torch.equal(model.state_dict()[name], value)


def test_mlflow_uses_an_active_run_and_leaves_it_open(isolated, train):
    import mlflow

    from mmpar.runner.hooks.logger.mlflow import MlflowLoggerHook

    mlflow.set_experiment("outer")  # not the experiment id another test left selected
    with mlflow.start_run() as outer:
        hook = MlflowLoggerHook(log_model=False, interval=3)
        train(hook, interval=3)
        assert mlflow.active_run().info.run_id == outer.info.run_id
    run = mlflow.MlflowClient().get_run(outer.info.run_id)
    assert run.data.metrics["train/loss"] > 0
    history = mlflow.MlflowClient().get_metric_history(outer.info.run_id, "train/loss")
    assert [m.step for m in history] == [3, 6]
