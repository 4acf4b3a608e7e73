"""The watchdog runs its action only when the block outlasts the timeout."""

from __future__ import annotations

import threading
import time

from engines.infra.watchdog import Watchdog


def test_a_fast_block_does_not_fire() -> None:
    calls: list[int] = []
    with Watchdog(5, lambda: calls.append(1)) as dog:
        pass
    time.sleep(0.05)
    assert not dog.fired and calls == []


def test_a_slow_block_fires_and_the_action_unblocks_it() -> None:
    stuck = threading.Event()
    with Watchdog(0.2, stuck.set) as dog:
        released = stuck.wait(timeout=10)  # a "hung engine call" the kill releases
    assert released and dog.fired
    assert dog.reason == "timeout after 0.2 s"


def test_zero_disables_it() -> None:
    with Watchdog(0, lambda: None) as dog:
        time.sleep(0.05)
    assert not dog.fired
