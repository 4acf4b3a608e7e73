"""Ending Spark's JVM: a JVM slow to exit (writing its class archive on a busy machine) is
killed after the wait instead of failing the run; one that exits is only waited for."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

from lakecompat.engines.spark.runtime import end_jvm

#: Reads its stdin to the end, as PySpark's JVM does, then exits or keeps running.
EXITS = "import sys; sys.stdin.read()"
LINGERS = "import sys, time; sys.stdin.read(); time.sleep(600)"


def started(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE)


def test_a_process_that_does_not_exit_in_time_is_killed() -> None:
    process = started(LINGERS)
    assert process.stdin is not None
    process.stdin.close()
    began = time.monotonic()
    end_jvm(process, 0.5)
    assert process.returncode == -signal.SIGKILL
    assert time.monotonic() - began < 30


def test_a_process_that_exits_is_waited_for_and_not_killed() -> None:
    process = started(EXITS)
    assert process.stdin is not None
    process.stdin.close()
    end_jvm(process, 60)
    assert process.returncode == 0
