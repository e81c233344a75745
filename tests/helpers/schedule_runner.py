"""Driving LR and momentum schedule hooks without a real runner, in the epoch runner's order;
comparing the nested values they set."""

import math


class FakeRunner:
    """The attributes the schedule hooks read from a runner; counters start at 0."""

    def __init__(self, optimizer, max_epochs, iters_per_epoch):
        self.optimizer = optimizer
        self.data_loader = list(range(iters_per_epoch))
        self.max_epochs = max_epochs
        self.max_iters = max_epochs * iters_per_epoch
        self.epoch = self.iter = self.inner_iter = 0
        self.mode = "train"


def run_schedule(runner, hooks, record, stop_at_iter=None):
    """Call ``hooks`` as the epoch runner does (before_run, then per epoch before_train_epoch
    and per iteration before_train_iter; counters advance after the iteration) and return
    ``record(runner.optimizer)`` of every iteration; stop before iteration ``stop_at_iter``.

    A runner already part-way (a resumed one) continues from its ``epoch`` and ``inner_iter``.
    """
    hooks = hooks if isinstance(hooks, list) else [hooks]
    seen = []
    for hook in hooks:
        hook.before_run(runner)
    while runner.epoch < runner.max_epochs:
        for hook in hooks:
            hook.before_train_epoch(runner)
        for i in range(runner.inner_iter, len(runner.data_loader)):
            if runner.iter == stop_at_iter:
                return seen
            runner.inner_iter = i
            for hook in hooks:
                hook.before_train_iter(runner)
            seen.append(record(runner.optimizer))
            runner.iter += 1
        runner.inner_iter = 0
        runner.epoch += 1
    return seen


def _close(actual, expected):
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_close(actual[k], v) for k, v in expected.items())
        )
    if isinstance(expected, (list, tuple)):
        return (
            isinstance(actual, (list, tuple))
            and len(actual) == len(expected)
            and all(_close(a, e) for a, e in zip(actual, expected))
        )
    if isinstance(expected, approx):
        return _close(actual, expected.expected)
    return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-12)


class approx:
    """Nested (lists / dicts of floats) version of pytest.approx."""

    def __init__(self, expected):
        self.expected = expected

    def __eq__(self, actual):
        return _close(actual, self.expected)

    def __repr__(self):
        return f"approx({self.expected!r})"
