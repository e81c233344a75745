import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch
from helpers import free_port, import_path
from torch import nn

from mmpar.parallel import MMDistributedDataParallel, collate, is_module_wrapper

WORKER = Path(__file__).with_name("_ddp_worker.py")
REPO = Path(__file__).resolve().parents[2]


worker = import_path(WORKER, "mmpar_ddp_worker")


def _torchrun(out_dir, port, mode, timeout):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node=2",
        f"--master_port={port}",
        str(WORKER),
        "--out",
        str(out_dir),
        "--mode",
        mode,
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=env)


def test_mmddp_single_process_train_step_matches_plain_model(gloo_group):
    samples = worker.make_samples(0)
    plain = worker.Net()
    ddp = MMDistributedDataParallel(worker.Net(), device_ids=None)
    assert is_module_wrapper(ddp) and isinstance(ddp.module, worker.Net)

    out = ddp.train_step(collate(samples, samples_per_gpu=3), None)
    out["loss"].backward()
    ref = plain.train_step(worker._unwrap(collate(samples, 3)))
    ref["loss"].backward()

    assert out["num_samples"] == len(samples) == ref["num_samples"]
    assert torch.allclose(out["loss"], ref["loss"])
    assert torch.allclose(ddp.module.fc.weight.grad, plain.fc.weight.grad, atol=1e-7)
    # The routed forward is gone again: plain calls reach the real forward.
    assert "forward" not in ddp.module.__dict__
    data = collate(samples, 8)
    assert torch.allclose(ddp(data["img"], data["label"]), ref["loss"])


def test_mmddp_restores_forward_when_step_raises(gloo_group):
    class Boom(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(1))

        def forward(self, x):
            return x * self.w

        def train_step(self, data_batch, optimizer=None):
            raise ValueError("bad batch")

    ddp = MMDistributedDataParallel(Boom())
    with pytest.raises(ValueError, match="bad batch"):
        ddp.train_step({"x": torch.ones(1)})
    assert "forward" not in ddp.module.__dict__
    assert torch.equal(ddp(torch.full((1,), 2.0)), torch.full((1,), 2.0))
    with pytest.raises(AttributeError, match="Boom has no val_step"):
        ddp.val_step({})


def test_deprecated_mmddp_warns_and_trains_like_the_current_one(gloo_group):
    from mmpar.parallel.distributed_deprecated import MMDistributedDataParallel as Deprecated

    samples = worker.make_samples(0)
    with pytest.warns(DeprecationWarning, match="use mmpar.parallel.MMDistributedDataParallel"):
        old = Deprecated(worker.Net(), 0, True, 25)  # mmcv's positional arguments
    assert isinstance(old, MMDistributedDataParallel) and is_module_wrapper(old)
    assert old.device_ids is None  # a CPU module: no device ids, as DDP wants on gloo
    current = MMDistributedDataParallel(worker.Net(), device_ids=None)
    out_old = old.train_step(collate(samples, samples_per_gpu=3), None)
    out_new = current.train_step(collate(samples, samples_per_gpu=3), None)
    assert torch.allclose(out_old["loss"], out_new["loss"])
    out_old["loss"].backward()
    assert old.module.fc.weight.grad is not None


@pytest.mark.slow
def test_two_process_training_matches_single_process(tmp_path):
    proc = _torchrun(tmp_path, free_port(), "train", timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    r0 = torch.load(tmp_path / "rank0.pt", weights_only=False)
    r1 = torch.load(tmp_path / "rank1.pt", weights_only=False)

    for with_unused in (False, True):
        key = f"params_unused={with_unused}"
        reference = worker.reference_params(with_unused)
        initial = worker.Net(with_unused).state_dict()
        for name, value in reference.items():
            assert torch.equal(r0[key][name], r1[key][name]), f"{key} {name} differs across ranks"
            assert torch.allclose(r0[key][name], value, atol=1e-6, rtol=0), f"{key} {name}"
        assert not torch.equal(r0[key]["fc.weight"], initial["fc.weight"])  # it did train
        if with_unused:
            assert torch.equal(r0[key]["unused.weight"], initial["unused.weight"])

    assert r0["collected"] == [f"res{i}" for i in range(7)]
    assert r1["collected"] is None
    for r in (r0, r1):
        assert r["reduced"]["a"].item() == pytest.approx(0.5) and r["reduced"]["b"] == 1.0
        assert r["broadcast"] == {"from": 0}


@pytest.mark.slow
def test_failing_rank_ends_the_whole_job(tmp_path):
    start = time.monotonic()
    proc = _torchrun(tmp_path, free_port(), "fail", timeout=60)
    assert proc.returncode != 0
    assert "rank 1 failed on purpose" in proc.stdout + proc.stderr
    assert time.monotonic() - start < 60
