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
