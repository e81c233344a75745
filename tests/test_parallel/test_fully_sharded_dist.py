"""MMFullyShardedDataParallel with real torchrun: 2 processes, gloo on CPU.

One torchrun run of ``_fsdp_worker.py`` (about 6 s on 2 cores) serves the slow tests below;
each reads the part of the per-rank results it checks.
"""

import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch

from mmpar import Config
from mmpar.apis.train import wrap_model
from mmpar.models import build_classifier
from mmpar.models.backbones.resnet import BasicBlock
from mmpar.parallel import MMFullyShardedDataParallel, collate, is_fully_sharded

from ._ddp_worker import _unwrap
from ._fsdp_worker import RUNS, STEPS, ShardNet, local_samples

WORKER = Path(__file__).with_name("_fsdp_worker.py")
REPO = Path(__file__).resolve().parents[2]
WORLD = 2
# What a rank prints when torch's gloo exit race aborts it (SIGABRT) after its work is done.
GLOO_ABORT = "terminate called without an active exception"

# Tolerance of FSDP against DDP (float32): DDP all-reduces each gradient, FSDP reduce-scatters
# it; both average the ranks' gradients but may add them in a different order, so the weights
# can differ by a few float32 ulps per step. With 2 ranks the sum has one addition (a + b ==
# b + a) and the division by 2 is exact, so here they come out bitwise equal; the tolerance
# allows for other world sizes and backends, where (a + b) + c != a + (b + c).
RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """The per-rank results of one 2-process run of the worker."""
    out = tmp_path_factory.mktemp("fsdp_dist")
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",  # a free rendezvous port on localhost, chosen by torchrun
        f"--nproc_per_node={WORLD}",
        str(WORKER),
        "--out",
        str(out),
    ]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(REPO))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    if proc.returncode != 0 and GLOO_ABORT in proc.stdout + proc.stderr:
        # torch's gloo exit race after the work was done (docs/distributed.md, "Known
        # issue"): not what these tests are about, so run once more, with a warning.
        warnings.warn(f"a rank aborted at exit, run again:\n{proc.stderr[-6000:]}", stacklevel=1)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return [torch.load(out / f"rank{r}.pt", weights_only=False) for r in range(WORLD)]


@pytest.mark.slow
@pytest.mark.parametrize("run_name", sorted(RUNS))
def test_fsdp_training_matches_ddp(ranks, run_name):
    initial = ShardNet().state_dict()
    max_norm = RUNS[run_name][1]
    for r, result in enumerate(ranks):
        run = result[run_name]
        assert run["fsdp_losses"] == pytest.approx(run["ddp_losses"], rel=RTOL)
        # OptimizerHook's clipping sees the norm of the whole gradient, not of this shard.
        assert run["fsdp_norms"] == pytest.approx(run["ddp_norms"], rel=RTOL)
        assert len(run["fsdp_norms"]) == (STEPS if max_norm else 0)
        assert all(norm > max_norm for norm in run["fsdp_norms"])  # every step was clipped
        assert run["ddp"].keys() == run["fsdp"].keys() == initial.keys()
        for name, ddp_value in run["ddp"].items():
            torch.testing.assert_close(
                run["fsdp"][name], ddp_value, rtol=RTOL, atol=ATOL, msg=f"rank {r} {name}"
            )
            # DDP keeps the ranks' replicas equal; full_tensor() gathers the same weights.
            assert torch.equal(ddp_value, ranks[0][run_name]["ddp"][name])
        assert not torch.equal(run["fsdp"]["stem.weight"], initial["stem.weight"])  # it trained


