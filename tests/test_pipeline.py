"""The readers' pipeline: order, concurrency with the caller, and failures handed back."""

from __future__ import annotations

import threading
import time

import pytest

from lakecompat.harness.run.pipeline import Pipeline


def test_jobs_run_in_order_on_another_thread() -> None:
    pipeline = Pipeline("test", depth=2)
    seen: list[tuple[int, str]] = []
    for index in range(20):
        pipeline.submit(lambda i=index: seen.append((i, threading.current_thread().name)))
    pipeline.finish()
    assert [i for i, _ in seen] == list(range(20))
    assert {name for _, name in seen} == {"test"}


def test_the_caller_goes_on_while_a_job_runs() -> None:
    pipeline = Pipeline("test")
    release = threading.Event()
    finished: list[str] = []
    # The job waits for the caller (its bound only keeps a broken pipeline from hanging).
    pipeline.submit(lambda: (release.wait(120), finished.append("job")))
    finished.append("caller")  # the job is still blocked: the caller got here first
    release.set()
    pipeline.finish()
    assert finished == ["caller", "job"]


def test_submit_blocks_when_the_queue_is_full() -> None:
    pipeline = Pipeline("test", depth=1)
    release = threading.Event()
    pipeline.submit(lambda: release.wait(120))  # running until released
    pipeline.submit(lambda: None)  # waiting in the queue
    third = threading.Thread(target=pipeline.submit, args=(lambda: None,))
    third.start()
    try:
        # No room while the first job runs, however long we look (and however busy the machine).
        third.join(0.5)
        assert third.is_alive()
    finally:
        release.set()  # the first job ends, the second leaves the queue: room for the third
    third.join(120)
    assert not third.is_alive()
    pipeline.finish()


def test_a_failing_job_stops_the_pipeline_and_the_caller_gets_the_error() -> None:
    pipeline = Pipeline("test")
    ran: list[int] = []

    def fail() -> None:
        raise KeyboardInterrupt  # a job may raise anything, Ctrl-C included

    pipeline.submit(fail)
    with pytest.raises(KeyboardInterrupt):
        for index in range(100):  # the failure surfaces at one of the next calls
            pipeline.submit(lambda i=index: ran.append(i))
            time.sleep(0.01)
        pipeline.finish()
    assert ran == []  # nothing after the failure ran


def test_drain_waits_for_every_job() -> None:
    pipeline = Pipeline("test", depth=3)
    done: list[int] = []
    for index in range(3):
        pipeline.submit(lambda i=index: (time.sleep(0.1), done.append(i)))
    pipeline.drain()
    assert done == [0, 1, 2]
    pipeline.finish()


def test_inline_runs_each_job_at_once_in_the_callers_thread() -> None:
    pipeline = Pipeline("test", inline=True)
    names: list[str] = []
    pipeline.submit(lambda: names.append(threading.current_thread().name))
    assert names == [threading.current_thread().name]
    pipeline.finish()


def test_wait_stopped_waits_for_a_running_job_but_not_for_an_idle_thread() -> None:
    pipeline = Pipeline("test")
    started, ended = threading.Event(), threading.Event()
    pipeline.submit(lambda: (started.set(), time.sleep(0.5), ended.set()))
    assert started.wait(120)
    pipeline.wait_stopped(timeout=120)
    assert ended.is_set()  # the job in progress ended first
    began = time.monotonic()
    pipeline.wait_stopped(timeout=120)  # now idle: nothing to wait for
    assert time.monotonic() - began < 60  # it did not wait out the timeout
    pipeline.finish()
