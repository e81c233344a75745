"""mmcv 1.x progress bars: ProgressBar and track_* (counting, results, pools).

The exact text mmcv writes is checked in test_mmcv_behaviour_utils.py."""

import io
import multiprocessing
import os

import pytest

from mmpar.utils import ProgressBar, track_iter_progress, track_parallel_progress, track_progress
from mmpar.utils.progressbar import init_pool


def square(x):
    return x * x


def add(x, y=0):
    return x + y


_EVENT = None


def set_event(event):
    global _EVENT
    _EVENT = event


def last_releases_first(x):
    # Task 0 waits until the last task (5) runs: the other worker has returned 1..4 by then.
    if x == 0:
        assert _EVENT.wait(timeout=60)
    if x == 5:
        _EVENT.set()
    return x


def pid_and_initial(x):
    return os.getpid(), _INITIAL


_INITIAL = None


def set_initial(value):
    global _INITIAL
    _INITIAL = value


def test_progress_bar_counts_and_leaves_its_line_to_close():
    out = io.StringIO()
    bar = ProgressBar(3, bar_width=10, file=out)
    assert (bar.task_num, bar.bar_width, bar.completed, bar.file) == (3, 10, 0, out)
    bar.update()
    bar.update(num_tasks=2)
    assert bar.completed == 3
    text = out.getvalue()
    assert "3/3" in text and not text.endswith("\n")  # as in mmcv: the caller ends the line
    bar.close()
    bar.close()
    assert out.getvalue() == text + "\n"
    assert bar.timer.since_start() >= 0


def test_progress_bar_without_total_counts():
    out = io.StringIO()
    bar = ProgressBar(file=out)
    bar.update(4)
    bar.close()
    assert bar.completed == 4
    assert "completed: 4" in out.getvalue()


def test_progress_bar_not_started_starts_on_update():
    out = io.StringIO()
    bar = ProgressBar(2, start=False, file=out)
    assert out.getvalue() == ""
    bar.update()
    bar.update()
    assert bar.completed == 2 and "2/2" in out.getvalue()


def test_progress_bar_rejects_non_positive_update():
    bar = ProgressBar(2, file=io.StringIO())
    with pytest.raises(AssertionError, match="num_tasks"):
        bar.update(0)
    with pytest.raises(ValueError, match="num_tasks"):
        bar.update(-1)
    assert bar.completed == 0


def test_track_progress_list_and_tuple_tasks():
    out = io.StringIO()
    assert track_progress(square, [1, 2, 3], file=out) == [1, 4, 9]
    assert "3/3" in out.getvalue()
    out = io.StringIO()
    assert track_progress(add, (iter([1, 2]), 2), bar_width=20, file=out, y=10) == [11, 12]
    assert "2/2" in out.getvalue()


@pytest.mark.parametrize(
    "tasks,exc",
    [
        ((iter([1]), 1, 2), AssertionError),
        ((iter([1]), "1"), AssertionError),
        ((1, 1), TypeError),
        (5, TypeError),
    ],
)
def test_track_progress_bad_tasks(tasks, exc):
    with pytest.raises(exc, match="tasks"):
        track_progress(square, tasks, file=io.StringIO())


def test_track_iter_progress():
    out = io.StringIO()
    seen = [task for task in track_iter_progress([5, 6, 7], file=out)]
    assert seen == [5, 6, 7] and "3/3" in out.getvalue()
    out = io.StringIO()
    assert list(track_iter_progress((iter("ab"), 2), bar_width=5, file=out)) == ["a", "b"]
    with pytest.raises(TypeError, match="tasks"):
        next(track_iter_progress(3, file=io.StringIO()))


def test_track_parallel_progress_keeps_order():
    out = io.StringIO()
    results = track_parallel_progress(square, list(range(8)), nproc=2, file=out)
    assert results == [x * x for x in range(8)]
    assert "8/8" in out.getvalue()


def test_track_parallel_progress_unordered_chunks_and_tuple_tasks():
    out = io.StringIO()
    tasks = (iter(range(6)), 6)
    results = track_parallel_progress(
        last_releases_first,
        tasks,
        nproc=2,
        initializer=set_event,
        initargs=(multiprocessing.Event(),),
        keep_order=False,
        file=out,
    )
    assert sorted(results) == list(range(6))
    assert results[:4] == [1, 2, 3, 4]  # completion order, not task order
    assert "6/6" in out.getvalue()
    out = io.StringIO()
    results = track_parallel_progress(square, list(range(7)), nproc=2, chunksize=3, file=out)
    assert results == [x * x for x in range(7)]


def test_track_parallel_progress_skip_first_counts_the_rest():
    out = io.StringIO()
    results = track_parallel_progress(
        square, list(range(6)), nproc=2, chunksize=1, skip_first=True, file=out
    )
    assert results == [x * x for x in range(6)]
    assert "4/4" in out.getvalue()  # the first nproc * chunksize results are not counted


def test_track_parallel_progress_initializer_runs_in_each_worker():
    results = track_parallel_progress(
        pid_and_initial,
        list(range(6)),
        nproc=2,
        initializer=set_initial,
        initargs=("ready",),
        file=io.StringIO(),
    )
    assert [initial for _, initial in results] == ["ready"] * 6
    assert os.getpid() not in {pid for pid, _ in results}
    assert _INITIAL is None  # the parent was not initialized


def test_track_parallel_progress_propagates_worker_errors():
    with pytest.raises(TypeError):
        track_parallel_progress(square, [1, "a", 3], nproc=2, file=io.StringIO())


def test_init_pool():
    with pytest.raises(TypeError, match="initargs"):
        init_pool(1, set_initial, ["x"])
    pool = init_pool(2)
    try:
        assert pool.map(square, [1, 2, 3]) == [1, 4, 9]
    finally:
        pool.close()
        pool.join()
