"""Presto's HTTP statement protocol, with Python's standard library only.

A statement is posted to `/v1/statement` with the user, catalog, schema and session properties
as `X-Presto-*` headers. Each answer is a JSON document with some of the result's columns and
rows and, while the query runs, a `nextUri` to fetch the next one; a failed query's last
document has an `error` (Presto's error name, message and `failureInfo`, the Java exception
with its causes).
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from lakecompat.engines.errors import QueryError

# An HTTP(S)_PROXY in the environment must not intercept the loopback coordinator.
_NO_PROXY = urllib.request.build_opener(urllib.request.ProxyHandler({}))
#: Presto answers 503 while it is busy; the client asks again after this long.
_BUSY_WAIT_S = 0.1
_BUSY_ATTEMPTS = 50


class PrestoQueryError(QueryError):
    """A statement Presto failed: `error_name` is Presto's (`GENERIC_INTERNAL_ERROR`, ...); the
    message is `failure_reason`'s."""

    def __init__(self, error_name: str, message: str, trace: str = "") -> None:
        super().__init__(message, trace)
        self.error_name = error_name


#: A file of a table that does not match the table's schema: which file Presto names depends
#: on which split failed first, so the reason's first line leaves it out.
_FILE_MISMATCH = re.compile(r"^(.* but the Parquet file) \((?:file:)?[^)]*\) (declares .*)$")


def failure_reason(error_name: str, message: str, info: dict[str, Any]) -> str:
    """A failed query's reason: `NAME: message`, with the root cause where the message does not
    say it (Presto answers `Internal error` for most connector failures), and with a first line
    that names no file where Presto's message names the one that failed first (its whole
    message then follows on the next line)."""
    text = f"{error_name}: {message}"
    mismatch = _FILE_MISMATCH.match(message)
    if mismatch:
        stable = f"{mismatch.group(1)} {mismatch.group(2)}".replace(
            "the Parquet file", "a Parquet file"
        )
        return f"{error_name}: {stable} (Presto's message names the first file that failed)\n{text}"
    root = info
    while root.get("cause"):
        root = root["cause"]
    if root is info and root.get("type", "").endswith(".PrestoException"):
        return text  # Presto's own error: its message is the whole story
    if root.get("message") and root["message"] in message:
        return text
    return f"{text}; caused by {_describe(root)}" if root else text


def _describe(root: dict[str, Any]) -> str:
    """An exception of a `failureInfo`: `Type: message`, or where it has no message, `Type (no
    message) at <frame>` (the first frame that is not a mere argument check)."""
    kind = root.get("type", "?")
    if root.get("message"):
        return f"{kind}: {root['message']}"
    frames = root.get("stack") or []
    thrower = next((f for f in frames if ".ValidationUtils." not in f), None)
    return f"{kind} (no message) at {thrower}" if thrower else kind


@dataclass
class Answer:
    """A finished statement: its columns (`name`, `type` as Presto spells it) and rows."""

    columns: list[dict[str, Any]] = field(default_factory=list)
    rows: list[list[Any]] = field(default_factory=list)


def session_header(settings: dict[str, str]) -> str:
    """`X-Presto-Session`'s value: `key=value` pairs, values URL-encoded, comma-separated."""
    pairs = (f"{key}={urllib.parse.quote(value, safe='')}" for key, value in settings.items())
    return ",".join(pairs)


def collect(answer: Answer, document: dict[str, Any]) -> str | None:
    """Add one answer document's columns and rows to `answer`; its `nextUri` (None: done).
    A failed query's document raises `PrestoQueryError`."""
    if document.get("columns") and not answer.columns:
        answer.columns = [
            {"name": column["name"], "type": column["type"]} for column in document["columns"]
        ]
    answer.rows.extend(document.get("data") or [])
    error = document.get("error")
    if error:
        name = error.get("errorName") or "UNKNOWN_ERROR"
        message = error.get("message") or ""
        info = error.get("failureInfo") or {}
        raise PrestoQueryError(name, failure_reason(name, message, info), failure_trace(info))
    return document.get("nextUri")


def failure_trace(info: dict[str, Any], caused: bool = False) -> str:
    """A `failureInfo` (the exception on the coordinator, with its causes) in Java's stack
    trace form, which the cells' evidence cuts to its cause chain."""
    if not info:
        return ""
    heading = f"{info.get('type', '?')}: {info.get('message') or ''}".rstrip(": ")
    lines = [("Caused by: " if caused else "") + heading]
    lines += [f"\tat {frame}" for frame in info.get("stack") or []]
    cause = failure_trace(info.get("cause") or {}, caused=True)
    return "\n".join([*lines, cause] if cause else lines)


@dataclass
class PrestoClient:
    """Runs statements on a Presto coordinator (lakecompat's own, on 127.0.0.1)."""

    url: str
    user: str = "lakecompat"
    #: Seconds one HTTP request may take; a coordinator that does not answer one in time is
    #: asked once more (`attempts`), then taken as hung.
    request_timeout_s: float = 10.0
    attempts: int = 2

    def headers(
        self, catalog: str | None, schema: str | None, session: dict[str, str]
    ) -> dict[str, str]:
        """The request headers of a statement."""
        headers = {
            "X-Presto-User": self.user,
            "X-Presto-Source": "lakecompat",
            "X-Presto-Time-Zone": "UTC",
            "Content-Type": "text/plain; charset=utf-8",
        }
        if catalog:
            headers["X-Presto-Catalog"] = catalog
        if catalog and schema:
            headers["X-Presto-Schema"] = schema
        if session:
            headers["X-Presto-Session"] = session_header(session)
        return headers

    def execute(
        self,
        sql: str,
        catalog: str | None = None,
        schema: str | None = None,
        session: dict[str, str] | None = None,
    ) -> Answer:
        """Run `sql` and return every row; `PrestoQueryError` when Presto fails it."""
        request = urllib.request.Request(
            f"{self.url}/v1/statement",
            data=sql.encode(),
            method="POST",
            headers=self.headers(catalog, schema, session or {}),
        )
        answer = Answer()
        next_uri = collect(answer, self._send(request))
        while next_uri:
            next_uri = collect(answer, self._send(urllib.request.Request(next_uri)))
        return answer

    def _send(self, request: urllib.request.Request) -> dict[str, Any]:
        """One request's JSON answer, asked again while Presto is busy (503). A poll (GET of
        `nextUri`, which Presto answers the same way twice) that gets no answer in time is
        asked once more; a statement is never posted twice."""
        busy = 0
        timeouts = 0
        while True:
            try:
                with _NO_PROXY.open(request, timeout=self.request_timeout_s) as response:
                    return json.loads(response.read())
            except urllib.error.HTTPError as exc:
                if exc.code != 503 or busy >= _BUSY_ATTEMPTS:
                    body = exc.read(2000).decode(errors="replace").strip()
                    raise QueryError(f"Presto answered HTTP {exc.code}: {body}") from None
                busy += 1
                time.sleep(_BUSY_WAIT_S)
            except (TimeoutError, urllib.error.URLError) as exc:
                reason = getattr(exc, "reason", exc)
                timeouts += 1
                if not isinstance(reason, TimeoutError) or request.data is not None:
                    raise
                if timeouts >= self.attempts:
                    raise
