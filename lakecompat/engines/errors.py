"""Errors of engines as cells show them: the exception class and first message line (the
reason), the cause chain behind it with the frames that name where it was thrown, and the
part of an engine's log a failed query wrote (the evidence).
"""

from __future__ import annotations

import re
from pathlib import Path

from lakecompat.engines.reasons import stable_reason

#: Bounds of one cell's evidence: the full matrix has thousands of ERROR cells.
ERROR_LIMIT = 4000
LOG_LIMIT = 3000
_LINE_LIMIT = 400
_FRAME = re.compile(r"^\s*at \S")
_MORE = re.compile(r"^\s*\.\.\. \d+ (more|common frames omitted)")
_LOG_FAILURE = re.compile(r"\b(ERROR|FATAL|SEVERE)\b|Exception|Error:|panicked|^Traceback")


class QueryError(RuntimeError):
    """An engine refused or failed a statement; the message is the engine's own.

    `trace` is the engine's stack trace behind it (Java's `printStackTrace` form or a Python
    traceback), where the engine gave one. `log_end` is where the failed statement's part of
    the engine's log ends, when the engine ran more statements after it (to explain the
    failure); None: at the log's end.
    """

    def __init__(self, message: str, trace: str = "", log_end: int | None = None) -> None:
        super().__init__(message)
        self.trace = trace
        self.log_end = log_end


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """`ExceptionClass: first line of the message`, using the Java exception behind Py4J errors,
    the same text on every run (`engines.reasons`; taken out before the line is cut, so that
    it is cut in the same place)."""
    lines = _error_lines(exc)
    first = stable_reason(lines[0]) if lines else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 1] + "…"


def error_text(exc: BaseException, lines: int = 5, limit: int = ERROR_LIMIT) -> str:
    """An engine's error as evidence: the first `lines` lines of its message, then the cause
    chain of its stack trace (each cause with the first frames under it), at most `limit`
    characters."""
    message = message_lines(exc)[:lines] or [type(exc).__name__]
    chain = cause_chain(error_trace(exc))
    kept = "\n".join(_short(line) for line in message)
    if chain:
        kept += "\n" + chain
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


def error_trace(exc: BaseException) -> str:
    """The stack trace behind an engine's error, or "": a `QueryError`'s, a captured PySpark
    exception's JVM trace, or the one the JVM prints for a Py4J error."""
    trace = getattr(exc, "trace", None) or getattr(exc, "stackTrace", None)
    if isinstance(trace, str):
        return trace
    java = getattr(exc, "java_exception", None)
    if java is None or isinstance(java, str):
        return ""
    try:  # Py4J asks the JVM for the trace; a JVM that is gone cannot answer
        text = str(exc)
    except Exception:  # noqa: BLE001 - then there is no trace to show
        return ""
    # "An error occurred while calling o42.sql.\n: java.lang.X: ..." - the call is Py4J's.
    first, _, rest = text.partition("\n")
    return rest.removeprefix(": ") if first.startswith("An error occurred while calling") else text


