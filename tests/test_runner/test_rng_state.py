"""get_rng_state / set_rng_state: a checkpointed RNG state replays the same draws."""

import io
import random

import numpy as np
import torch

from mmpar.runner.utils import get_rng_state, set_rng_state


def _draws() -> tuple:
    return random.random(), float(np.random.rand()), torch.rand(3).tolist()


def _through_checkpoint(state: dict) -> dict:
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return torch.load(buffer, weights_only=True)


def test_state_saved_with_weights_only_replays_the_same_draws():
    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    _draws()
    state = _through_checkpoint(get_rng_state())
    expected = _draws()
    _draws()  # move every generator on
    set_rng_state(state)
    assert _draws() == expected


def test_state_of_older_checkpoints_with_python_words_as_a_list_still_loads():
    random.seed(2)
    state = get_rng_state()
    version, words, gauss = random.getstate()
    state["python"] = (version, list(words), gauss)  # the format written before the tensor
    expected = random.random()
    random.random()
    set_rng_state(_through_checkpoint(state))
    assert random.random() == expected


def _checkpoint_of_two_ranks(make_runner, tmp_path):
    """A checkpoint with every rank's RNG states, as rank 0 of a 2-process run writes it."""
    runner = make_runner(max_epochs=1)
    runner.save_checkpoint(str(tmp_path), "ckpt.pth", create_symlink=False)
    path = tmp_path / "ckpt.pth"
    ckpt = torch.load(path, weights_only=True)
    states = []
    for seed in (10, 11):  # --diff-seed: rank r seeds base + r
        torch.manual_seed(seed)
        states.append(get_rng_state())
    ckpt["mmpar_state"]["rng"] = states[0]
    ckpt["mmpar_state"]["rng_per_rank"] = states
    torch.save(ckpt, path)
    return str(path), states


def _resumed_rng(make_runner, path, rank, world_size):
    runner = make_runner(max_epochs=1)
    runner._rank, runner._world_size = rank, world_size
    runner.resume(path)
    return runner._resume.rng


def test_each_rank_resumes_its_own_rng_states(make_runner, tmp_path):
    path, states = _checkpoint_of_two_ranks(make_runner, tmp_path)
    for rank in (0, 1):
        got = _resumed_rng(make_runner, path, rank, 2)
        assert torch.equal(got["torch"], states[rank]["torch"])


def test_another_world_size_warns_once_and_takes_the_writers_states(
    make_runner, tmp_path, caplog, test_logger
):
    path, states = _checkpoint_of_two_ranks(make_runner, tmp_path)
    with caplog.at_level("WARNING", logger=test_logger.name):
        for rank in (0, 1, 2):
            got = _resumed_rng(make_runner, path, rank, 3)
            assert torch.equal(got["torch"], states[0]["torch"])
    warnings = [r for r in caplog.records if "RNG states of 2 processes" in r.getMessage()]
    assert len(warnings) == 1 and "this run has 3" in warnings[0].getMessage()