def _chunk(n: int, rank: int) -> int:
    """Rows of a dim-0 size ``n`` on ``rank``: torch.chunk's split (ceil(n / W) each, the
    last ranks get the rest, possibly 0)."""
    size = -(-n // WORLD)
    return max(0, min(size, n - rank * size))


@pytest.mark.slow
@pytest.mark.parametrize("run_name", sorted(RUNS))
def test_each_rank_holds_only_its_shard(ranks, run_name):
    state_keys = {"sgd": {"momentum_buffer"}, "adamw": {"exp_avg", "exp_avg_sq"}}
    state_keys = state_keys[RUNS[run_name][0]]
    names = dict(ShardNet().named_parameters())
    total = {name: 0 for name in names}
    for r, result in enumerate(ranks):
        shards = result[run_name]["shards"]
        assert shards.keys() == names.keys()
        for name, s in shards.items():
            full = tuple(names[name].shape)
            local = (_chunk(full[0], r), *full[1:])
            assert s["is_dtensor"] and s["full"] == full, name
            assert s["param"] == s["grad"] == local, f"rank {r} {name}: {s}"
            assert s["state"] == {key: local for key in state_keys}, f"rank {r} {name}"
            total[name] += torch.Size(local).numel()
    # The shards partition every tensor: together exactly the full size, no replica anywhere.
    assert total == {name: p.numel() for name, p in names.items()}
    # The uneven cases are covered: 5 rows -> 3 + 2, 1 row -> 1 + 0.
    assert [ranks[r][run_name]["shards"]["stem.weight"]["param"] for r in (0, 1)] == [
        (3, 3),
        (2, 3),
    ]
    assert [ranks[r][run_name]["shards"]["scale"]["param"] for r in (0, 1)] == [(1,), (0,)]


@pytest.mark.slow
def test_datacontainer_batches_reach_each_rank_and_evaluation_works(ranks):
    for r, result in enumerate(ranks):
        # Each rank's variable-size images, padded to that rank's own largest image.
        expected = []
        for step in range(STEPS):
            batch = _unwrap(collate(local_samples(step, r, WORLD), samples_per_gpu=2))
            expected.append((tuple(batch["img"].shape), len(batch["img_metas"])))
        assert result["sgd"]["seen"] == expected
        # The first step's loss is the untrained model's on exactly this rank's samples.
        batch = _unwrap(collate(local_samples(0, r, WORLD), samples_per_gpu=2))
        with torch.no_grad():
            ref = ShardNet().train_step(batch)["loss"]
        assert result["sgd"]["fsdp_losses"][0] == pytest.approx(ref.item(), rel=1e-6)

        ev = result["eval"]
        val = _unwrap(collate(local_samples(10, r, WORLD), samples_per_gpu=2))
        assert ev["seen"] == (tuple(val["img"].shape), len(val["img_metas"]))
        torch.testing.assert_close(ev["fsdp_val"], ev["ddp_val"], rtol=RTOL, atol=ATOL)
        assert ev["fsdp_logits"].shape == (len(val["img_metas"]), 2)
        torch.testing.assert_close(ev["fsdp_logits"], ev["ddp_logits"], rtol=RTOL, atol=ATOL)
    assert not torch.equal(ranks[0]["eval"]["fsdp_logits"], ranks[1]["eval"]["fsdp_logits"])


@pytest.mark.slow
def test_bfloat16_mixed_precision_trains_with_float32_shards(ranks):
    initial = ShardNet().state_dict()
    for result in ranks:
        bf16 = result["bf16"]
        assert bf16["compute_dtypes"] == ["torch.bfloat16"]
        assert bf16["shard_dtypes"] == bf16["grad_dtypes"] == bf16["state_dtypes"]
        assert bf16["state_dtypes"] == ["torch.float32"]
        # bfloat16 keeps 8 significant bits (relative error ~4e-3 per rounding): the run
        # follows the float32 one loosely, not bitwise.
        fp32 = result["sgd"]
        assert bf16["losses"] == pytest.approx(fp32["fsdp_losses"], abs=1e-2)
        assert bf16["losses"] != fp32["fsdp_losses"]
        for name, value in fp32["fsdp"].items():
            torch.testing.assert_close(bf16["params"][name], value, rtol=0, atol=1e-2)
        assert not torch.equal(bf16["params"]["stem.weight"], initial["stem.weight"])


def test_fsdp_example_config_wraps_resnet_blocks(gloo_group):
    cfg = Config.fromfile(str(REPO / "configs" / "cifar10_resnet_fsdp.py"))
    assert cfg.model_wrapper.type == "MMFullyShardedDataParallel"
    model = wrap_model(build_classifier(cfg.model), True, wrapper_cfg=cfg.model_wrapper)
    assert isinstance(model, MMFullyShardedDataParallel)
    assert cfg.model_wrapper.wrap_modules == ["BasicBlock"]
    blocks = [m for m in model.module.modules() if isinstance(m, BasicBlock)]
    assert len(blocks) == 8 and all(is_fully_sharded(b) for b in blocks)  # ResNet-18: 4 x 2
    img = torch.rand(2, 3, 32, 32)
    out = model.train_step(dict(img=img, gt_label=torch.tensor([0, 1]), img_metas=[{}, {}]))
    assert torch.isfinite(out["loss"]) and out["num_samples"] == 2
