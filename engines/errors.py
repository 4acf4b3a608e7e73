"""Errors of engines as cells show them: the exception class and first message line, the Java
exception behind a Py4J error, and the end of an engine log.
"""

from __future__ import annotations

from pathlib import Path


class QueryError(RuntimeError):
    """An engine refused or failed a statement; the message is the engine's own."""


def describe_error(exc: BaseException, limit: int = 400) -> str:
    """`ExceptionClass: first line of the message`, using the Java exception behind Py4J errors."""
    lines = _error_lines(exc)
    first = lines[0] if lines else type(exc).__name__
    return first if len(first) <= limit else first[: limit - 1] + "…"


def error_text(exc: BaseException, lines: int = 5, limit: int = 2000) -> str:
    """The first `lines` lines of an engine's error (the evidence; the reason is its first)."""
    kept = "\n".join(_error_lines(exc)[:lines]) or type(exc).__name__
    return kept if len(kept) <= limit else kept[: limit - 1] + "…"


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