def cause_chain(trace: str, frames: int = 3, limit: int = ERROR_LIMIT // 2) -> str:
    """A stack trace cut to what says where it failed: each exception of the chain (the top
    one, every `Caused by:`) with the first `frames` frames under it, plus its first Hudi
    frame where those miss it. Python tracebacks keep each exception's last frames."""
    if "Traceback (most recent call last)" in trace:
        return _python_chain(trace, frames, limit)
    blocks = [_java_block(block, frames) for block in _java_blocks(trace)]
    return _bounded(blocks, limit)


def _java_blocks(trace: str) -> list[list[str]]:
    """The lines of a Java trace, one list per exception (top, then each `Caused by:`)."""
    blocks: list[list[str]] = []
    for line in trace.splitlines():
        line = line.rstrip()
        if not line.strip() or _MORE.match(line):
            continue
        if not blocks or line.startswith(("Caused by: ", "Suppressed: ")):
            blocks.append([line])
        else:
            blocks[-1].append(line)
    return blocks


def _java_block(lines: list[str], frames: int) -> str:
    header, rest = lines[0], lines[1:]
    stack = [line.strip() for line in rest if _FRAME.match(line)]
    # A message of several lines continues under its first, before the first frame.
    notes = []
    for line in rest:
        if _FRAME.match(line):
            break
        notes.append(line.strip())
    kept = stack[:frames]
    hudi = next((f for f in stack[frames:] if f.startswith("at org.apache.hudi.")), None)
    if hudi and not any(f.startswith("at org.apache.hudi.") for f in kept):
        kept += ["...", hudi]
    return "\n".join([_short(header), *map(_short, notes[:2]), *(f"    {f}" for f in kept)])


def _python_chain(trace: str, frames: int, limit: int) -> str:
    """Each exception of a Python traceback (causes first, as Python prints them) with the
    last `frames` frames that led to it."""
    parts = re.split(r"\n(?=The above exception|During handling of the above)", trace)
    blocks = []
    for part in parts:
        lines = [line for line in part.splitlines() if line.strip()]
        joint = [line for line in lines[:1] if not line.startswith(("Traceback", "  "))]
        stack = [line.strip() for line in lines if line.startswith("  File ")]
        ending = [line for line in lines[1:] if not line.startswith((" ", "Traceback"))]
        text = [*joint, *(f"    {f}" for f in stack[-frames:]), *ending[:2]]
        blocks.append("\n".join(_short(line) for line in text))
    return _bounded(blocks, limit)


def _bounded(blocks: list[str], limit: int) -> str:
    """The blocks joined; when they exceed `limit`, the first and as many of the last (the
    root cause) as fit, saying how many were left out."""
    text = "\n".join(blocks)
    if len(text) <= limit or len(blocks) < 3:
        return text if len(text) <= limit else text[: limit - 1] + "…"
    kept_end: list[str] = []
    budget = limit - len(blocks[0]) - 40
    for block in reversed(blocks[1:]):
        if len(block) + 1 > budget:
            break
        kept_end.insert(0, block)
        budget -= len(block) + 1
    left_out = len(blocks) - 1 - len(kept_end)
    return "\n".join([blocks[0], f"... ({left_out} more causes left out)", *kept_end])


def logged_trace(lines: list[str]) -> str:
    """The first Java stack trace in log lines that has a `Caused by:` (else the first one):
    a server logs the failure's whole trace before the shorter one it answers with."""
    traces: list[list[str]] = []
    current: list[str] | None = None
    for number, line in enumerate(lines):
        following = lines[number + 1] if number + 1 < len(lines) else ""
        if current is not None and _in_trace(line):
            current.append(line)
        elif _FRAME.match(following):  # an exception's first line: its frames follow
            current = [line]
            traces.append(current)
        else:
            current = None
    chained = [t for t in traces if any(line.startswith("Caused by: ") for line in t)]
    return "\n".join((chained or traces or [[]])[0])


def _in_trace(line: str) -> bool:
    """Whether a log line belongs to a stack trace (a frame, `... N more`, `Caused by:`)."""
    return bool(_FRAME.match(line) or _MORE.match(line)) or line.startswith("Caused by: ")


def _short(line: str) -> str:
    return line if len(line) <= _LINE_LIMIT else line[: _LINE_LIMIT - 1] + "…"


def message_lines(exc: BaseException) -> list[str]:
    """The lines of an error's message, up to where a stack trace starts (the first is
    `describe_error`'s)."""
    lines = []
    for line in _error_lines(exc):
        if line == "JVM stacktrace:" or _FRAME.match(line) or line.startswith("Traceback"):
            break
        lines.append(line)
    return lines


def _error_lines(exc: BaseException) -> list[str]:
    java = getattr(exc, "java_exception", None)
    text = str(java) if java is not None else f"{type(exc).__name__}: {exc}"
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    if lines and lines[0].endswith(": None"):
        # A Java exception without a message: where Hudi threw it says more than "None".
        trace = str(getattr(exc, "stackTrace", "") or "").splitlines()
        lines += [line.strip() for line in trace if line.strip()]
        frame = next(
            (
                line[3:]
                for line in lines
                if line.startswith("at org.apache.hudi.") and ".ValidationUtils." not in line
            ),
            None,
        )
        if frame:
            lines[0] = f"{lines[0].removesuffix(': None')} (no message) at {frame}"
    return lines


def log_tail(path: Path, lines: int = 40) -> str:
    """The last `lines` lines of a log file, or "" when it does not exist (yet)."""
    if not path.is_file():
        return ""
    return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])


def log_size(path: Path | None) -> int:
    """How long a log is now (0 when it does not exist), to quote what a query adds to it."""
    return path.stat().st_size if path is not None and path.is_file() else 0


def log_since(
    path: Path | None,
    start: int,
    lines: int = 40,
    limit: int = LOG_LIMIT,
    end: int | None = None,
) -> str:
    """What a log got after `start` (up to `end`, where given), cut to the failure: from a few
    lines before its first error (an ERROR line, an exception, a panic) on, long runs of frames
    shortened; the last lines when it names no error; "" when nothing was written."""
    if path is None or not path.is_file():
        return ""
    # The start of a query's part is enough: its first error is what failed.
    size = 1 << 20 if end is None else min(max(end - start, 0), 1 << 20)
    with path.open("rb") as handle:
        handle.seek(start)
        written = handle.read(size).decode(errors="replace").splitlines()
    written = [line for line in written if line.strip()]
    first = next((n for n, line in enumerate(written) if _LOG_FAILURE.search(line)), None)
    window = written[-lines:] if first is None else written[max(first - 3, 0) :]
    kept = _fewer_frames(window)[:lines]
    text = "\n".join(_short(line) for line in kept)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _fewer_frames(lines: list[str], frames: int = 4) -> list[str]:
    """The lines with each run of stack frames cut to its first `frames`."""
    kept, run = [], 0
    for line in lines:
        if _FRAME.match(line) or _MORE.match(line):
            run += 1
            if run == frames + 1:
                kept.append("\t...")
            if run > frames:
                continue
        else:
            run = 0
        kept.append(line)
    return kept
