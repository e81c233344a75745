import itertools
import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from collections import Counter

import pytest
import torch
from torch.utils.data import DataLoader

from mmpar.datasets.samplers import DistributedSampler, InfiniteSampler, SizeBucketBatchSampler


class NoGetItem:
    """A dataset that only knows its length (and sizes); indexing it is a test failure."""

    def __init__(self, n, sizes=None):
        self.n = n
        self._sizes = sizes
        self.epochs = []

    def __len__(self):
        return self.n

    def __getitem__(self, index):
        raise AssertionError(f"sampler touched the dataset (index {index})")

    def get_sizes(self):
        if self._sizes is None:
            raise AssertionError("get_sizes called on a dataset without sizes")
        return self._sizes

    def set_epoch(self, epoch):
        self.epochs.append(epoch)


class SizedOnly:
    """A dataset without get_sizes / sizes / set_epoch."""

    def __len__(self):
        return 8

    def __getitem__(self, index):
        return index


def random_hw(n, seed=0, low=200, high=400):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, high + 1, (n, 2), generator=g).tolist()


def padded_fraction(batches, sizes):
    """Fraction of pixels of the padded batch tensors that are padding."""
    padded = total = 0
    for batch in batches:
        hs = [sizes[i][0] for i in batch]
        ws = [sizes[i][1] for i in batch]
        area = max(hs) * max(ws) * len(batch)
        total += area
        padded += area - sum(h * w for h, w in zip(hs, ws))
    return padded / total


def all_ranks(make, world):
    return [list(make(rank)) for rank in range(world)]


# ---------------------------------------------------------------- DistributedSampler


@pytest.mark.parametrize("n", [1, 10, 11, 13])
@pytest.mark.parametrize("world", [1, 2, 3, 4])
def test_distributed_round_up_covers_every_index(n, world):
    ds = NoGetItem(n)
    samplers = [DistributedSampler(ds, world, r, seed=3) for r in range(world)]
    shards = [list(s) for s in samplers]
    per_rank = math.ceil(n / world)
    assert [len(s) for s in samplers] == [per_rank] * world
    assert [len(s) for s in shards] == [per_rank] * world
    counts = Counter(itertools.chain(*shards))
    assert set(counts) == set(range(n))
    # Padding repeats only as many samples as needed to divide evenly.
    assert sum(c - 1 for c in counts.values()) == per_rank * world - n


@pytest.mark.parametrize("n,world", [(10, 3), (11, 4), (2, 4), (12, 3)])
def test_distributed_without_round_up_is_an_exact_partition(n, world):
    samplers = [DistributedSampler(NoGetItem(n), world, r, round_up=False) for r in range(world)]
    shards = [list(s) for s in samplers]
    assert [len(s) for s in samplers] == [len(s) for s in shards]
    assert sorted(itertools.chain(*shards)) == list(range(n))


@pytest.mark.parametrize("n,world", [(10, 1), (10, 3), (7, 4), (16, 4)])
def test_distributed_matches_torch_order(n, world):
    # mmcv semantics equal torch's DistributedSampler (shuffle, seed + epoch, pad from start).
    ds = NoGetItem(n)
    for rank in range(world):
        ours = DistributedSampler(ds, world, rank, seed=5)
        theirs = torch.utils.data.DistributedSampler(ds, world, rank, seed=5)
        ours.set_epoch(2)
        theirs.set_epoch(2)
        assert list(ours) == list(theirs)


def test_distributed_is_a_torch_distributed_sampler():
    assert isinstance(DistributedSampler(NoGetItem(4), 1, 0), torch.utils.data.DistributedSampler)


