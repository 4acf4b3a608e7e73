"""What a failed Hive read says: HiveServer2's message, completed from its log.

HiveServer2 tells a client that a MapReduce job failed ("return code 2"), not why; and an
exception without a message names no place. The server log the query wrote says both.
"""

from __future__ import annotations

import re
from pathlib import Path


def with_job_cause(message: str, log: Path, start: int) -> str:
    """What the server log the query wrote adds to HiveServer2's message (queries of one
    HiveServer2 run one at a time):

    - a failed MapReduce job says only "return code 2 from ...MapRedTask" to the client: the
      job's cause is appended;
    - an exception without a message ("java.io.IOException: java.lang.IllegalArgumentException")
      says nothing of where it came from: the Hudi frame that threw it is appended.
    """
    bare = _BARE_EXCEPTION.search(message)
    if "MapRedTask" not in message and not bare:
        return message
    written = written_since(log, start)
    frame = throwing_frame(written, bare[1]) if bare else None
    if frame:
        return f"{message} (no message) at {frame}"
    causes = [line.strip() for line in written if line.startswith("Caused by: ")]
    if not causes:
        return message
    return f"{message}; the MapReduce job failed with {causes[-1].removeprefix('Caused by: ')}"


def written_since(log: Path, start: int) -> list[str]:
    """The lines HiveServer2 logged after `start` (none when there is no log)."""
    if not log.is_file():
        return []
    with log.open("rb") as handle:
        handle.seek(start)
        return handle.read().decode(errors="replace").splitlines()


#: A message that ends in a Java exception's class name, i.e. an exception without a message.
_BARE_EXCEPTION = re.compile(r"\b((?:java|org)\.[\w.$]+(?:Exception|Error))\s*$")


def throwing_frame(lines: list[str], exception: str) -> str | None:
    """The first Hudi frame (not a validation helper) under `Caused by: <exception>`."""
    for number, line in enumerate(lines):
        if line.strip() != f"Caused by: {exception}":
            continue
        for frame in lines[number + 1 :]:
            frame = frame.strip()
            if not frame.startswith("at "):
                break
            if frame.startswith("at org.apache.hudi.") and ".ValidationUtils." not in frame:
                return frame.removeprefix("at ")
    return None
