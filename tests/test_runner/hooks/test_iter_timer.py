"""IterTimerHook: data time and iteration time in the log buffer."""

from mmpar.runner import IterTimerHook, LogBuffer
from mmpar.runner.hooks import iter_timer


class FakeClock:
    """Stands in for ``time`` in the timer's module: only advances when told to."""

    def __init__(self):
        self.now = 100.0

    def perf_counter(self):
        return self.now


def test_iter_timer_logs_time_and_data_time(make_runner, make_loader, toy_model, monkeypatch):
    clock = FakeClock()
    monkeypatch.setattr(iter_timer, "time", clock)

    class SlowLoader:  # each batch takes 2 s to arrive
        def __init__(self, loader):
            self.loader = loader

        def __len__(self):
            return len(self.loader)

        def __iter__(self):
            for batch in self.loader:
                clock.now += 2.0
                yield batch

    class SlowModel(type(toy_model)):  # each step takes 5 s
        def train_step(self, data_batch, optimizer, **kwargs):
            clock.now += 5.0
            return super().train_step(data_batch, optimizer, **kwargs)

    runner = make_runner(model=SlowModel(), max_epochs=2)
    runner.register_hook(IterTimerHook(), "LOW")
    runner.run([SlowLoader(make_loader(12, 4))], [("train", 1)])
    # data_time: waiting for the batch; time: the whole iteration (batch + step), per epoch too.
    assert runner.log_buffer.val_history["data_time"] == [2.0] * 6
    assert runner.log_buffer.val_history["time"] == [7.0] * 6


class CountingBuffer(LogBuffer):
    """A subclass overriding ``update``: every value must pass through it."""

    def __init__(self):
        super().__init__()
        self.keys = []

    def update(self, vars, count=1):
        self.keys.extend(vars)
        super().update(vars, count)


def test_iter_timer_calls_update_of_a_log_buffer_subclass(make_runner, make_loader):
    runner = make_runner(max_epochs=1)
    runner.log_buffer = CountingBuffer()
    runner.register_hook(IterTimerHook(), "LOW")
    runner.run([make_loader(8, 4)], [("train", 1)])
    assert runner.log_buffer.keys == ["data_time", "loss", "time"] * 2
    assert list(runner.log_buffer.val_history) == ["data_time", "loss", "time"]