def test_distributed_epochs_and_seeds():
    ds = NoGetItem(50)
    a, b = DistributedSampler(ds, 2, 1, seed=7), DistributedSampler(ds, 2, 1, seed=7)
    assert list(a) == list(b)
    a.set_epoch(1)
    assert list(a) != list(b)
    b.set_epoch(1)
    assert list(a) == list(b)
    assert list(DistributedSampler(ds, 2, 1, seed=8)) != list(DistributedSampler(ds, 2, 1, seed=7))
    # Iterating twice in the same epoch gives the same order.
    assert list(a) == list(a)


def test_distributed_no_shuffle_and_none_seed():
    assert list(DistributedSampler(NoGetItem(7), 2, 1, shuffle=False)) == [1, 3, 5, 0]
    none_seed = DistributedSampler(NoGetItem(9), 1, 0, seed=None)
    assert none_seed.seed == 0
    assert list(none_seed) == list(DistributedSampler(NoGetItem(9), 1, 0, seed=0))


def test_distributed_defaults_without_process_group():
    sampler = DistributedSampler(NoGetItem(5))
    assert (sampler.num_replicas, sampler.rank) == (1, 0)
    assert sorted(sampler) == list(range(5))


@pytest.mark.parametrize("start", [0, 1, 9, 16, 17])
def test_distributed_start_index_yields_tail_once(start):
    ds = NoGetItem(33)
    sampler = DistributedSampler(ds, 2, 1, seed=1)
    sampler.set_epoch(4)
    full = list(sampler)
    sampler.set_start_index(start)
    assert len(sampler) == len(full)  # len() is the full epoch, also while a start is pending
    assert sampler.state_dict()["start_index"] == start
    assert list(sampler) == full[start:]
    # The start index applies to one iteration only.
    assert sampler.state_dict()["start_index"] == 0
    assert list(sampler) == full


def test_distributed_resume_through_dataloader():
    data = torch.arange(40).float()
    sampler = DistributedSampler(data, 1, 0, seed=2)
    sampler.set_epoch(3)
    uninterrupted = [b.tolist() for b in DataLoader(data, batch_size=4, sampler=sampler)]
    inner_iter = 6
    resumed_sampler = DistributedSampler(data, 1, 0, seed=2)
    resumed_sampler.set_epoch(3)
    resumed_sampler.set_start_index(inner_iter * 4)
    resumed = [b.tolist() for b in DataLoader(data, batch_size=4, sampler=resumed_sampler)]
    assert resumed == uninterrupted[inner_iter:]


def test_distributed_state_dict_round_trip():
    ds = NoGetItem(21)
    sampler = DistributedSampler(ds, 3, 2, seed=11)
    sampler.set_epoch(5)
    sampler.set_start_index(4)
    state = sampler.state_dict()
    assert state == {"epoch": 5, "seed": 11, "start_index": 4}
    assert all(type(v) is int for v in state.values())
    expected = list(sampler)

    fresh_ds = NoGetItem(21)
    fresh = DistributedSampler(fresh_ds, 3, 2, seed=0)
    fresh.load_state_dict(state)
    assert fresh.seed == 11 and fresh.epoch == 5
    assert fresh_ds.epochs == [5]
    assert list(fresh) == expected


def test_distributed_set_epoch_forwards_to_dataset():
    ds = NoGetItem(4)
    sampler = DistributedSampler(ds, 1, 0)
    sampler.set_epoch(3)
    sampler.set_epoch(4)
    assert ds.epochs == [3, 4]
    DistributedSampler(SizedOnly(), 1, 0).set_epoch(1)  # datasets without set_epoch are fine


@pytest.mark.parametrize(
    "kwargs,error,words",
    [
        (dict(num_replicas=2, rank=2), ValueError, "rank"),
        (dict(num_replicas=2, rank=-1), ValueError, "rank"),
        (dict(num_replicas=0, rank=0), ValueError, "num_replicas"),
        (dict(num_replicas=2, rank=0, seed=-1), ValueError, "seed"),
        (dict(num_replicas=2, rank=0, seed=1.5), TypeError, "seed"),
    ],
)
def test_distributed_bad_arguments(kwargs, error, words):
    with pytest.raises(error, match=words):
        DistributedSampler(NoGetItem(4), **kwargs)


