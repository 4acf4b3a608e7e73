"""A stop (Ctrl-C) while the engines start or answer the control check ends their work at
once, instead of waiting minutes for every engine to warm up first."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lakecompat.engines.infra.supervisor import Service
from lakecompat.harness.run.fleet import EngineState, at_once, start_engine


class SlowStart:
    """An engine whose start waits for its process to be ready (here: for a minute), and
    whose kill ends that process, so the start fails."""

    shares_writer = False

    def __init__(self, label: str) -> None:
        self.label = label
        self.killed = threading.Event()

    def start(self) -> None:
        if self.killed.wait(timeout=60):
            raise RuntimeError(f"{self.label} died while it started")

    def kill(self) -> None:
        self.killed.set()

    def log_excerpt(self) -> str:
        return ""


def seconds_to_stop(states: list[EngineState], interrupted: Callable[[], None]) -> float:
    """Start the engines of `states` while `interrupted` (Spark's start, in this thread)
    meets a Ctrl-C; the seconds until the stop is through."""
    began = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        at_once(states, start_engine, "start", first=interrupted)
    return time.monotonic() - began


def test_a_stop_while_engines_start_kills_them_instead_of_waiting() -> None:
    engines = [SlowStart("trino"), SlowStart("hive")]
    states = [EngineState(engine) for engine in engines]  # type: ignore[arg-type]

    def interrupted() -> None:  # Spark's own start, in this thread, meets the Ctrl-C
        time.sleep(0.2)
        raise KeyboardInterrupt

    assert seconds_to_stop(states, interrupted) < 10
    assert all(engine.killed.is_set() for engine in engines)
    assert all("died while it started" in state.failure for state in states)


class Never:
    """A readiness check that never passes: a server that takes minutes to warm up."""

    def ready(self, service: Service) -> bool:
        return False


class StartsAServer:
    """An engine whose start launches a real process and waits for it; until the start
    returns, the engine holds no handle on the server, so its own kill cannot end it."""

    shares_writer = False
    label = "slow-server"

    def __init__(self, log_dir: Path) -> None:
        self.service = Service("slow-server", ["sleep", "120"], log_dir, Never(), timeout_s=120)

    def start(self) -> None:
        self.service.start()

    def kill(self) -> None:
        pass

    def log_excerpt(self) -> str:
        return ""


def test_a_stop_kills_a_server_its_engine_does_not_hold_yet(tmp_path: Path) -> None:
    engine = StartsAServer(tmp_path)
    states = [EngineState(engine)]  # type: ignore[list-item]

    def interrupted() -> None:
        while engine.service.pid is None:
            time.sleep(0.05)
        raise KeyboardInterrupt

    assert seconds_to_stop(states, interrupted) < 15
    assert not engine.service.running
    assert "before it was ready" in states[0].failure
