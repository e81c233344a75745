"""DistSamplerSeedHook: the epoch reaches the sampler or the batch sampler."""

import torch
from torch.utils.data import DataLoader

from mmpar.runner import DistSamplerSeedHook


def test_dist_sampler_seed_hook_sets_epoch_on_sampler_or_batch_sampler(
    make_runner, make_loader, epoch_recording_sampler
):
    sampler = epoch_recording_sampler(8)
    runner = make_runner(max_epochs=3)
    runner.register_hook(DistSamplerSeedHook())
    runner.run([make_loader(8, 4, sampler=sampler)], [("train", 1)])
    assert sampler.epochs == [0, 1, 2]

    inner = epoch_recording_sampler(8)
    batch_sampler = torch.utils.data.BatchSampler(inner, 4, False)
    runner = make_runner(max_epochs=2)
    runner.register_hook(DistSamplerSeedHook())
    loader = DataLoader(make_loader(8).dataset, batch_sampler=batch_sampler)
    runner.run([loader], [("train", 1)])
    assert inner.epochs == [0, 1]