def test_distributed_bad_start_index_and_state():
    sampler = DistributedSampler(NoGetItem(10), 2, 0)
    sampler.set_start_index(5)  # == len(): an empty rest of epoch is allowed
    with pytest.raises(ValueError, match="start_index=6 is beyond the 5 samples"):
        sampler.set_start_index(6)
    with pytest.raises(ValueError, match="start_index"):
        sampler.set_start_index(-1)
    with pytest.raises(ValueError, match="epoch"):
        sampler.set_epoch(-2)
    with pytest.raises(KeyError, match="start_index"):
        sampler.load_state_dict({"epoch": 1, "seed": 0})
    with pytest.raises(TypeError, match="dict"):
        sampler.load_state_dict([1, 2, 3])


# ---------------------------------------------------------------- InfiniteSampler


def take(sampler, k):
    return list(itertools.islice(iter(sampler), k))


def test_infinite_rounds_are_seeded_permutations():
    n = 10
    stream = take(InfiniteSampler(NoGetItem(n), seed=4, num_replicas=1, rank=0), 3 * n)
    for k in range(3):
        expected = torch.randperm(n, generator=torch.Generator().manual_seed(4 + k)).tolist()
        assert stream[k * n : (k + 1) * n] == expected
    assert stream[:n] != stream[n : 2 * n]


def test_infinite_determinism_and_no_shuffle():
    ds = NoGetItem(17)
    a = take(InfiniteSampler(ds, seed=1, num_replicas=2, rank=1), 60)
    assert a == take(InfiniteSampler(ds, seed=1, num_replicas=2, rank=1), 60)
    assert a != take(InfiniteSampler(ds, seed=2, num_replicas=2, rank=1), 60)
    plain = take(InfiniteSampler(NoGetItem(5), shuffle=False, num_replicas=2, rank=0), 6)
    assert plain == [0, 2, 4, 1, 3, 0]


