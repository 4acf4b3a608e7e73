"""Service ports are chosen below the kernel's range for outgoing connections, free, and never
twice in one process; where that range leaves too few below it, the kernel chooses."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from lakecompat.engines.infra import ports


def _range_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ip_local_port_range"
    path.write_text(text)
    return path


def test_a_service_port_is_free_and_below_the_range_of_outgoing_connections(
    tmp_path: Path,
) -> None:
    range_file = _range_file(tmp_path, "40000\t60999\n")
    chosen = {ports.service_port(range_file=range_file) for _ in range(20)}
    assert len(chosen) == 20  # never the same port twice
    for port in chosen:
        assert ports.LOWEST <= port < 40000
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", port))  # free: binding it raises nothing


def test_a_port_in_use_or_given_before_is_passed_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    range_file = _range_file(tmp_path, "40000 60999")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        taken = busy.getsockname()[1]
        given = ports.service_port(range_file=range_file)
        offers = iter([taken, given, taken, given, given + 1 if given + 1 < 40000 else given - 1])
        monkeypatch.setattr(ports._random, "randrange", lambda low, high: next(offers))
        port = ports.service_port(range_file=range_file)
    assert port not in (taken, given)
    assert ports.LOWEST <= port < 40000


@pytest.mark.parametrize("text", ["10500 60999", "", "no numbers"])
def test_without_room_below_the_range_the_kernel_chooses(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    offers = iter([54321, 54321, 54321, 54322])
    monkeypatch.setattr(ports, "free_port", lambda host="127.0.0.1": next(offers))
    monkeypatch.setattr(ports, "_given", set())
    assert ports.service_port(range_file=_range_file(tmp_path, text)) == 54321
    # The kernel hands out a port again once it is free: one chosen before is passed over.
    assert ports.service_port(range_file=tmp_path / "missing") == 54322
