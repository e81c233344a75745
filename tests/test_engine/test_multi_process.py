"""multi_process_test / run_in_processes: same results as one process, in order, errors surface."""

import os
import subprocess
import sys

import numpy as np
import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, Dataset

from mmpar.engine import multi_process_test, single_device_test
from mmpar.engine.workers import batch_ranges, run_in_processes
from mmpar.parallel import DataContainer, MMDataParallel, collate

torch.set_num_threads(1)


class VariableSizeImages(Dataset):
    """Images of different sizes (padded on collate) with a per-index pattern."""

    def __init__(self, n=23):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, idx):
        g = torch.Generator().manual_seed(idx)
        h, w = 4 + idx % 3, 5 + idx % 4
        img = torch.rand(2, h, w, generator=g)
        return {
            "img": DataContainer(img, stack=True),
            "img_metas": DataContainer({"idx": idx}, cpu_only=True),
        }


class TinyClassifier(nn.Module):
    """Returns one softmax score array per sample plus the sample index it saw."""

    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)

    def forward(self, img, img_metas, return_loss=False):
        assert not return_loss
        scores = self.fc(img.mean(dim=(2, 3))).softmax(dim=1)
        return [np.concatenate([s.numpy(), [m["idx"]]]) for s, m in zip(scores, img_metas)]


class FailingOnIndex(VariableSizeImages):
    def __getitem__(self, idx):
        if idx == 13:
            raise ValueError("sample 13 is broken on purpose")
        return super().__getitem__(idx)


def _sequential(model, dataset, batch_size):
    loader = DataLoader(
        dataset,
        batch_size=batch_size,
        shuffle=False,
        collate_fn=lambda b: collate(b, samples_per_gpu=batch_size),
    )
    return single_device_test(MMDataParallel(model, device_ids=[-1]), loader, progress=False)


def test_batch_ranges_cover_every_index_once_in_loader_order():
    ranges = batch_ranges(10, 4)
    assert ranges == [(0, 0, 4), (1, 4, 8), (2, 8, 10)]
    assert batch_ranges(0, 4) == []
    with pytest.raises(ValueError, match="batch_size"):
        batch_ranges(3, 0)


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_multi_process_equals_single_device_in_dataset_order(workers):
    torch.manual_seed(0)
    model = TinyClassifier()
    dataset = VariableSizeImages(23)
    expected = _sequential(model, dataset, batch_size=4)
    got = multi_process_test(model, dataset, workers=workers, samples_per_gpu=4, progress=False)
    assert len(got) == len(dataset)
    assert [int(r[-1]) for r in got] == list(range(len(dataset)))
    for a, b in zip(expected, got):
        np.testing.assert_array_equal(a, b)


def test_multi_process_accepts_a_wrapped_model():
    model = TinyClassifier()
    got = multi_process_test(
        MMDataParallel(model, device_ids=[-1]),
        VariableSizeImages(5),
        workers=2,
        samples_per_gpu=2,
        progress=False,
    )
    assert [int(r[-1]) for r in got] == [0, 1, 2, 3, 4]


def test_worker_exception_is_raised_in_main_with_its_traceback():
    with pytest.raises(RuntimeError, match="sample 13 is broken on purpose") as info:
        multi_process_test(
            TinyClassifier(), FailingOnIndex(20), workers=2, samples_per_gpu=4, progress=False
        )
    assert "samples 12..15" in str(info.value)
    assert "Traceback" in str(info.value)


def _kill_self(model, samples):
    os._exit(3)


def test_worker_that_dies_is_reported_not_waited_for_forever():
    with pytest.raises(RuntimeError, match="died with exit code 3"):
        run_in_processes(
            TinyClassifier(), list(range(8)), _kill_self, workers=2, batch_size=2, progress=False
        )


def _wrong_count(model, samples):
    return samples[:-1]


def test_step_returning_the_wrong_number_of_results_is_an_error():
    with pytest.raises(RuntimeError, match="returned 1 results for a batch of 2"):
        run_in_processes(
            TinyClassifier(), list(range(4)), _wrong_count, workers=1, batch_size=2, progress=False
        )


def _tensor_outputs(model, samples):
    return [torch.full((2,), float(s)) for s in samples]


def test_tensor_outputs_come_back_as_tensors_of_the_same_dtype():
    out = run_in_processes(
        TinyClassifier(), list(range(5)), _tensor_outputs, workers=2, batch_size=2, progress=False
    )
    assert all(isinstance(o, torch.Tensor) and o.dtype == torch.float32 for o in out)
    assert [float(o[0]) for o in out] == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_bad_arguments():
    with pytest.raises(ValueError, match="workers must be >= 1"):
        multi_process_test(TinyClassifier(), VariableSizeImages(3), workers=0)
    assert multi_process_test(TinyClassifier(), VariableSizeImages(0), workers=2) == []


FORK_AFTER_PARENT_THREADS = """
import torch
from torch import nn
from mmpar.engine.workers import run_in_processes

torch.set_num_threads(2)
model = nn.Conv2d(1, 8, 3)
with torch.no_grad():
    model(torch.randn(64, 1, 32, 32))  # the parent's OpenMP thread pool is now in use
images = [torch.randn(1, 32, 32) for _ in range(4)]


def step(m, samples):
    with torch.no_grad():
        return list(m(torch.stack(samples)).sum(dim=(1, 2, 3)))


out = run_in_processes(model, images, step, workers=1, start_method="fork", progress=False)
print("results", len(out))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs the fork start method")
def test_forked_worker_finishes_after_the_parent_used_intra_op_threads(tmp_path):
    # A forked worker computing with several threads on the OpenMP pool the parent had used
    # waited forever (tools/infer.py --workers hung); the timeout turns that hang into a failure.
    script = tmp_path / "fork_after_threads.py"
    script.write_text(FORK_AFTER_PARENT_THREADS)
    env = dict(os.environ, OMP_NUM_THREADS="2")
    run = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "results 4" in run.stdout