@pytest.mark.parametrize("n,world", [(12, 3), (10, 3), (7, 2), (5, 4)])
def test_infinite_ranks_interleave_the_global_stream(n, world):
    ds = NoGetItem(n)
    steps = 4 * n
    shards = [
        take(InfiniteSampler(ds, seed=9, num_replicas=world, rank=r), steps) for r in range(world)
    ]
    # Rank r holds positions r, r + world, ... of the global stream.
    stream = [shards[p % world][p // world] for p in range(steps * world)]
    single = take(InfiniteSampler(ds, seed=9, num_replicas=1, rank=0), steps * world)
    assert stream == single
    # Within each round the ranks see disjoint indices that together cover the dataset.
    for k in range(steps * world // n):
        assert sorted(stream[k * n : (k + 1) * n]) == list(range(n))
    assert [len(InfiniteSampler(ds, num_replicas=world, rank=r)) for r in range(world)] == [
        math.ceil(n / world)
    ] * world


@pytest.mark.parametrize("world,rank", [(1, 0), (3, 2), (4, 1)])
def test_infinite_resume_midway_equals_tail(world, rank):
    n = 10
    ds = NoGetItem(n)
    start = int(2.5 * n / world)  # about 2.5 rounds in
    uninterrupted = take(InfiniteSampler(ds, seed=3, num_replicas=world, rank=rank), start + 50)
    resumed = InfiniteSampler(ds, seed=3, num_replicas=world, rank=rank)
    resumed.set_start_index(start)
    assert resumed.state_dict()["start_index"] == start
    assert take(resumed, 50) == uninterrupted[start:]
    assert resumed.state_dict()["start_index"] == 0  # reset after one iteration
    assert take(resumed, 5) == uninterrupted[:5]


def test_infinite_resume_far_away_is_computed_not_iterated():
    # 10**12 indices could never be skipped by iterating; the position is computed.
    n, world, rank, start = 7, 3, 1, 10**12
    sampler = InfiniteSampler(NoGetItem(n), seed=2, num_replicas=world, rank=rank)
    sampler.set_start_index(start)
    got = take(sampler, 20)
    expected = []
    for j in range(20):
        k, offset = divmod(rank + (start + j) * world, n)
        expected.append(torch.randperm(n, generator=torch.Generator().manual_seed(2 + k))[offset])
    assert got == [int(e) for e in expected]


def test_infinite_state_dict_and_set_epoch():
    ds = NoGetItem(6)
    sampler = InfiniteSampler(ds, seed=5, num_replicas=2, rank=0)
    sampler.set_epoch(3)
    sampler.set_start_index(8)
    state = sampler.state_dict()
    assert state == {"epoch": 3, "seed": 5, "start_index": 8}
    expected = take(sampler, 12)
    fresh = InfiniteSampler(ds, seed=0, num_replicas=2, rank=0)
    fresh.load_state_dict(state)
    assert take(fresh, 12) == expected
    # set_epoch does not change the stream.
    other = InfiniteSampler(ds, seed=5, num_replicas=2, rank=0)
    other.set_epoch(7)
    assert take(other, 12) == take(InfiniteSampler(ds, seed=5, num_replicas=2, rank=0), 12)


def test_infinite_with_dataloader_batches():
    data = torch.arange(10)
    loader = DataLoader(data, batch_size=4, sampler=InfiniteSampler(data, seed=0, num_replicas=1))
    batches = list(itertools.islice(iter(loader), 5))
    assert [len(b) for b in batches] == [4] * 5
    flat = torch.cat(batches).tolist()
    assert sorted(flat[:10]) == list(range(10))
    assert flat == take(InfiniteSampler(data, seed=0, num_replicas=1), 20)


def test_infinite_bad_input():
    with pytest.raises(ValueError, match="empty"):
        InfiniteSampler(NoGetItem(0))
    with pytest.raises(ValueError, match="rank"):
        InfiniteSampler(NoGetItem(3), num_replicas=2, rank=5)
    with pytest.raises(ValueError, match="start_index"):
        InfiniteSampler(NoGetItem(3)).set_start_index(-3)


# ---------------------------------------------------------------- SizeBucketBatchSampler


@pytest.mark.parametrize("n", [1, 37, 100, 128])
@pytest.mark.parametrize("world", [1, 2, 3])
@pytest.mark.parametrize("drop_last", [False, True])
def test_bucket_batches_cover_dataset_once(n, world, drop_last):
    bs = 8
    sizes = random_hw(n, seed=n)
    ds = NoGetItem(n, sizes)
    samplers = [
        SizeBucketBatchSampler(
            ds, bs, bucket_size_multiplier=2, drop_last=drop_last, num_replicas=world, rank=r
        )
        for r in range(world)
    ]
    shards = [list(s) for s in samplers]
    assert len({len(s) for s in samplers}) == 1
    assert [len(s) for s in shards] == [len(s) for s in samplers]
    batches = list(itertools.chain(*shards))
    counts = Counter(itertools.chain(*batches))
    if drop_last:
        assert all(len(b) == bs for b in batches)
        assert all(c == 1 for c in counts.values())
        assert len(batches) == (n // bs) - (n // bs) % world
    else:
        # The distinct batches partition the dataset; padding repeats whole batches.
        distinct = {tuple(b) for b in batches}
        assert len(distinct) == math.ceil(n / bs)
        assert sorted(itertools.chain(*distinct)) == list(range(n))
        assert sum(len(b) < bs for b in distinct) <= 1
        assert len(batches) == math.ceil(len(distinct) / world) * world


def test_bucket_padding_much_lower_than_random_batching():
    n, bs = 1000, 16
    sizes = random_hw(n, seed=1)
    bucketed = list(SizeBucketBatchSampler(NoGetItem(n, sizes), bs, seed=0, num_replicas=1))
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(0)).tolist()
    random_batches = [perm[i : i + bs] for i in range(0, n, bs)]
    ours, baseline = padded_fraction(bucketed, sizes), padded_fraction(random_batches, sizes)
    assert baseline > 0.3
    assert ours < baseline / 3


def test_bucket_scalar_sizes_group_neighbours():
    n, bs = 400, 10
    g = torch.Generator().manual_seed(3)
    lengths = torch.randint(1, 1000, (n,), generator=g).tolist()
    sampler = SizeBucketBatchSampler(NoGetItem(n, lengths), bs, num_replicas=1)
    spread = [max(lengths[i] for i in b) - min(lengths[i] for i in b) for b in sampler]
    perm = torch.randperm(n, generator=g).tolist()
    random_spread = [
        max(lengths[i] for i in perm[s : s + bs]) - min(lengths[i] for i in perm[s : s + bs])
        for s in range(0, n, bs)
    ]
    assert sum(spread) * 10 < sum(random_spread)


def test_bucket_is_deterministic_and_epochs_differ():
    sizes = random_hw(300, seed=2)
    ds = NoGetItem(300, sizes)

    def order(epoch, seed=0, rank=0):
        s = SizeBucketBatchSampler(
            ds, 8, bucket_size_multiplier=4, seed=seed, num_replicas=2, rank=rank
        )
        s.set_epoch(epoch)
        return list(s)

    assert order(1) == order(1)
    assert order(1) != order(2)
    assert order(1, seed=1) != order(1, seed=0)
    assert order(1, rank=0) != order(1, rank=1)
    assert ds.epochs[:2] == [1, 1]  # set_epoch forwards to the dataset


@pytest.mark.parametrize("start", [0, 3, 7, 8])
def test_bucket_start_index_counts_batches(start):
    ds = NoGetItem(120, random_hw(120, seed=4))
    sampler = SizeBucketBatchSampler(ds, 7, bucket_size_multiplier=2, num_replicas=2, rank=1)
    sampler.set_epoch(6)
    full = list(sampler)
    assert len(full) == len(sampler) == 9
    sampler.set_start_index(start)
    assert len(sampler) == 9
    assert list(sampler) == full[start:]
    assert list(sampler) == full


def test_bucket_state_dict_and_dataloader_resume():
    data = torch.arange(50)
    sizes = random_hw(50, seed=5)
    sampler = SizeBucketBatchSampler(data, 4, sizes=sizes, seed=3, num_replicas=1)
    sampler.set_epoch(2)
    uninterrupted = [b.tolist() for b in DataLoader(data, batch_sampler=sampler)]
    assert len(uninterrupted) == len(sampler) == 13
    sampler.set_start_index(5)
    state = sampler.state_dict()
    assert state == {"epoch": 2, "seed": 3, "start_index": 5}
    fresh = SizeBucketBatchSampler(data, 4, sizes=sizes, seed=0, num_replicas=1)
    fresh.load_state_dict(state)
    assert [b.tolist() for b in DataLoader(data, batch_sampler=fresh)] == uninterrupted[5:]


def test_bucket_size_sources():
    class WithAttr(SizedOnly):
        sizes = [3, 1, 2, 8, 5, 4, 7, 6]

    by_attr = list(SizeBucketBatchSampler(WithAttr(), 4, shuffle=False, num_replicas=1))
    assert by_attr == [[1, 2, 0, 5], [4, 7, 6, 3]]
    explicit = SizeBucketBatchSampler(
        WithAttr(), 4, sizes=list(range(8, 0, -1)), shuffle=False, num_replicas=1
    )
    assert list(explicit) == [[7, 6, 5, 4], [3, 2, 1, 0]]
    via_method = NoGetItem(4, [(10, 10), (1, 1), (10, 9), (1, 2)])
    assert list(SizeBucketBatchSampler(via_method, 2, shuffle=False, num_replicas=1)) == [
        [1, 3],
        [2, 0],
    ]


def test_bucket_size_errors():
    with pytest.raises(ValueError, match=r"get_sizes\(\).*sizes="):
        SizeBucketBatchSampler(SizedOnly(), 2)
    with pytest.raises(ValueError, match="gave 3 sizes for a dataset of 8"):
        SizeBucketBatchSampler(SizedOnly(), 2, sizes=[1, 2, 3])
    bad = [(1, 2)] * 8
    bad[5] = (1, 2, 3)
    with pytest.raises(ValueError, match="sample 5"):
        SizeBucketBatchSampler(SizedOnly(), 2, sizes=bad)
    mixed = [1] * 8
    mixed[2] = "big"
    with pytest.raises(ValueError, match="sample 2"):
        SizeBucketBatchSampler(SizedOnly(), 2, sizes=mixed)


def test_bucket_bad_arguments():
    ds = NoGetItem(10, [1] * 10)
    with pytest.raises(ValueError, match="batch_size"):
        SizeBucketBatchSampler(ds, 0)
    with pytest.raises(ValueError, match="bucket_size_multiplier"):
        SizeBucketBatchSampler(ds, 2, bucket_size_multiplier=0)
    with pytest.raises(ValueError, match="rank"):
        SizeBucketBatchSampler(ds, 2, num_replicas=2, rank=2)
    sampler = SizeBucketBatchSampler(ds, 2, num_replicas=2, rank=0)
    with pytest.raises(ValueError, match="start_index=4 is beyond the 3 batches"):
        sampler.set_start_index(4)


# ---------------------------------------------------------------- real processes

WORKER = textwrap.dedent(
    """
    import json, sys
    import torch.distributed as dist
    from mmpar.datasets.samplers import (
        DistributedSampler, InfiniteSampler, SizeBucketBatchSampler)

    class Sized:
        def __len__(self):
            return 23
        def get_sizes(self):
            return [(i % 5 + 1, i % 7 + 1) for i in range(23)]

    dist.init_process_group('gloo')
    ds = Sized()
    samplers = [DistributedSampler(ds, seed=4), InfiniteSampler(ds, seed=4),
                SizeBucketBatchSampler(ds, 3, seed=4)]
    mine = {
        'world': [[s.rank, s.num_replicas] for s in samplers],
        'dist': list(samplers[0]),
        'inf': [i for _, i in zip(range(30), samplers[1])],
        'bucket': list(samplers[2]),
    }
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, mine)
    if dist.get_rank() == 0:
        with open(sys.argv[1], 'w') as f:
            json.dump(gathered, f)
    dist.destroy_process_group()
    """
)


@pytest.mark.slow
def test_defaults_come_from_the_process_group(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    out = tmp_path / "out.json"
    env = dict(os.environ, OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2"]
    cmd += [str(script), str(out)]
    # Own session, so a hang kills torchrun and its workers together.
    proc = subprocess.Popen(
        cmd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _, stderr = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        raise
    assert proc.returncode == 0, stderr[-3000:]
    ranks = json.loads(out.read_text())
    assert [r["world"] for r in ranks] == [[[0, 2]] * 3, [[1, 2]] * 3]
    dist_all = ranks[0]["dist"] + ranks[1]["dist"]
    assert len(dist_all) == 24 and set(dist_all) == set(range(23))
    single = take(InfiniteSampler(NoGetItem(23), seed=4, num_replicas=1, rank=0), 60)
    assert ranks[0]["inf"] == single[0::2][:30] and ranks[1]["inf"] == single[1::2][:30]
    bucket = ranks[0]["bucket"] + ranks[1]["bucket"]
    assert len(ranks[0]["bucket"]) == len(ranks[1]["bucket"]) == 4
    assert set(itertools.chain(*bucket)) == set(range(23))
