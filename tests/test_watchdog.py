"""The watchdog runs its action only when the block outlasts the timeout."""

from __future__ import annotations

import threading
import time

from lakecompat.engines.infra.watchdog import Watchdog


def test_a_fast_block_does_not_fire() -> None:
    calls: list[int] = []
    # A block of nothing: even a loaded machine ends it long before 30 s.
    with Watchdog(30, lambda: calls.append(1)) as dog:
        pass
    # The exit cancelled the timer: its thread ends now, without acting (a timer left running
    # would act after 30 s, within this wait).
    assert dog._timer is not None
    dog._timer.join(60)
    assert not dog._timer.is_alive()
    assert not dog.fired and calls == []


def test_a_slow_block_fires_and_the_action_unblocks_it() -> None:
    stuck = threading.Event()
    with Watchdog(0.2, stuck.set) as dog:
        # A "hung engine call" the kill releases; the wait's own bound only keeps a broken
        # watchdog from hanging the suite, far beyond any load's delay of a 0.2 s timer.
        released = stuck.wait(timeout=120)
    assert released and dog.fired
    assert dog.reason == "timeout after 0.2 s"


def test_zero_disables_it() -> None:
    with Watchdog(0, lambda: None) as dog:
        time.sleep(0.05)
    assert not dog.fired
