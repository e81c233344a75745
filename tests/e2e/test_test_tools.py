"""tools/test.py (three modes), tools/infer.py and tools/analyze_logs.py on a trained checkpoint."""

import json
import warnings

import numpy as np
import pytest
from PIL import Image

pytestmark = pytest.mark.slow

# What a rank prints when torch's gloo exit race aborts it (SIGABRT) after its work is done.
GLOO_EXIT_ABORT = "terminate called without an active exception"


@pytest.fixture(scope="module")
def single_results(e2e, digits_run, tmp_path_factory):
    out = tmp_path_factory.mktemp("test_single") / "single.json"
    proc = e2e.run_tool(
        "tools/test.py",
        e2e.DIGITS_CONFIG,
        digits_run / "latest.pth",
        "--out",
        out,
        "--metrics",
        "accuracy",
        "class_accuracy",
        "--no-progress",
        check=True,
    )
    return e2e.metric_lines(proc.stdout), json.loads(out.read_text())


def test_single_process_metrics_match_the_training_evaluation(e2e, digits_run, single_results):
    metrics, record = single_results
    assert metrics["accuracy_top-1"] == pytest.approx(record["metrics"]["accuracy_top-1"], abs=1e-4)
    assert {f"class_accuracy/{i}" for i in range(10)} <= set(metrics)
    last_val = [e for e in e2e.json_log(digits_run) if e["mode"] == "val"][-1]
    assert last_val["epoch"] == e2e.DIGITS_EPOCHS
    # The config evaluates on the same split it tests on; same weights, same number.
    assert metrics["accuracy_top-1"] == pytest.approx(last_val["accuracy_top-1"], abs=1e-2)
    scores = np.array(record["class_scores"])
    assert scores.shape == (len(record["pred_label"]), 10)
    np.testing.assert_allclose(scores.sum(axis=1), 1.0, atol=1e-5)


def test_workers_and_torchrun_give_identical_metrics(e2e, digits_run, single_results, tmp_path):
    metrics, record = single_results
    workers_out = tmp_path / "workers.json"
    proc = e2e.run_tool(
        "tools/test.py",
        e2e.DIGITS_CONFIG,
        digits_run / "latest.pth",
        "--workers",
        "2",
        "--out",
        workers_out,
        "--metrics",
        "accuracy",
        "class_accuracy",
        "--no-progress",
        check=True,
    )
    assert e2e.metric_lines(proc.stdout) == metrics
    dist_out = tmp_path / "dist.pkl"

    def torchrun_test():
        return e2e.run_tool(
            *e2e.torchrun_args(
                2,
                "tools/test.py",
                e2e.DIGITS_CONFIG,
                str(digits_run / "latest.pth"),
                "--launcher",
                "pytorch",
                "--out",
                str(dist_out),
                "--metrics",
                "accuracy",
                "class_accuracy",
                "--no-progress",
            ),
            timeout=180,
        )

    proc = torchrun_test()
    if proc.returncode != 0 and GLOO_EXIT_ABORT in proc.stderr:
        # torch's gloo exit race (docs/distributed.md, "Known issue"): a rank aborted after its
        # work was done. Not what this test is about: run once more, with a warning.
        warnings.warn(f"torchrun test run aborted, run again:\n{proc.stderr[-6000:]}", stacklevel=1)
        proc = torchrun_test()
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert e2e.metric_lines(proc.stdout) == metrics
    import pickle

    with open(dist_out, "rb") as f:
        dist_record = pickle.load(f)
    workers_record = json.loads(workers_out.read_text())
    for other in (workers_record, dist_record):
        assert other["pred_label"] == record["pred_label"]
        np.testing.assert_allclose(other["class_scores"], record["class_scores"], atol=1e-6)


