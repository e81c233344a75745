"""parse_losses averages logged values over real torch.distributed processes (gloo, CPU)."""

import json
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import json, os, sys
    import torch
    import torch.distributed as dist
    from mmpar.models.classifiers import parse_losses

    dist.init_process_group('gloo')
    rank = dist.get_rank()
    losses = dict(loss_cls=torch.tensor([1.0, 3.0]) * (rank + 1),
                  accuracy={'top-1': torch.tensor(50.0 + 50.0 * rank)})
    loss, log_vars = parse_losses(losses)
    out = dict(loss=loss.item(), log_vars=log_vars)
    extra = dict(losses, loss_aux=torch.tensor(1.0)) if rank == 1 else losses
    try:
        parse_losses(extra)
        out['mismatch'] = None
    except RuntimeError as err:
        out['mismatch'] = str(err)
    with open(os.path.join(sys.argv[1], f'rank{rank}.json'), 'w') as f:
        json.dump(out, f)
    dist.destroy_process_group()
    """
)


@pytest.mark.slow
def test_parse_losses_averages_over_ranks(tmp_path):
    script = tmp_path / "run.py"
    script.write_text(SCRIPT)
    cmd = [
        sys.executable, '-m', 'torch.distributed.run', '--nproc_per_node=2',
        '--master_port=0', '--rdzv_backend=c10d', '--rdzv_endpoint=localhost:0',
        str(script), str(tmp_path),
    ]  # fmt: skip
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads((tmp_path / f"rank{r}.json").read_text()) for r in range(2)]
    # the loss used for backward stays local; logged values are the mean over ranks
    assert [r["loss"] for r in results] == [2.0, 4.0]
    for r in results:
        assert r["log_vars"] == {"loss_cls": 3.0, "top-1": 75.0, "loss": 3.0}
        assert "different loss terms" in r["mismatch"]
