"""A one-thread pipeline: jobs run in the order they were submitted, beside the caller.

The runner uses it to read table N with the engines that have processes of their own while
the writer (in the caller's thread) writes table N+1, so both cores work.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable

Job = Callable[[], None]
_POLL = 0.2


class Pipeline:
    """Runs jobs one at a time, in order, on a background thread (or inline when `inline`).

    At most `depth` jobs wait; `submit` blocks beyond that, so the caller cannot run far
    ahead. A job's exception (KeyboardInterrupt included) stops the pipeline and is raised
    again in the caller's thread by the next `submit`, `drain` or `finish`.
    """

    def __init__(self, name: str, depth: int = 1, inline: bool = False) -> None:
        self.inline = inline
        self._queue: queue.Queue[Job | None] = queue.Queue(maxsize=depth)
        self._failure: BaseException | None = None
        #: Set while a job runs (an idle thread waits for the next job, not for anything).
        self._busy = threading.Event()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        if not inline:
            self._thread.start()

    def submit(self, job: Job) -> None:
        """Queue `job` (or run it now, when inline)."""
        self._raise_failure()
        if self.inline:
            job()
            return
        self._put(job)

    def drain(self) -> None:
        """Wait until every submitted job has run."""
        if not self.inline:
            self._queue.join()
        self._raise_failure()

    def finish(self) -> None:
        """Run what is queued, then end the thread."""
        if not self.inline:
            self._put(None)
            while self._thread.is_alive():
                self._thread.join(_POLL)
        self._raise_failure()

    def _put(self, job: Job | None) -> None:
        """Queue `job` (None: the end), raising a failed job's error while waiting for room."""
        while self._thread.is_alive():
            try:
                self._queue.put(job, timeout=_POLL)
                return
            except queue.Full:
                self._raise_failure()
        self._raise_failure()

    def wait_stopped(self, timeout: float) -> None:
        """After the caller gave up: wait up to `timeout` s for the current job to end (not
        at all when the thread is idle, waiting for a job that will not come)."""
        deadline = time.monotonic() + timeout
        while (
            not self.inline
            and self._thread.is_alive()
            and self._busy.is_set()
            and time.monotonic() < deadline
        ):
            self._thread.join(_POLL)

    def _raise_failure(self) -> None:
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure

    def _work(self) -> None:
        failed = False
        while True:
            job = self._queue.get()
            try:
                if job is None:
                    return
                if not failed:  # after a failure, jobs are only taken off the queue
                    self._busy.set()
                    job()
            except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                failed = True
                self._failure = exc
            finally:
                self._busy.clear()
                self._queue.task_done()
