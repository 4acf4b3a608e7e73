"""Ports for the services lakecompat starts.

A service's port is chosen before its JVM starts and bound seconds later. A port the kernel
handed out (`bind` to port 0) comes from the range it also gives outgoing connections their
local ports from, so on a busy machine a client's connection could take the port in between
and the service would fail with "Address already in use". The ports chosen here lie below
that range, where only a process that asks for a port by its number gets one.
"""

from __future__ import annotations

import random
import socket
import threading
from pathlib import Path

from lakecompat.engines.infra.supervisor import free_port

#: Where Linux keeps the range of local ports it hands out.
EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
#: The lowest port chosen: above the ports of well-known and commonly configured services.
LOWEST = 10000
#: Fewer free-to-choose ports than this below the kernel's range: take one the kernel hands out.
ENOUGH = 1000
_ATTEMPTS = 100

_lock = threading.Lock()
_given: set[int] = set()  # a port this process chose is not chosen again for another service
_random = random.SystemRandom()


def ephemeral_start(path: Path = EPHEMERAL_RANGE) -> int | None:
    """The first port of the kernel's range for outgoing connections, or None if unknown."""
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def service_port(host: str = "127.0.0.1", range_file: Path = EPHEMERAL_RANGE) -> int:
    """A port on `host` that is free now and that no outgoing connection will take: one
    below the kernel's range (see the module's text), or one the kernel hands out where that
    range leaves too few below it."""
    start = ephemeral_start(range_file)
    if start is not None and start - LOWEST >= ENOUGH:
        for _ in range(_ATTEMPTS):
            port = _random.randrange(LOWEST, start)
            with _lock:
                if port in _given or not _bindable(host, port):
                    continue
                _given.add(port)
                return port
    return _kernel_port(host)


def _kernel_port(host: str) -> int:
    """A port the kernel hands out that this process has not chosen before: the kernel may
    hand out a port again as soon as the socket that held it is closed."""
    for _ in range(_ATTEMPTS):
        port = free_port(host)
        with _lock:
            if port not in _given:
                _given.add(port)
                return port
    raise OSError(f"no free port on {host} that was not chosen before ({_ATTEMPTS} tries)")


def _bindable(host: str, port: int) -> bool:
    """Whether a listening socket could bind `host:port` now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True
