"""The process a Python-library reader (hudi-rs, Daft) reads in, run by its own environment.

lakecompat starts this file with the library's Python (see `engines/python_env.py`), so the
library runs in a process of its own: a read that hangs is ended by killing the process, and
a crash takes only this process down. It serves on 127.0.0.1:

- `GET /ping`: 200 once the library is imported;
- `POST /read` with JSON `{"code": ..., "settings": {...}}`: runs the code (the read, exactly
  as shown in the cell's evidence) with `settings` defined, and answers the `answer` it leaves
  behind, a pyarrow Table, as an Arrow IPC stream (200); or, when the read raised, JSON
  `{"error": "ExceptionClass: first line", "trace": ...}` (422).

It needs only the standard library and pyarrow, never lakecompat itself.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import traceback
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pyarrow as pa


def run_read(code: str, settings: dict[str, str]) -> pa.Table:
    """Run a read's code and return the Arrow table it leaves in `answer`."""
    namespace: dict[str, Any] = {"settings": settings}
    exec(compile(code, "<read>", "exec"), namespace)
    answer = namespace.get("answer")
    if not isinstance(answer, pa.Table):
        raise TypeError(f"the read left {type(answer).__name__} in `answer`, not a pyarrow Table")
    return answer


def error_line(exc: BaseException) -> str:
    """`ExceptionClass: first line of the message`."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


class Handler(BaseHTTPRequestHandler):
    """Answers /ping and /read."""

    def do_GET(self) -> None:
        self._reply(200 if self.path == "/ping" else 404, b"ok", "text/plain")

    def do_POST(self) -> None:
        if self.path != "/read":
            self._reply(404, b"unknown path", "text/plain")
            return
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        try:
            table = run_read(request["code"], request.get("settings", {}))
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, table.schema) as writer:
                writer.write_table(table)
            body = sink.getvalue().to_pybytes()
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - a Rust panic (PanicException) included
            trace = traceback.format_exc()
            print(trace, flush=True)
            failure = {"error": error_line(exc), "trace": trace}
            self._reply(422, json.dumps(failure).encode(), "application/json")
            return
        self._reply(200, body, "application/vnd.apache.arrow.stream")

    def _reply(self, status: int, body: bytes, kind: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        print(format % args, flush=True)


def main() -> None:
    """Import the library, then serve reads until killed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--imports", default="", help="comma-separated modules to import first")
    parser.add_argument("--scratch", required=True, help="working folder for the library")
    args = parser.parse_args()
    os.chdir(args.scratch)
    for module in filter(None, args.imports.split(",")):
        importlib.import_module(module)
    server = HTTPServer(("127.0.0.1", args.port), Handler)
    print(f"serving reads on 127.0.0.1:{args.port}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