def test_infer_predicts_image_files_in_order_like_test(e2e, digits_run, single_results, tmp_path):
    from mmpar.datasets import Digits

    _, record = single_results
    val = Digits(pipeline=[], test_mode=True)
    images = tmp_path / "images"
    images.mkdir()
    count = 20
    for i in range(count):
        Image.fromarray(val.data_infos[i]["img"][..., 0], mode="L").save(images / f"d{i:03d}.png")
    out = tmp_path / "preds.json"
    proc = e2e.run_tool(
        "tools/infer.py",
        e2e.DIGITS_CONFIG,
        digits_run / "latest.pth",
        images,
        "--workers",
        "2",
        "--batch-size",
        "6",
        "--out",
        out,
        "--no-progress",
        check=True,
    )
    preds = json.loads(out.read_text())
    assert [p["file"].rsplit("/", 1)[-1] for p in preds] == [f"d{i:03d}.png" for i in range(count)]
    assert [p["pred_label"] for p in preds] == record["pred_label"][:count]
    assert [p["pred_class"] for p in preds] == record["pred_class"][:count]
    np.testing.assert_allclose(
        [p["pred_score"] for p in preds], record["pred_score"][:count], atol=1e-6
    )
    assert len(proc.stdout.strip().splitlines()) == count


def test_analyze_logs_plots_a_png_and_reports_times(e2e, capsys, digits_run, tmp_path):
    (log,) = digits_run.glob("*.log.json")
    png = tmp_path / "curve.png"
    e2e.run_tool(
        "tools/analyze_logs.py",
        "plot_curve",
        log,
        "--keys",
        "loss",
        "accuracy_top-1",
        "--out",
        png,
        check=True,
    )
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    with Image.open(png) as img:
        assert img.size[0] >= 600 and img.size[1] >= 500  # two panels
    tool = e2e.load_tool("analyze_logs")
    assert tool.main(["cal_train_time", str(log)]) == 0
    out = capsys.readouterr().out
    assert "slowest epoch" in out and "average iter time" in out
    with pytest.raises(SystemExit):
        tool.main(["plot_curve", str(log), "--keys", "no_such_key", "--out", str(png)])
    err = capsys.readouterr().err
    assert "no_such_key" in err and "loss" in err  # names the key and lists the logged ones


def _write_json_log(path, *entries):
    """A ``<timestamp>.log.json`` as TextLoggerHook writes it: env/config line, then entries."""
    lines = [{"env_info": "sys.platform: linux", "config": "", "seed": 0}, *entries]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_cal_train_time_skips_logs_without_train_timing(e2e, capsys, tmp_path):
    train = [
        {"mode": "train", "epoch": e, "iter": i, "lr": 0.05, "time": t, "loss": 2.3}
        for e, times in ((1, (0.5, 0.01, 0.03)), (2, (0.4, 0.02, 0.02)))
        for i, t in zip((15, 30, 45), times)
    ]
    val = {"mode": "val", "epoch": 2, "iter": 12, "lr": 0.05, "accuracy_top-1": 95.0}
    trained = _write_json_log(tmp_path / "20261124_100000_aaaaaa.log.json", *train, val)
    # A run that resumed at its last epoch: it only evaluated, or wrote no entry at all.
    eval_only = _write_json_log(tmp_path / "20261124_110000_bbbbbb.log.json", val)
    empty = _write_json_log(tmp_path / "20261124_120000_cccccc.log.json")
    tool = e2e.load_tool("analyze_logs")

    assert tool.main(["cal_train_time", str(trained), str(eval_only), str(empty)]) == 0
    out, err = capsys.readouterr()
    assert out.count("-----Analyze train time of") == 1 and str(trained) in out
    # Each epoch's first interval is skipped: epoch 1 averages 0.02, epoch 2 0.02, both 0.02.
    assert "average iter time: 0.0200 s/iter" in out
    assert f'skipped {eval_only}: no train entries with a "time" value' in err
    assert f'skipped {empty}: no train entries with a "time" value' in err
    assert str(trained) not in err

    proc = e2e.run_tool("tools/analyze_logs.py", "cal_train_time", eval_only, empty)
    assert proc.returncode == 2
    assert f"skipped {eval_only}" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == (
        f'error: ValueError: no train entries with a "time" value in any log: {eval_only}, {empty}'
    )
