"""A watchdog for calls into engines that may hang: after a timeout it runs an action (kill
the engine's processes) so that the blocked call fails and the run can go on."""

from __future__ import annotations

import threading
from collections.abc import Callable
from types import TracebackType


class Watchdog:
    """`with Watchdog(30, engine.kill) as dog:` runs `engine.kill()` if the block is still
    running after 30 s; `dog.fired` says whether it did. A timeout of 0 or less disables it."""

    def __init__(self, seconds: float, action: Callable[[], object]) -> None:
        self.seconds = seconds
        self.action = action
        self.fired = False
        self._timer: threading.Timer | None = None

    def _fire(self) -> None:
        self.fired = True
        self.action()

    def __enter__(self) -> Watchdog:
        if self.seconds > 0:
            self._timer = threading.Timer(self.seconds, self._fire)
            self._timer.daemon = True
            self._timer.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._timer is not None:
            self._timer.cancel()
            if self.fired:
                self._timer.join()  # the kill has finished before anyone restarts the engine

    @property
    def reason(self) -> str:
        return f"timeout after {self.seconds:g} s"
