"""What a failed Hive read says: HiveServer2's message, completed from its log, and the causes
of every file group of the table, the same on every run.

HiveServer2 tells a client that a MapReduce job failed ("return code 2"), not why; and an
exception without a message names no place. The server log the query wrote says both
(`with_job_cause`).

HiveServer2 stops at the first row that fails, and which file group it reads first is chance:
Hudi's Hive input formats list a table's file groups in the order of a hash set of their ids,
which each write makes from random UUIDs. Where file groups fail differently (one row's NULLs
let another column fail first, files written before and after a change differ, the same
exception is thrown in the record reader or later), each write of the same table gave another
first error. So a failed read of a Hudi table is told by what each of its file groups gives
when its rows alone are read (`in_file_group`): the innermost exception of each error
(`root_cause`), the distinct ones in sorted order (`causes_line`). HiveServer2's own message
stays under that line, and the evidence is the first read's.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path

from lakecompat.engines.errors import QueryError
from lakecompat.engines.reasons import stable_reason

#: What `with_job_cause` puts between HiveServer2's message and the MapReduce job's cause.
JOB_FAILED = "; the MapReduce job failed with "


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
    return f"{message}{JOB_FAILED}{causes[-1].removeprefix('Caused by: ')}"


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


def read_failure(message: str) -> bool:
    """Whether HiveServer2's message is that of a read of the table's files that failed (a
    fetch task's exception, or a MapReduce job), not of compiling the query or of its
    session's settings."""
    return "MapRedTask" in message or bool(_EXCEPTION.match(message))


def root_cause(message: str, trace: str) -> str:
    """The innermost exception of a failed read (the MapReduce job's cause, the last `Caused
    by:` of its trace, or the innermost exception its message names), without the JVM's module
    details: what the file group failed with, whichever wrappers the read path added."""
    first = message.splitlines()[0] if message else ""
    job = first.partition(JOB_FAILED)[2]
    if job:
        return _without_modules(job)
    causes = [line.strip() for line in trace.splitlines() if line.startswith("Caused by: ")]
    root = causes[-1].removeprefix("Caused by: ") if causes else _innermost(first)
    if _EXCEPTION.fullmatch(root):  # no message: where it was thrown says more
        frame = throwing_frame(trace.splitlines(), root)
        root = f"{root} (no message)" + (f" at {frame}" if frame else "")
    return _without_modules(root)


def cause_of(failure: QueryError) -> tuple[str, bool]:
    """A failed read's innermost cause (`root_cause`), and whether it failed on a row
    (`in_rows`)."""
    said = str(failure)
    return root_cause(said, failure.trace), in_rows(said, failure.trace)


def file_groups(table: Path) -> list[str]:
    """The ids of the file groups whose files (base files and log files) a Hudi table's folder
    and its partition folders hold, sorted."""
    found = set()
    for _, folders, files in os.walk(table):
        folders[:] = [name for name in folders if not name.startswith(".")]
        for name in files:
            match = _BASE_FILE.match(name) or _LOG_FILE.match(name)
            if match:
                found.add(match[1])
    return sorted(found)


def in_file_group(sql: str, file_id: str) -> str:
    """`sql` (statements whose last is `SELECT ... FROM t [WHERE p]`) reading the files of one
    file group only: the rows of the others are dropped before Hive looks at their values."""
    head, _, select = sql.rpartition("\n")
    alone = f"INPUT__FILE__NAME RLIKE '/[.]?{file_id}_[^/]*$'"
    query, where, predicate = select.partition(" WHERE ")
    select = f"{query} WHERE ({predicate}) AND {alone}" if where else f"{select} WHERE {alone}"
    return f"{head}\n{select}" if head else select


def in_rows(message: str, trace: str) -> bool:
    """Whether a read failed in Hive's operators, on a row the record reader gave them (their
    HiveException in its chain, or their frames in its trace), not in the record reader of
    the file group itself."""
    return bool(_IN_OPERATORS.search(message) or _IN_OPERATORS.search(trace))


def causes_line(message: str, causes: Iterable[tuple[str, bool]]) -> str:
    """The first line of a failed read's message: its distinct causes (`root_cause`, `in_rows`)
    in sorted order, cut to fit them all (after "the MapReduce job failed with", where
    HiveServer2 ran one).

    Where some file groups cannot be opened (their record reader fails), those causes alone:
    Hive meets them in any order of file groups, while it reaches another file group's rows
    only when none of those comes first (and a file group read alone by its rows is read after
    them too)."""
    found = {(stable_reason(cause), rows) for cause, rows in causes}
    unopened = {cause for cause, rows in found if not rows}
    ordered = sorted(unopened or {cause for cause, _ in found})
    lead = JOB_FAILED.removeprefix("; ") if JOB_FAILED in message else ""
    joints = len(_OTHERS) + 2 * max(len(ordered) - 2, 0) if len(ordered) > 1 else 0
    first, *others = _fitted(ordered, _LINE_LIMIT - len(lead) - joints)
    return lead + first + (f"{_OTHERS}{'; '.join(others)}" if others else "")


#: What Hive's operators throw (around the cause) when they fail on a row, and their frames
#: (a MapReduce task logs its row's values between the exception and its frames).
_IN_OPERATORS = re.compile(
    r"org\.apache\.hadoop\.hive\.ql\.(?:metadata\.HiveException|exec\.\w*Operator\.(?:process|forward)\()"
)
#: A Java exception's class name, as an error's message starts or ends with it.
_EXCEPTION = re.compile(r"(?:[a-z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error|Throwable)\b")
#: What Java 9+ adds to a ClassCastException's message: the modules and loaders of both classes.
_MODULES = re.compile(r" \([^()]* (?:is|are) in (?:unnamed )?module [^()]*\)")
#: `<fileId>_<writeToken>_<instant>.<format>`, `.<fileId>_<instant>.log.<version>_<token>`.
_BASE_FILE = re.compile(r"^([0-9A-Za-z-]+)_\d+-\d+-\d+_\d+\.\w+$")
_LOG_FILE = re.compile(r"^\.([0-9A-Za-z-]+)_\d+\.log\.")
#: What leads the causes after the first; how long a line of several causes may be (a reason,
#: `QueryError: <line>`, is cut at 400), and how short each cause may be cut to fit.
_OTHERS = "; in other file groups: "
_LINE_LIMIT = 388
_CAUSE_LIMIT = 80


def _innermost(message: str) -> str:
    """The innermost exception a message of chained exceptions (`A: B: C: text`) names."""
    starts = [
        m.start()
        for m in _EXCEPTION.finditer(message)
        if m.start() == 0 or message[m.start() - 2 : m.start()] == ": "
    ]
    return message[starts[-1] :] if starts else message


def _without_modules(cause: str) -> str:
    return _MODULES.sub("", cause).strip()


def _fitted(causes: list[str], budget: int) -> list[str]:
    """`causes`, the longest cut, so that together they take about `budget` characters (each
    keeps at least `_CAUSE_LIMIT`)."""
    shares: dict[str, int] = {}
    for done, cause in enumerate(sorted(causes, key=len)):
        shares[cause] = max(min(len(cause), budget // (len(causes) - done)), _CAUSE_LIMIT)
        budget -= shares[cause]
    return [_cut(cause, shares[cause]) for cause in causes]


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
